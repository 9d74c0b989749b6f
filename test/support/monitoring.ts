// The chart's alerts and dashboard as Prometheus and Grafana read them, and Prometheus's own PromQL
// grammar (@prometheus-io/lezer-promql) to read their expressions.
import assert from 'node:assert/strict';
import { parser } from '@prometheus-io/lezer-promql';
import { parseAllDocuments } from 'yaml';
import { runOk } from './run.ts';
import { CHART_DIR, type Tools } from './tools.ts';

/** The release namespace the monitoring tests render the chart for. */
export const NS = 'k8or-system';

export interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}
export interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; query?: unknown }> };
}

/** The chart rendered with its alerts and dashboard on: the rules and the dashboard's JSON. */
export async function renderedMonitoring(t: Tools, extra: string[] = []): Promise<{ rules: Rule[]; dashboard: Dashboard; configMap: { metadata: { labels: Record<string, string> } } }> {
  const text = await runOk(t.helm, ['template', 'k8or', CHART_DIR, '--namespace', NS, '--set', 'metrics.serviceMonitor.enabled=true', '--set', 'prometheusRule.enabled=true', '--set', 'grafanaDashboard.enabled=true', ...extra]);
  const manifests = parseAllDocuments(text).map((d) => d.toJSON() as { kind: string; metadata: { name: string; labels: Record<string, string> }; spec?: { groups: Array<{ rules: Rule[] }> }; data?: Record<string, string> } | null);
  const rule = manifests.find((m) => m?.kind === 'PrometheusRule');
  const configMap = manifests.find((m) => m?.kind === 'ConfigMap' && m.metadata.name === 'k8or-dashboard');
  assert.ok(rule?.spec && configMap?.data?.['k8or.json'], 'a PrometheusRule and the dashboard ConfigMap');
  return { rules: rule.spec.groups.flatMap((g) => g.rules), dashboard: JSON.parse(configMap.data['k8or.json']!) as Dashboard, configMap };
}

/** Grafana's variables that stand where PromQL wants a duration, as Grafana fills them in. */
export function withGrafanaVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m').replaceAll('$__range', '1h');
}

/** Every PromQL expression of the dashboard: its panels' targets (Grafana's variables filled in). */
export function dashboardExpressions(dashboard: Dashboard): Array<{ where: string; expr: string }> {
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((target) => ({ where: `panel "${p.title}"`, expr: withGrafanaVariables(target.expr) })));
}

/** What lezer-promql finds wrong in an expression (its error nodes), and the metric names it selects. */
export function parsePromQL(expr: string): { errors: string[]; metrics: string[] } {
  const errors: string[] = [];
  const metrics: string[] = [];
  parser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(`at ${node.from}: "${expr.slice(Math.max(0, node.from - 20), node.to + 20)}"`);
      if (node.name === 'VectorSelector') {
        const name = node.node.getChild('Identifier');
        if (name) metrics.push(expr.slice(name.from, name.to));
      }
    },
  });
  return { errors, metrics };
}

