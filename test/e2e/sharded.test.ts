import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@k8or/core/testing';
import { podName } from '../support/chart-deployment.ts';
import { EXTERNAL_KUBECONFIG } from '../support/cluster.ts';
import { settingsManifests } from '../support/provider-settings.ts';
import { run, runOk } from '../support/run.ts';
import { openTarget, RELEASE, RELEASE_NAMESPACE, targetProblem, type E2ETarget, type InstalledChart } from '../support/target.ts';
import type { Tools } from '../support/tools.ts';

// The chart with sharding on: two operator replicas as processes with a token of the chart's
// ServiceAccount, each the shard named after its Pod (K8OR_SHARD_NAME from the downward API), and the
// webhook Deployment's two replicas beside them, the only Pods the webhook Service selects. Each shard
// holds its Lease, `kubectl apply` goes through the webhook Deployment's processes, the leader labels
// every Bucket and Table for one shard, and the shards reconcile them to Ready; the embedded API
// server authorizes every call with the chart's roles and refuses none.

const NS = RELEASE_NAMESPACE;
const REPLICAS = 2;
const WEBHOOK_REPLICAS = 2;
/** The webhook Deployment's ServiceAccount (and its Deployment's name). */
const WEBHOOK_ACCOUNT = `${RELEASE}-webhook`;
const SKIP = targetProblem() ?? (EXTERNAL_KUBECONFIG ? 'runs the replicas as processes against the embedded API server (its RBAC accounting)' : false);

/** The admission reviews a process's metrics count (0 where it serves no webhook). */
function admissionReviews(metrics: string): number {
  return [...metrics.matchAll(/^k8or_admission_reviews_total\{[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

interface Labelled { metadata: { name: string; labels?: Record<string, string> }; status?: { conditions?: Array<{ type: string; status: string }> } }

describe('the chart sharded: two shards hold their Leases and reconcile their share, with the chart\'s RBAC', { skip: SKIP, timeout: 300_000 }, () => {
  let home: string;
  let target: E2ETarget;
  let t: Tools;
  let chart: InstalledChart | undefined;
  const shards = Array.from({ length: REPLICAS }, (_, i) => podName(RELEASE, i));

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-e2e-sharded-'));
    target = await openTarget(home, { recordRequests: true });
    t = target.tools;
    chart = await target.install({ 'sharding.enabled': 'true', replicaCount: String(REPLICAS), 'sharding.webhook.replicaCount': String(WEBHOOK_REPLICAS) });
    await runOk(t.kubectl, ['apply', '-f', '-'], settingsManifests(target.settings));
  });

  after(async () => {
    await target?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('runs the operator\'s replicas without the webhook, and the webhook Deployment\'s replicas behind its Service', () => {
    const replicas = chart!.processes!.replicas;
    assert.deepEqual(replicas.map((r) => [r.pod, r.servesWebhook]), [
      ...shards.map((pod) => [pod, false]),
      ...Array.from({ length: WEBHOOK_REPLICAS }, (_, i) => [podName(WEBHOOK_ACCOUNT, i), true]),
    ]);
    assert.equal(chart!.webhookReplicas, WEBHOOK_REPLICAS);
  });

  it('each replica holds the Lease of its Pod name, and every object is labelled for one of them and Ready', async () => {
    const leases = await waitFor('both shard Leases held', async () => {
      const list = JSON.parse(await runOk(t.kubectl, ['get', 'leases', '-n', NS, '-l', 'k8or.io/shard-lease=k8or-operator', '-o', 'json'])) as { items: Array<{ metadata: { name: string }; spec?: { holderIdentity?: string } }> };
      const held = list.items.filter((l) => l.spec?.holderIdentity === l.metadata.name).map((l) => l.metadata.name).sort();
      return held.length === REPLICAS ? held : undefined;
    }, 60_000, 500);
    assert.deepEqual(leases, [...shards].sort());

    const objects = [
      ...Array.from({ length: 6 }, (_, i) => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: `sharded-${i}`, namespace: 'default' }, spec: {} })),
      ...Array.from({ length: 2 }, (_, i) => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name: `sharded-${i}`, namespace: 'default' }, spec: { partitionKey: { name: 'id', type: 'string' } } })),
    ];
    await runOk(t.kubectl, ['apply', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n'));
    // admitted by the webhook Deployment's processes: the only ones that answered admission reviews
    const defaulted = JSON.parse(await runOk(t.kubectl, ['get', 'bucket', 'sharded-0', '-n', 'default', '-o', 'json'])) as { spec: { name?: string } };
    assert.ok(defaulted.spec.name, 'spec.name defaulted by the mutating webhook');
    const reviews = await Promise.all(chart!.processes!.replicas.map(async (r) => [r.pod, admissionReviews(await (await fetch(`${r.metrics}/metrics`)).text())] as const));
    for (const [pod, count] of reviews) {
      if (pod.startsWith(`${WEBHOOK_ACCOUNT}-`)) continue;
      assert.equal(count, 0, `${pod} (an operator replica) answered no admission review`);
    }
    assert.ok(reviews.filter(([pod]) => pod.startsWith(`${WEBHOOK_ACCOUNT}-`)).reduce((sum, [, count]) => sum + count, 0) >= objects.length, `the webhook Deployment's replicas answered every apply: ${JSON.stringify(reviews)}`);
    for (const kind of ['bucket', 'table'] as const) {
      const label = `shard.k8or.io/${kind}`;
      const items = await waitFor(`every ${kind} labelled for a shard and Ready`, async () => {
        const list = JSON.parse(await runOk(t.kubectl, ['get', kind, '-n', 'default', '-o', 'json'])) as { items: Labelled[] };
        const done = list.items.every((o) => o.metadata.labels?.[label] && o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
        return done && list.items.length > 0 ? list.items : undefined;
      }, 120_000, 1_000).catch(async (error: unknown) => { throw new Error(`${String(error)}\n${await chart?.logs()}`); });
      for (const item of items) assert.ok(shards.includes(item.metadata.labels![label]!), `${kind} ${item.metadata.name} labelled for a shard: ${item.metadata.labels![label]}`);
    }
  });

  it("was refused nothing by the chart's RBAC, and used its grant on the shard Leases", () => {
    const access = target.cluster.sandbox!.accessOf(NS, RELEASE);
    assert.deepEqual(access.denied, [], `calls the chart does not grant:\n${access.denied.join('\n')}`);
    const leaseGrants = access.grants.filter((g) => g.grant.binding === `RoleBinding ${NS}/${RELEASE}` && g.grant.resource === 'leases');
    // takeOver (an update of a dead shard's Lease) is the same grant as a shard's renewal
    assert.deepEqual(leaseGrants.map((g) => [g.grant.verb, g.grant.resourceName ?? '', g.uses > 0]).sort(), [['create', '', true], ['get', '', true], ['list', '', true], ['update', '', true]]);
    // the webhook's grants are its own ServiceAccount's
    assert.ok(!access.grants.some((g) => /webhookconfigurations/.test(g.key) || g.grant.resourceName === 'k8or-webhook-cert'), 'no grant of the webhook\'s for the shards');
  });

  it("the webhook's ServiceAccount was refused nothing, and used every grant but the certificate's renewal", () => {
    const access = target.cluster.sandbox!.accessOf(NS, WEBHOOK_ACCOUNT);
    assert.deepEqual(access.denied, [], `calls the chart does not grant the webhook:\n${access.denied.join('\n')}`);
    const chartBindings = new Set([`ClusterRoleBinding ${WEBHOOK_ACCOUNT}`, `RoleBinding ${NS}/${WEBHOOK_ACCOUNT}`]);
    // the shared certificate is renewed only near its end (e2e/user-path.test.ts renews it)
    const renewal = ': update core/secrets/k8or-webhook-cert';
    const grants = access.grants.filter((g) => chartBindings.has(g.grant.binding));
    assert.ok(grants.some((g) => g.key.endsWith(renewal)), 'the renewal is granted');
    const unused = grants.filter((g) => g.uses === 0 && !g.key.endsWith(renewal)).map((g) => g.key);
    assert.deepEqual(unused, [], `grants of the webhook's no call used:\n${unused.join('\n')}`);
  });

  it('the shards delete their objects, and helm uninstall takes the Deployment', async () => {
    await runOk(t.kubectl, ['delete', 'bucket,table', '--all', '-n', 'default', '--wait=false']);
    await waitFor('the objects deleted by their shards', async () => (await runOk(t.kubectl, ['get', 'bucket,table', '-n', 'default', '-o', 'name'])).trim() === '', 120_000, 1_000);
    await target.uninstall();
    assert.equal((await run(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS])).code !== 0, true);
  });
});
