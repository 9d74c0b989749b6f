import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCluster, type E2ECluster } from '../support/cluster.ts';
import { run, runOk } from '../support/run.ts';
import { CHART_DIR, tools, type Tools } from '../support/tools.ts';

// helm install, upgrade, rollback and uninstall of the chart against the embedded API server, as
// against a real cluster: Helm keeps its releases in Secrets, and uninstall leaves nothing it made
// (but the CRDs, which Helm never deletes).

const NS = 'k8or-system';

interface Listed { items: Array<{ kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } }> }

describe('helm install, upgrade, rollback and uninstall of the chart', () => {
  let home: string;
  let cluster: E2ECluster;
  let t: Tools;

  /** Everything labelled as this release's, by kind/namespace/name. */
  async function releaseObjects(): Promise<string[]> {
    const kinds = 'deployments,services,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings,poddisruptionbudgets,validatingwebhookconfigurations,mutatingwebhookconfigurations';
    const listed = JSON.parse(await runOk(t.kubectl, ['get', kinds, '-A', '-l', 'app.kubernetes.io/instance=k8or', '-o', 'json'])) as Listed;
    return listed.items.map((i) => `${i.kind}/${i.metadata.namespace ?? ''}/${i.metadata.name}`).sort();
  }

  const deploymentEnv = async (name: string): Promise<string> =>
    (await runOk(t.kubectl, ['get', 'deployment', 'k8or', '-n', NS, '-o', `jsonpath={.spec.template.spec.containers[0].env[?(@.name=="${name}")].value}`])).trim();

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-helm-'));
    cluster = await openCluster(home);
    t = await tools(home, cluster.kubeconfigPath);
  });

  after(async () => {
    if (cluster?.external && t) {
      await run(t.helm, ['uninstall', 'k8or', '--namespace', NS]);
      await run(t.kubectl, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=false']);
    }
    await cluster?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('installs: every object, the CRDs, and the release in a Secret', async () => {
    const out = await runOk(t.helm, ['install', 'k8or', CHART_DIR, '--namespace', NS, '--create-namespace', ...cluster.helmImageArgs]);
    assert.match(out, /STATUS: deployed/);
    assert.match(out, /REVISION: 1/);
    const objects = await releaseObjects();
    for (const expected of [
      `Deployment/${NS}/k8or`,
      `Service/${NS}/k8or-webhook`,
      `ServiceAccount/${NS}/k8or`,
      `Role/${NS}/k8or`,
      `RoleBinding/${NS}/k8or`,
      'ClusterRole//k8or',
      'ClusterRoleBinding//k8or',
      `PodDisruptionBudget/${NS}/k8or`,
      'ValidatingWebhookConfiguration//k8or-validating-webhook',
      'MutatingWebhookConfiguration//k8or-mutating-webhook',
    ]) {
      assert.ok(objects.includes(expected), `${expected} in ${objects.join(', ')}`);
    }
    assert.match(await runOk(t.kubectl, ['get', 'crds', '-o', 'name']), /buckets\.k8or\.io/);
    assert.match(await runOk(t.kubectl, ['get', 'secrets', '-n', NS, '-l', 'owner=helm', '-o', 'name']), /sh\.helm\.release\.v1\.k8or\.v1/);
    assert.match(await runOk(t.helm, ['list', '-n', NS]), /k8or\s+k8or-system\s+1\s+.*deployed/);
  });

  it('upgrades with new values (revision 2) and rolls back to revision 1', async () => {
    await runOk(t.helm, ['upgrade', 'k8or', CHART_DIR, '--namespace', NS, '--set', 'providers.aws.enabled=true', '--set', 'operator.defaultDeletionPolicy=Retain']);
    assert.equal(await deploymentEnv('K8OR_PROVIDERS'), 'aws');
    assert.equal(await deploymentEnv('K8OR_DEFAULT_DELETION_POLICY'), 'Retain');
    await runOk(t.helm, ['rollback', 'k8or', '1', '--namespace', NS]);
    assert.equal(await deploymentEnv('K8OR_PROVIDERS'), '');
    assert.equal(await deploymentEnv('K8OR_DEFAULT_DELETION_POLICY'), 'Delete');
    const history = await runOk(t.helm, ['history', 'k8or', '-n', NS]);
    assert.match(history, /3\s+.*deployed\s+k8or-0\.1\.0.*Rollback to 1/);
  });

  it('turns sharding on and off by upgrades: the operator Deployment keeps its selector, the webhook Deployment comes and goes', async () => {
    const webhookObjects = [
      'ClusterRole//k8or-webhook',
      'ClusterRoleBinding//k8or-webhook',
      `Deployment/${NS}/k8or-webhook`,
      `PodDisruptionBudget/${NS}/k8or-webhook`,
      `Role/${NS}/k8or-webhook`,
      `RoleBinding/${NS}/k8or-webhook`,
      `ServiceAccount/${NS}/k8or-webhook`,
    ];
    const unsharded = await releaseObjects();
    // a Deployment's selector is immutable: the API server would refuse the upgrade had it changed
    await runOk(t.helm, ['upgrade', 'k8or', CHART_DIR, '--namespace', NS, '--set', 'sharding.enabled=true', '--set', 'replicaCount=3']);
    assert.deepEqual(await releaseObjects(), [...unsharded, ...webhookObjects].sort());
    assert.equal(await runOk(t.kubectl, ['get', 'deployment', 'k8or', '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']), '["operator"]');
    assert.equal(await runOk(t.kubectl, ['get', 'service', 'k8or-webhook', '-n', NS, '-o', 'jsonpath={.spec.selector.app\\.kubernetes\\.io/component}']), 'webhook');
    await runOk(t.helm, ['upgrade', 'k8or', CHART_DIR, '--namespace', NS, '--set', 'sharding.enabled=false']);
    assert.deepEqual(await releaseObjects(), unsharded);
    assert.equal(await runOk(t.kubectl, ['get', 'deployment', 'k8or', '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']), '["operator","--webhook"]');
  });

  it('uninstalls everything it installed (the CRDs stay, as Helm keeps them)', async () => {
    await runOk(t.helm, ['uninstall', 'k8or', '--namespace', NS]);
    assert.deepEqual(await releaseObjects(), []);
    assert.equal((await runOk(t.kubectl, ['get', 'secrets', '-n', NS, '-l', 'owner=helm', '-o', 'name'])).trim(), '');
    assert.match(await runOk(t.kubectl, ['get', 'crds', '-o', 'name']), /buckets\.k8or\.io/);
  });
});
