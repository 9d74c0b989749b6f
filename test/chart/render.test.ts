import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { openCluster, type E2ECluster } from '../support/cluster.ts';
import { run, runOk } from '../support/run.ts';
import { CHART_DIR, PROVIDERS, tools, type Tools } from '../support/tools.ts';

// The chart as a platform team meets it: `helm lint` clean, and `helm template` with the default
// values, with each provider enabled and with cert-manager, rendering what a cluster accepts (every
// object goes through the embedded API server's validation with a server-side dry run).

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> } } & Record<string, unknown>;

const NS = 'k8or-system';

function parse(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

const byKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
const one = (manifests: Manifest[], kind: string): Manifest => {
  const found = byKind(manifests, kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0]!;
};
const named = (manifests: Manifest[], kind: string, name: string): Manifest => {
  const found = byKind(manifests, kind).find((m) => m.metadata.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found;
};

const VALUE_SETS: Record<string, string[]> = {
  'default values': [],
  'aws enabled (credentials from a Secret)': ['--set', 'providers.aws.enabled=true', '--set', 'providers.aws.credentials.source=secret', '--set', 'providers.aws.credentials.secretName=aws-creds'],
  'gcp enabled (Workload Identity)': ['--set', 'providers.gcp.enabled=true', '--set', 'providers.gcp.credentials.source=workloadIdentity', '--set', 'providers.gcp.credentials.serviceAccount=k8or@proj.iam.gserviceaccount.com'],
  'azure enabled (Workload Identity)': ['--set', 'providers.azure.enabled=true', '--set', 'providers.azure.credentials.source=workloadIdentity', '--set', 'providers.azure.credentials.clientId=00000000-0000-0000-0000-000000000000'],
  'sharding on (3 replicas)': ['--set', 'sharding.enabled=true', '--set', 'replicaCount=3'],
  'sharding on, cert-manager, one webhook replica': ['--set', 'sharding.enabled=true', '--set', 'webhook.certManager.enabled=true', '--set', 'sharding.webhook.replicaCount=1'],
  'all providers, cert-manager and a ServiceMonitor': [
    ...PROVIDERS.flatMap((p) => ['--set', `providers.${p}.enabled=true`]),
    '--set', 'webhook.certManager.enabled=true',
    '--set', 'metrics.serviceMonitor.enabled=true',
    // the alerts (a PrometheusRule, the Prometheus Operator's kind) and the dashboard's ConfigMap
    '--set', 'prometheusRule.enabled=true',
    '--set', 'grafanaDashboard.enabled=true',
  ],
};

describe('the Helm chart renders', () => {
  let home: string;
  let cluster: E2ECluster;
  let t: Tools;
  const rendered = new Map<string, Manifest[]>();

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-chart-'));
    cluster = await openCluster(home);
    t = await tools(home, cluster.kubeconfigPath);
    for (const [name, args] of Object.entries(VALUE_SETS)) {
      rendered.set(name, parse(await runOk(t.helm, ['template', 'k8or', CHART_DIR, '--namespace', NS, '--include-crds', ...args])));
    }
    // (an external cluster may have it from an earlier run; the dry runs need it to exist)
    await run(t.kubectl, ['create', 'namespace', NS]);
  });

  after(async () => {
    if (cluster?.external && t) await run(t.kubectl, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=false']);
    await cluster?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('passes helm lint --strict with the default values and with every provider enabled', async () => {
    for (const args of [[], PROVIDERS.flatMap((p) => ['--set', `providers.${p}.enabled=true`])]) {
      const out = await runOk(t.helm, ['lint', '--strict', CHART_DIR, ...args]);
      assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      assert.doesNotMatch(out, /\[(WARNING|ERROR)\]/);
    }
  });

  it('refuses values that break values.schema.json, naming the value', async () => {
    const badPolicy = await run(t.helm, ['template', 'k8or', CHART_DIR, '--set', 'operator.defaultDeletionPolicy=Orphan']);
    assert.notEqual(badPolicy.code, 0);
    assert.match(badPolicy.stderr, /operator\.defaultDeletionPolicy|defaultDeletionPolicy/);
    const missingSecret = await run(t.helm, ['template', 'k8or', CHART_DIR, '--set', 'providers.aws.enabled=true', '--set', 'providers.aws.credentials.source=secret']);
    assert.notEqual(missingSecret.code, 0);
    assert.match(missingSecret.stderr, /providers\.aws\.credentials\.secretName is required when source is secret/);
  });

  for (const name of Object.keys(VALUE_SETS)) {
    it(`with ${name}: objects the API server accepts (server-side dry run)`, async () => {
      const manifests = rendered.get(name)!;
      // cert-manager's and the Prometheus Operator's kinds need their CRDs, which a cluster with them has
      const served = manifests.filter((m) => !['cert-manager.io/v1', 'monitoring.coreos.com/v1'].includes(m.apiVersion));
      const crds = byKind(served, 'CustomResourceDefinition');
      assert.equal(crds.length, 3, 'the CRDs from packages/api');
      const text = served.map((m) => JSON.stringify(m)).join('\n');
      // server-side apply: the same checks whether the objects exist yet or not (a cluster keeps the CRDs of an earlier install)
      const out = await runOk(t.kubectl, ['apply', '--server-side', '--force-conflicts', '--field-manager=k8or-chart-test', '--dry-run=server', '-f', '-', '-o', 'name'], text);
      assert.equal(out.trim().split('\n').length, served.length);
    });
  }

  it('runs two non-root, read-only replicas with leader election, probes, resources and seccomp RuntimeDefault', () => {
    const deployment = one(rendered.get('default values')!, 'Deployment') as Manifest & { spec: { replicas: number; template: { spec: Record<string, unknown> } } };
    assert.equal(deployment.spec.replicas, 2);
    const pod = deployment.spec.template.spec as { securityContext: Record<string, unknown>; containers: Array<Record<string, unknown>> };
    assert.equal(pod.securityContext['runAsNonRoot'], true);
    assert.deepEqual(pod.securityContext['seccompProfile'], { type: 'RuntimeDefault' });
    const container = pod.containers[0]!;
    assert.deepEqual(container['securityContext'], { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    assert.ok(container['livenessProbe'] && container['readinessProbe'], 'probes');
    assert.ok((container['resources'] as Record<string, unknown>)['requests'], 'resources');
    const env = Object.fromEntries((container['env'] as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    assert.equal(env['K8OR_LEADER_ELECT'], 'true');
    assert.equal(env['K8OR_LEADER_ELECTION_NAMESPACE'], NS);
    assert.equal(env['K8OR_PROVIDERS'], '');
    // the Service the webhook configurations call, for the names of a self-signed certificate
    const validating = one(rendered.get('default values')!, 'ValidatingWebhookConfiguration') as Manifest & { webhooks: Array<{ clientConfig: { service: { name: string } } }> };
    assert.equal(env['K8OR_WEBHOOK_SERVICE_NAME'], validating.webhooks[0]!.clientConfig.service.name);
    assert.equal(env['K8OR_WEBHOOK_SERVICE_NAMESPACE'], NS);
    assert.equal(one(rendered.get('default values')!, 'PodDisruptionBudget')['spec'] !== undefined, true);
  });

  it('fails closed with no side effects and a 5 s timeout, and keeps out of kube-system and its own namespace', () => {
    for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
      const config = one(rendered.get('default values')!, kind) as Manifest & { webhooks: Array<Record<string, unknown>> };
      for (const webhook of config.webhooks) {
        assert.equal(webhook['failurePolicy'], 'Fail');
        assert.equal(webhook['sideEffects'], 'None');
        assert.equal(webhook['timeoutSeconds'], 5);
        assert.deepEqual(webhook['namespaceSelector'], { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', NS] }] });
      }
      assert.equal(config.metadata.annotations, undefined, 'no cert-manager injection by default: the operator writes caBundle');
      const withCertManager = one(rendered.get('all providers, cert-manager and a ServiceMonitor')!, kind);
      assert.equal(withCertManager.metadata.annotations?.['cert-manager.io/inject-ca-from'], `${NS}/k8or-webhook`);
    }
  });

  it('loads the enabled providers and wires their credentials', () => {
    const env = (set: string): Record<string, unknown> => {
      const deployment = one(rendered.get(set)!, 'Deployment') as Manifest & { spec: { template: { spec: { containers: Array<Record<string, unknown>> } } } };
      return deployment.spec.template.spec.containers[0]!;
    };
    const aws = env('aws enabled (credentials from a Secret)');
    assert.ok((aws['env'] as Array<{ name: string; value: string }>).some((e) => e.name === 'K8OR_PROVIDERS' && e.value === 'aws'));
    assert.deepEqual(aws['envFrom'], [{ secretRef: { name: 'aws-creds' } }]);
    const gcpAccount = one(rendered.get('gcp enabled (Workload Identity)')!, 'ServiceAccount');
    assert.equal(gcpAccount.metadata.annotations?.['iam.gke.io/gcp-service-account'], 'k8or@proj.iam.gserviceaccount.com');
    const all = env('all providers, cert-manager and a ServiceMonitor');
    assert.ok((all['env'] as Array<{ name: string; value: string }>).some((e) => e.name === 'K8OR_PROVIDERS' && e.value === 'aws,gcp,azure'));
    assert.equal(byKind(rendered.get('all providers, cert-manager and a ServiceMonitor')!, 'Certificate').length, 1);
    assert.equal(byKind(rendered.get('all providers, cert-manager and a ServiceMonitor')!, 'ServiceMonitor').length, 1);
    // with cert-manager the operator needs no access to the webhook configurations
    const clusterRole = byKind(rendered.get('all providers, cert-manager and a ServiceMonitor')!, 'ClusterRole').find((r) => r.metadata.name === 'k8or')!;
    assert.ok(!JSON.stringify(clusterRole).includes('webhookconfigurations'));
    const role = byKind(rendered.get('all providers, cert-manager and a ServiceMonitor')!, 'Role')[0]!;
    assert.ok(!JSON.stringify(role).includes('k8or-webhook-cert'), 'nor to the self-signed certificate Secret');
  });

  it('without cert-manager, shares one self-signed certificate among the replicas through one Secret, granted by name', () => {
    const manifests = rendered.get('default values')!;
    const deployment = one(manifests, 'Deployment') as Manifest & { spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value: string }> }> } } } };
    const env = Object.fromEntries(deployment.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    assert.equal(env['K8OR_WEBHOOK_CERT_SECRET'], 'k8or-webhook-cert');
    assert.equal(env['K8OR_WEBHOOK_CERT_CHECK_INTERVAL'], '1m');
    const role = one(manifests, 'Role') as Manifest & { rules: Array<{ resources: string[]; resourceNames?: string[]; verbs: string[] }> };
    const secretRules = role.rules.filter((r) => r.resources.includes('secrets')).map((r) => ({ names: r.resourceNames ?? [], verbs: r.verbs }));
    assert.deepEqual(secretRules, [
      { names: [], verbs: ['list', 'watch'] },
      { names: [], verbs: ['create'] },
      { names: ['k8or-webhook-cert'], verbs: ['get', 'update'] },
    ]);
  });

  it('sharded: each Pod is the shard named after it, may hold any Lease of its namespace, and one shard goes at a time', () => {
    type Container = { env: Array<{ name: string; value?: string; valueFrom?: unknown }> };
    type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };
    const leaseRules = (manifests: Manifest[]): Array<{ names: string[]; verbs: string[] }> =>
      (named(manifests, 'Role', 'k8or') as Manifest & { rules: Rule[] }).rules
        .filter((r) => r.apiGroups.includes('coordination.k8s.io'))
        .map((r) => ({ names: r.resourceNames ?? [], verbs: r.verbs }));
    const container = (manifests: Manifest[]): Container => (named(manifests, 'Deployment', 'k8or') as Manifest & { spec: { replicas: number; template: { spec: { containers: Container[] } } } }).spec.template.spec.containers[0]!;

    const sharded = rendered.get('sharding on (3 replicas)')!;
    assert.equal((named(sharded, 'Deployment', 'k8or') as Manifest & { spec: { replicas: number } }).spec.replicas, 3);
    const env = container(sharded).env;
    assert.deepEqual(env.find((e) => e.name === 'K8OR_SHARD_NAME'), { name: 'K8OR_SHARD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    assert.equal(env.find((e) => e.name === 'K8OR_LEADER_ELECT')?.value, 'true');
    assert.equal(env.find((e) => e.name === 'K8OR_SHARD_TAKEOVER')?.value, 'relabel');
    // shard Leases are named after the Pods: granted in the release namespace, not by name
    assert.deepEqual(leaseRules(sharded), [{ names: [], verbs: ['get', 'list', 'create', 'update'] }]);
    // the assigner's and the shards' label patches are the engine's own grant on the kinds
    const clusterRole = byKind(sharded, 'ClusterRole').find((r) => r.metadata.name === 'k8or') as Manifest & { rules: Rule[] };
    assert.ok(clusterRole.rules.some((r) => r.resources.includes('buckets') && r.resources.includes('tables') && r.verbs.includes('patch') && r.verbs.includes('list')));
    assert.deepEqual((named(sharded, 'PodDisruptionBudget', 'k8or') as Manifest & { spec: Record<string, unknown> }).spec['maxUnavailable'], 1);
    assert.equal((named(sharded, 'PodDisruptionBudget', 'k8or') as Manifest & { spec: Record<string, unknown> }).spec['minAvailable'], undefined);

    // off (the default): no shard name, the leader election Lease granted by name only
    const plain = rendered.get('default values')!;
    assert.equal(container(plain).env.find((e) => e.name === 'K8OR_SHARD_NAME'), undefined);
    assert.equal(container(plain).env.find((e) => e.name === 'K8OR_SHARD_TAKEOVER'), undefined);
    assert.deepEqual(leaseRules(plain), [{ names: [], verbs: ['create'] }, { names: ['k8or-operator'], verbs: ['get', 'update'] }]);
    assert.equal((one(plain, 'PodDisruptionBudget') as Manifest & { spec: Record<string, unknown> }).spec['minAvailable'], 1);
  });

  it('sharded: the webhook runs in a Deployment of its own, behind the webhook Service, under its own ServiceAccount, with its own budget', () => {
    type Labels = Record<string, string>;
    type Container = { args: string[]; env: Array<{ name: string; value?: string }>; envFrom?: unknown; ports: Array<{ name: string }>; resources: unknown; volumeMounts: Array<{ name: string }> };
    type Deployment = Manifest & { spec: { replicas: number; selector: { matchLabels: Labels }; template: { metadata: { labels: Labels }; spec: { serviceAccountName: string; containers: Container[] } } } };
    type Selecting = Manifest & { spec: { selector: Labels | { matchLabels: Labels }; minAvailable?: number; maxUnavailable?: number } };
    const selects = (selector: Labels, pod: Labels): boolean => Object.entries(selector).every(([key, value]) => pod[key] === value);
    const selectorOf = (m: Selecting): Labels => ('matchLabels' in m.spec.selector ? (m.spec.selector.matchLabels as Labels) : m.spec.selector);

    const sharded = rendered.get('sharding on (3 replicas)')!;
    assert.deepEqual(byKind(sharded, 'Deployment').map((d) => d.metadata.name), ['k8or', 'k8or-webhook']);
    const operator = named(sharded, 'Deployment', 'k8or') as Deployment;
    const webhook = named(sharded, 'Deployment', 'k8or-webhook') as Deployment;
    const operatorPod = operator.spec.template.metadata.labels;
    const webhookPod = webhook.spec.template.metadata.labels;

    // the shards: controllers only, no webhook port, env or certificate
    const shard = operator.spec.template.spec.containers[0]!;
    assert.deepEqual(shard.args, ['operator']);
    assert.deepEqual(shard.ports.map((p) => p.name), ['metrics', 'probes']);
    assert.deepEqual(shard.env.filter((e) => e.name.startsWith('K8OR_WEBHOOK_')), []);
    // the webhook: 2 replicas of `k8or webhook`, as the chart's webhook env has it, without cloud credentials
    assert.equal(webhook.spec.replicas, 2);
    const server = webhook.spec.template.spec.containers[0]!;
    assert.deepEqual(server.args, ['webhook']);
    assert.deepEqual(server.ports.map((p) => p.name), ['webhook', 'metrics', 'probes']);
    const env = Object.fromEntries(server.env.map((e) => [e.name, e.value]));
    assert.equal(env['K8OR_WEBHOOK_SERVICE_NAME'], 'k8or-webhook');
    assert.equal(env['K8OR_WEBHOOK_SERVICE_NAMESPACE'], NS);
    assert.equal(env['K8OR_WEBHOOK_CERT_SECRET'], 'k8or-webhook-cert');
    assert.equal(env['K8OR_SECRETS_NAMESPACE'], NS);
    assert.equal(env['K8OR_DEFAULT_DELETION_POLICY'], 'Delete');
    assert.equal(server.envFrom, undefined);
    assert.deepEqual(server.resources, shard.resources, 'resources default to the operator\'s');

    // selectors: the webhook Service and its budget pick the webhook Pods only; the operator's
    // Deployment (its selector as unsharded) and budget never pick them; the metrics Service both
    const service = named(sharded, 'Service', 'k8or-webhook') as Selecting;
    assert.ok(selects(selectorOf(service), webhookPod) && !selects(selectorOf(service), operatorPod), 'the webhook Service selects the webhook Pods only');
    assert.deepEqual(operator.spec.selector.matchLabels, (one(rendered.get('default values')!, 'Deployment') as Deployment).spec.selector.matchLabels, 'the operator Deployment keeps its selector');
    assert.ok(selects(operator.spec.selector.matchLabels, operatorPod) && !selects(operator.spec.selector.matchLabels, webhookPod));
    assert.ok(selects(webhook.spec.selector.matchLabels, webhookPod) && !selects(webhook.spec.selector.matchLabels, operatorPod));
    const metrics = named(sharded, 'Service', 'k8or-metrics') as Selecting;
    assert.ok(selects(selectorOf(metrics), operatorPod) && selects(selectorOf(metrics), webhookPod), 'the metrics Service selects both');
    const operatorBudget = named(sharded, 'PodDisruptionBudget', 'k8or') as Selecting;
    const webhookBudget = named(sharded, 'PodDisruptionBudget', 'k8or-webhook') as Selecting;
    assert.ok(!selects(selectorOf(operatorBudget), webhookPod), 'no Pod under two budgets (eviction refuses it)');
    assert.ok(selects(selectorOf(webhookBudget), webhookPod) && !selects(selectorOf(webhookBudget), operatorPod));
    assert.equal(webhookBudget.spec.minAvailable, 1);

    // its own ServiceAccount: what admission reads and its certificate, nothing of the engine's
    assert.equal(webhook.spec.template.spec.serviceAccountName, 'k8or-webhook');
    type Rule = { resources: string[]; resourceNames?: string[]; verbs: string[] };
    const rules = (kind: string, name: string): string[] => (named(sharded, kind, name) as Manifest & { rules: Rule[] }).rules.flatMap((r) => r.resources.flatMap((res) => r.verbs.map((v) => `${v} ${res}${r.resourceNames ? `/${r.resourceNames.join(',')}` : ''}`)));
    assert.deepEqual(rules('ClusterRole', 'k8or-webhook'), [
      'list buckets', 'watch buckets', 'list tables', 'watch tables',
      'list providerconfigs', 'watch providerconfigs',
      'get namespaces', 'list namespaces', 'watch namespaces',
      'get validatingwebhookconfigurations/k8or-validating-webhook', 'update validatingwebhookconfigurations/k8or-validating-webhook',
      'get mutatingwebhookconfigurations/k8or-mutating-webhook', 'update mutatingwebhookconfigurations/k8or-mutating-webhook',
    ]);
    assert.deepEqual(rules('Role', 'k8or-webhook'), ['create secrets', 'get secrets/k8or-webhook-cert', 'update secrets/k8or-webhook-cert']);
    assert.ok(!rules('ClusterRole', 'k8or').some((r) => r.includes('webhookconfigurations')), 'the shards keep no grant of the webhook\'s');
    assert.ok(!rules('Role', 'k8or').some((r) => r.includes('k8or-webhook-cert')));
    for (const kind of ['ServiceAccount', 'ClusterRoleBinding', 'RoleBinding']) named(sharded, kind, 'k8or-webhook');

    // one webhook replica: no budget (it would block every drain); cert-manager's certificate mounted by the webhook only
    const single = rendered.get('sharding on, cert-manager, one webhook replica')!;
    assert.deepEqual(byKind(single, 'PodDisruptionBudget').map((m) => m.metadata.name), ['k8or']);
    assert.equal((named(single, 'Deployment', 'k8or-webhook') as Deployment).spec.replicas, 1);
    assert.deepEqual((named(single, 'Deployment', 'k8or-webhook') as Deployment).spec.template.spec.containers[0]!.volumeMounts.map((v) => v.name), ['tmp', 'webhook-certs']);
    assert.deepEqual((named(single, 'Deployment', 'k8or') as Deployment).spec.template.spec.containers[0]!.volumeMounts.map((v) => v.name), ['tmp']);
    assert.equal(byKind(single, 'Role').find((r) => r.metadata.name === 'k8or-webhook'), undefined, 'with cert-manager the webhook needs no Secret');
  });

  it('unsharded, the values of the webhook\'s own Deployment change nothing of what renders', async () => {
    const set = ['--set', 'sharding.webhook.replicaCount=5', '--set', 'sharding.webhook.resources.requests.cpu=1'];
    const plain = await runOk(t.helm, ['template', 'k8or', CHART_DIR, '--namespace', NS]);
    assert.equal(await runOk(t.helm, ['template', 'k8or', CHART_DIR, '--namespace', NS, ...set]), plain);
    assert.deepEqual(byKind(parse(plain), 'Deployment').map((d) => (d as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }).spec.template.spec.containers[0]!.args), [['operator', '--webhook']]);
  });
});
