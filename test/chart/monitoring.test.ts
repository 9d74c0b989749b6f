import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { dashboardExpressions, NS, parsePromQL, renderedMonitoring, type Dashboard, type Rule } from '../support/monitoring.ts';
import { runOk } from '../support/run.ts';
import { CHART_DIR, tools, type Tools } from '../support/tools.ts';

// The chart's alerts (a PrometheusRule) and Grafana dashboard (a ConfigMap for Grafana's sidecar),
// judged by Prometheus's own tools: every expression parses with Prometheus's PromQL grammar
// (@prometheus-io/lezer-promql); where promtool is installed (Debian's `prometheus` package),
// `promtool check rules` and `promtool test rules` with a unit test of each alert; and every metric
// they query is one a running operator serves (monitoring-metrics.test.ts).

const execFileAsync = promisify(execFile);
/** The series the rules select by default: as the chart's ServiceMonitor scrapes them. */
const SERIES = `job="k8or-metrics", namespace="${NS}"`;

/** promtool on PATH, or why not. */
async function promtool(): Promise<string | undefined> {
  try {
    await execFileAsync('promtool', ['--version']);
    return undefined;
  } catch {
    return 'promtool is not installed (Debian: apt-get install prometheus); its checks are skipped';
  }
}

/** A series of a unit test: the default selector's labels plus these. */
const series = (metric: string, labels: Record<string, string>, values: string): { series: string; values: string } => ({
  series: `${metric}{${SERIES}${Object.entries(labels).map(([k, v]) => `, ${k}="${v}"`).join('')}}`,
  values,
});
const ALERT_LABELS = { namespace: NS };

/**
 * One `promtool test rules` case per alert: series that make it fire (checked at a time past its
 * `for`), and the labels it fires with. The thresholds are the chart's defaults.
 */
const UNIT_TESTS: Array<{ alert: string; input: Array<{ series: string; values: string }>; evalTime: string; labels: Record<string, string> }> = [
  {
    alert: 'K8orResourceNotReady',
    // a Bucket not Ready for 600 s, then 960 s, ... (the gauge grows with time); over 900 s from minute 5
    input: [series('k8or_managed_resource_not_ready_max_seconds', { controller: 'bucket', pod: 'k8or-0' }, '600+60x30')],
    evalTime: '15m',
    labels: { ...ALERT_LABELS, controller: 'bucket', severity: 'warning' },
  },
  {
    alert: 'K8orDriftHeld',
    // a Table whose held drift has waited 3,000 s, then longer; over an hour from minute 10
    input: [series('k8or_managed_resource_drift_held_max_seconds', { controller: 'table', pod: 'k8or-0' }, '3000+60x30')],
    evalTime: '15m',
    labels: { ...ALERT_LABELS, controller: 'table', severity: 'warning' },
  },
  {
    alert: 'K8orReconcileErrors',
    input: [
      series('controller_runtime_reconcile_total', { controller: 'table', result: 'success', pod: 'k8or-0' }, '0+60x40'),
      series('controller_runtime_reconcile_total', { controller: 'table', result: 'error', pod: 'k8or-0' }, '0+30x40'),
      series('controller_runtime_reconcile_errors_total', { controller: 'table', pod: 'k8or-0' }, '0+30x40'),
    ],
    evalTime: '30m',
    labels: { ...ALERT_LABELS, controller: 'table', severity: 'warning' },
  },
  {
    alert: 'K8orCloudCallErrors',
    input: [
      series('k8or_cloud_calls_total', { provider: 'gcp', operation: 'GetBucketMetadata', result: 'success', pod: 'k8or-0' }, '0+10x40'),
      series('k8or_cloud_calls_total', { provider: 'gcp', operation: 'GetBucketMetadata', result: 'error', pod: 'k8or-0' }, '0+10x40'),
    ],
    evalTime: '30m',
    labels: { ...ALERT_LABELS, provider: 'gcp', operation: 'GetBucketMetadata', severity: 'warning' },
  },
  {
    alert: 'K8orCloudThrottled',
    // two attempts per call: one retry each
    input: [
      series('k8or_cloud_calls_total', { provider: 'aws', operation: 'create', result: 'success', pod: 'k8or-0' }, '0+10x40'),
      series('k8or_cloud_rate_limit_calls_total', { provider: 'aws', provider_config: 'default', service: 's3-control-plane', pod: 'k8or-0' }, '0+20x40'),
    ],
    evalTime: '30m',
    labels: { ...ALERT_LABELS, provider: 'aws', severity: 'warning' },
  },
  {
    alert: 'K8orCloudRateLimitSaturated',
    input: [
      series('k8or_cloud_rate_limit_calls_total', { provider: 'aws', provider_config: 'default', service: 'dynamodb-control-plane', pod: 'k8or-0' }, '0+10x40'),
      series('k8or_cloud_rate_limit_delayed_total', { provider: 'aws', provider_config: 'default', service: 'dynamodb-control-plane', pod: 'k8or-0' }, '0+8x40'),
    ],
    evalTime: '30m',
    labels: { ...ALERT_LABELS, provider: 'aws', provider_config: 'default', service: 'dynamodb-control-plane', severity: 'warning' },
  },
  {
    alert: 'K8orCloudRateLimitAborted',
    input: [series('k8or_cloud_rate_limit_aborted_total', { provider: 'azure', provider_config: 'prod', service: 'table-control-plane', pod: 'k8or-0' }, '0+1x40')],
    evalTime: '20m',
    labels: { ...ALERT_LABELS, provider: 'azure', provider_config: 'prod', service: 'table-control-plane', severity: 'warning' },
  },
  {
    alert: 'K8orWebhookErrors',
    input: [
      series('k8or_admission_reviews_total', { webhook: 'validate', kind: 'Bucket', operation: 'CREATE', result: 'allowed', pod: 'k8or-0' }, '0+10x40'),
      series('k8or_admission_reviews_total', { webhook: 'validate', kind: '', operation: '', result: 'error', pod: 'k8or-0' }, '0+2x40'),
    ],
    evalTime: '30m',
    labels: { ...ALERT_LABELS, severity: 'critical' },
  },
  {
    alert: 'K8orWebhookSlow',
    // every review in the 2.5 s bucket: p99 above half the 5 s timeout
    input: [
      series('k8or_admission_review_duration_seconds_bucket', { webhook: 'validate', kind: 'Bucket', operation: 'CREATE', le: '1', pod: 'k8or-0' }, '0+0x40'),
      series('k8or_admission_review_duration_seconds_bucket', { webhook: 'validate', kind: 'Bucket', operation: 'CREATE', le: '2.5', pod: 'k8or-0' }, '0+0x40'),
      series('k8or_admission_review_duration_seconds_bucket', { webhook: 'validate', kind: 'Bucket', operation: 'CREATE', le: '5', pod: 'k8or-0' }, '0+10x40'),
      series('k8or_admission_review_duration_seconds_bucket', { webhook: 'validate', kind: 'Bucket', operation: 'CREATE', le: '+Inf', pod: 'k8or-0' }, '0+10x40'),
    ],
    evalTime: '30m',
    labels: { ...ALERT_LABELS, severity: 'warning' },
  },
  {
    alert: 'K8orDown',
    input: [series('up', { pod: 'k8or-0' }, '0x40'), series('up', { pod: 'k8or-1' }, '0x40')],
    evalTime: '20m',
    labels: { ...ALERT_LABELS, severity: 'critical' },
  },
  {
    alert: 'K8orNoLeader',
    input: [series('leader_election_master_status', { name: 'k8or-operator', pod: 'k8or-0' }, '0x40'), series('leader_election_master_status', { name: 'k8or-operator', pod: 'k8or-1' }, '0x40')],
    evalTime: '20m',
    labels: { ...ALERT_LABELS, name: 'k8or-operator', severity: 'critical' },
  },
  {
    alert: 'K8orLeaderChanges',
    // the Lease changes hands every 10 minutes
    input: [
      series('leader_election_master_status', { name: 'k8or-operator', pod: 'k8or-0' }, '1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 1'),
      series('leader_election_master_status', { name: 'k8or-operator', pod: 'k8or-1' }, '0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 0'),
    ],
    evalTime: '60m',
    labels: { ...ALERT_LABELS, name: 'k8or-operator', severity: 'warning' },
  },
];

describe('the chart\'s alerts and dashboard', () => {
  let home: string;
  let t: Tools;
  let rules: Rule[];
  let dashboard: Dashboard;
  let configMapLabels: Record<string, string>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-monitoring-'));
    t = await tools(home, join(home, 'no-kubeconfig'));
    ({ rules, dashboard, configMap: { metadata: { labels: configMapLabels } } } = await renderedMonitoring(t));
  });

  after(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('are off by default, and the dashboard is a ConfigMap Grafana\'s sidecar loads (grafana_dashboard: "1")', async () => {
    const defaults = await runOk(t.helm, ['template', 'k8or', CHART_DIR, '--namespace', NS]);
    assert.doesNotMatch(defaults, /kind: PrometheusRule/);
    assert.doesNotMatch(defaults, /k8or-dashboard/);
    assert.equal(configMapLabels['grafana_dashboard'], '1');
  });

  it('has an alert for each failure an operator of k8or must hear of, each with a severity and a runbook section', () => {
    assert.deepEqual(rules.map((r) => r.alert), UNIT_TESTS.map((u) => u.alert));
    for (const rule of rules) {
      assert.match(rule.labels['severity'] ?? '', /^(warning|critical)$/, rule.alert);
      assert.equal(rule.annotations['runbook_url'], `https://github.com/k8or/k8or/blob/main/docs/operations.md#${rule.alert.toLowerCase()}`);
      assert.ok(rule.annotations['summary'] && rule.annotations['description'], rule.alert);
    }
  });

  it('every expression of the rules and the dashboard parses with Prometheus\'s PromQL grammar', () => {
    const expressions = [...rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })), ...dashboardExpressions(dashboard)];
    assert.ok(expressions.length > 25, `${expressions.length} expressions`);
    const wrong = expressions.flatMap(({ where, expr }) => parsePromQL(expr).errors.map((e) => `${where}: ${e}`));
    assert.deepEqual(wrong, []);
    // the grammar is no pushover: a broken expression has error nodes
    assert.notDeepEqual(parsePromQL('sum by (le (rate(x[5m]))').errors, []);
    assert.notDeepEqual(parsePromQL('rate(x[$__rate_interval])').errors, [], 'Grafana variables must be filled in first');
  });

  it('promtool check rules and promtool test rules: each alert fires on the series that mean it', async (context) => {
    const missing = await promtool();
    if (missing) return context.skip(missing);
    const rulesFile = join(home, 'rules.yaml');
    await writeFile(rulesFile, stringify({ groups: [{ name: 'k8or', rules }] }));
    const check = await execFileAsync('promtool', ['check', 'rules', rulesFile]);
    assert.match(check.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));

    // The unit tests judge when each alert fires and with which labels; promtool would compare the
    // annotations too (check rules has parsed their templates above).
    const bareRulesFile = join(home, 'bare-rules.yaml');
    await writeFile(bareRulesFile, stringify({ groups: [{ name: 'k8or', rules: rules.map(({ annotations: _annotations, ...rule }) => rule) }] }));
    const testsFile = join(home, 'tests.yaml');
    await writeFile(
      testsFile,
      stringify({
        rule_files: [bareRulesFile],
        evaluation_interval: '1m',
        tests: UNIT_TESTS.map((u) => ({
          interval: '1m',
          // a replica scraped up, but in the K8orDown case
          input_series: u.alert === 'K8orDown' ? u.input : [series('up', { pod: 'k8or-0' }, '1x70'), ...u.input],
          alert_rule_test: [
            // every alert in each case: the one it means fires, and no other
            ...rules.map((r) => ({
              eval_time: u.evalTime,
              alertname: r.alert,
              exp_alerts: r.alert === u.alert ? [{ exp_labels: u.labels }] : [],
            })),
            // nothing fires before its `for` has passed
            { eval_time: '1m', alertname: u.alert, exp_alerts: [] },
          ],
        })),
      }),
    );
    try {
      await execFileAsync('promtool', ['test', 'rules', testsFile]);
    } catch (error) {
      const { stdout, stderr } = error as { stdout: string; stderr: string };
      assert.fail(`promtool test rules failed:\n${stdout}\n${stderr}`);
    }
  });
});
