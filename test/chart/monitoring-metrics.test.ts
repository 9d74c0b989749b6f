import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_VERSION } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { KubeRest, corePath, installCrds, k8orPath, loadKubeAccess } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';
import { resolveConfig, startManager, type Manager } from '@k8or/operator';
import { tools } from '../support/tools.ts';
import { dashboardExpressions, NS, parsePromQL, renderedMonitoring, type Rule } from '../support/monitoring.ts';

// Every metric the chart's alerts and dashboard query is one a running operator serves on its
// metrics port, the one the chart's ServiceMonitor scrapes. The operator runs as the chart runs it
// (controllers, the webhook, leader election) against the embedded API server and the S3 fake, and
// does what makes its metrics appear: leads, reconciles a Bucket to Ready and one whose credentials
// are missing, answers the API server's admission reviews, calls the cloud through its rate limits.

/** Series Prometheus makes itself for every scrape target, not the operator. */
const MADE_BY_PROMETHEUS = new Set(['up']);
const credentials = { accessKeyId: 'AKIAMETRICSEXAMPLE00', secretAccessKey: 'metrics-test-secret-access-key' };

/** The metric names of a Prometheus text exposition that have samples (a counter never incremented has none). */
function sampledNames(exposition: string): Set<string> {
  return new Set(
    exposition
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0] ?? ''),
  );
}

describe('the alerts and the dashboard query only metrics the operator serves', () => {
  let home: string;
  let sandbox: Sandbox;
  let s3Fake: S3Fake;
  let manager: Manager | undefined;
  let rest: KubeRest;
  let rules: Rule[];
  let queried: Array<{ where: string; metric: string }>;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-monitoring-metrics-'));
    const monitoring = await renderedMonitoring(await tools(home, join(home, 'no-kubeconfig')));
    rules = monitoring.rules;
    queried = [
      ...rules.flatMap((r) => parsePromQL(r.expr).metrics.map((metric) => ({ where: `alert ${r.alert}`, metric }))),
      ...dashboardExpressions(monitoring.dashboard).flatMap(({ where, expr }) => parsePromQL(expr).metrics.map((metric) => ({ where, metric }))),
      // the dashboard's variables: label_values(METRIC, label)
      ...monitoring.dashboard.templating.list.flatMap((v) => {
        const metric = /label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(JSON.stringify(v.query ?? ''))?.[1];
        return metric ? [{ where: `variable $${v.name}`, metric }] : [];
      }),
    ];

    const kubeconfigPath = join(home, 'kubeconfig');
    sandbox = await startSandbox({ kubeconfigPath, logLevel: 'error' });
    const access = await loadKubeAccess(kubeconfigPath, {});
    await installCrds(access);
    rest = new KubeRest(access);
    s3Fake = await startS3Fake();
    await waitFor('the CRDs served', async () => (await rest.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    await rest.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await rest.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'media' } });
    await rest.create(corePath('secrets', NS), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials', namespace: NS }, stringData: credentials });
    for (const [name, secret] of [['default', 'aws-credentials'], ['no-creds', 'missing-secret']] as const) {
      await rest.create(k8orPath('ProviderConfig', undefined), {
        apiVersion: API_VERSION,
        kind: 'ProviderConfig',
        metadata: { name },
        spec: { provider: 'aws', region: 'us-east-1', endpoints: { bucket: s3Fake.endpoint }, credentials: { source: 'Secret', secretRef: { namespace: NS, name: secret } } },
      });
    }

    // as the chart's Deployment runs it: controllers and the webhook in one process, leader election on
    manager = await startManager(
      resolveConfig(
        {
          kubeconfig: kubeconfigPath,
          providers: 'aws',
          'cluster-id': 'metrics-test',
          'leader-elect': 'true',
          'leader-election-namespace': NS,
          'secrets-namespace': NS,
          'metrics-bind-address': '127.0.0.1:0',
          'health-probe-bind-address': '127.0.0.1:0',
          'webhook-bind-address': '127.0.0.1:0',
          'log-level': 'error',
        },
        {},
        ['controllers', 'webhook'],
      ),
    );
    await waitFor('the webhook ready and registered', async () => manager?.webhook?.isReady() === true && (await rest.get(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/k8or-validating-webhook`)) !== undefined, 120_000);
    await waitFor('leading', () => manager?.engines.every((e) => e.isLeader()) === true, 120_000);

    // through the API server, so its admission calls reach the webhook
    for (const [name, providerConfig] of [['photos', 'default'], ['locked', 'no-creds']] as const) {
      await rest.create(k8orPath('Bucket', 'media'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'media' }, spec: { providerConfigRef: { name: providerConfig } } });
    }
    await waitFor(
      'Bucket media/photos Ready',
      async () => {
        const bucket = await rest.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(k8orPath('Bucket', 'media', 'photos'));
        return bucket?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      },
      180_000,
    );
  });

  after(async () => {
    await manager?.stop();
    rest?.close();
    await s3Fake?.stop();
    await sandbox?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('every metric name of the rules and the dashboard has samples on the operator\'s metrics port', async () => {
    // the informers' watches end (as an API server ends them) and are replaced
    sandbox.dropWatches();
    assert.ok(queried.length > 30, `${queried.length} metric references`);
    const metricsUrl = manager!.metricsUrl;
    // reconcile errors (the Bucket without credentials) come with the engine's retries: scrape until they do
    const served = await waitFor(
      'every queried metric sampled',
      async () => {
        const names = sampledNames(await (await fetch(`${metricsUrl}/metrics`)).text());
        return queried.every((q) => MADE_BY_PROMETHEUS.has(q.metric) || names.has(q.metric)) ? names : undefined;
      },
      120_000,
      1_000,
    ).catch(async () => sampledNames(await (await fetch(`${metricsUrl}/metrics`)).text()));
    const missing = queried.filter((q) => !MADE_BY_PROMETHEUS.has(q.metric) && !served.has(q.metric)).map((q) => `${q.where}: ${q.metric}`);
    assert.deepEqual([...new Set(missing)], []);
  });

  it('counts the Buckets by Ready status, and how long the oldest not-Ready one has been so', async () => {
    const exposition = await (await fetch(`${manager!.metricsUrl}/metrics`)).text();
    const value = (series: string): number => Number(exposition.split('\n').find((line) => line.startsWith(`${series} `))?.split(' ')[1]);
    assert.equal(value('k8or_managed_resources{controller="bucket",ready="True"}'), 1, 'media/photos');
    assert.equal(value('k8or_managed_resources{controller="bucket",ready="False"}') + value('k8or_managed_resources{controller="bucket",ready="Unknown"}'), 1, 'media/locked, without credentials');
    assert.ok(value('k8or_managed_resource_not_ready_max_seconds{controller="bucket"}') > 0);
    assert.equal(value('k8or_managed_resource_not_ready_max_seconds{controller="table"}'), 0, 'no Table: none is not Ready');
  });

  it('and the test would see a metric that does not exist', () => {
    const names = sampledNames('# HELP x_total x\n# TYPE x_total counter\nworkqueue_depth{name="bucket"} 0\n');
    assert.ok(names.has('workqueue_depth'));
    assert.ok(!names.has('x_total'), 'a metric with no sample is not queryable');
    assert.deepEqual(parsePromQL('sum(rate(k8or_no_such_metric_total{job="k8or-metrics"}[5m]))').metrics, ['k8or_no_such_metric_total']);
  });
});
