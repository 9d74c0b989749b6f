import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { API_VERSION, type Bucket } from '@k8or/api';
import { KubeRest, corePath, installCrds, k8orPath, loadKubeAccess, shardLabel } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { resolveConfig, startManager, type Manager } from '@k8or/operator';

const SHARD = shardLabel('Bucket');

describe('the manager with --shard-name: replicas as shards', () => {
  let dir: string;
  let sandbox: Sandbox;
  let rest: KubeRest;
  const managers: Manager[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'k8or-sharding-'));
    sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error', recordRequests: true });
    const kubeConfig = await loadKubeAccess(join(dir, 'kubeconfig'), {});
    await installCrds(kubeConfig);
    rest = new KubeRest(kubeConfig, { userAgent: 'test-user' });
    await waitFor('the CRDs served', async () => (await rest.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of ['k8or-system', 'team-a']) await rest.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });
  after(async () => {
    await Promise.all(managers.map((m) => m.stop()));
    rest?.close();
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses --shard-name without --leader-elect, or with several namespaces', () => {
    assert.throws(() => resolveConfig({ 'shard-name': 'shard-a' }, {}, ['controllers']), /--shard-name .*needs --leader-elect/);
    assert.throws(() => resolveConfig({ 'shard-name': 'shard-a', 'leader-elect': true, namespaces: 'a,b' }, {}, ['controllers']), /one namespace or all/);
    assert.equal(resolveConfig({}, {}, ['controllers']).shardName, undefined, 'off by default');
  });

  it('takes a dead shard\'s objects over by relabelling unless told to adopt, and names a wrong choice', () => {
    assert.equal(resolveConfig({}, {}, ['controllers']).shardTakeover, 'relabel');
    assert.equal(resolveConfig({}, { K8OR_SHARD_TAKEOVER: 'adopt' }, ['controllers']).shardTakeover, 'adopt');
    assert.throws(() => resolveConfig({ 'shard-takeover': 'move' }, {}, ['controllers']), /--shard-takeover \(K8OR_SHARD_TAKEOVER\) must be one of relabel, adopt, got "move"/);
  });

  it('each replica reconciles only the objects the leader labelled for it', async () => {
    const names = Array.from({ length: 16 }, (_, i) => `bucket-${i}`);
    // No ProviderConfig: each reconcile writes a condition saying so, which shows who reconciled it.
    for (const name of names) {
      await rest.create(k8orPath('Bucket', 'team-a'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'team-a' }, spec: { name: `k8or-test-${name}` } });
    }
    const flags = (shard: string) => ({
      kubeconfig: join(dir, 'kubeconfig'),
      providers: 'aws',
      'cluster-id': 'test',
      'metrics-bind-address': '127.0.0.1:0',
      'health-probe-bind-address': '127.0.0.1:0',
      'log-level': 'error',
      'leader-elect': true,
      'leader-election-namespace': 'k8or-system',
      'shard-name': shard,
      'shard-takeover': 'adopt',
    });
    managers.push(await startManager(resolveConfig(flags('shard-a'), {}, ['controllers'])));
    managers.push(await startManager(resolveConfig(flags('shard-b'), {}, ['controllers'])));

    // The first pass may see one shard only; the next ones drain objects over to the other.
    await waitFor('every Bucket settled on one of both shards', async () => {
      const list = (await rest.get<{ items: Bucket[] }>(k8orPath('Bucket', 'team-a')))?.items ?? [];
      const settled = list.length === names.length && list.every((b) => b.metadata.labels?.[SHARD] && b.metadata.labels['drain.k8or.io/bucket'] === undefined && b.status?.conditions?.length);
      return settled && new Set(list.map((b) => b.metadata.labels?.[SHARD])).size === 2;
    }, 120_000, 200);

    // A user edit of every Bucket: only the shard it is labelled for writes it.
    const from = sandbox.requestLog.length;
    for (const name of names) await rest.patch(k8orPath('Bucket', 'team-a', name), { spec: { versioning: true } });
    const buckets = await waitFor('every edit seen', async () => {
      const list = (await rest.get<{ items: Bucket[] }>(k8orPath('Bucket', 'team-a')))?.items ?? [];
      return list.every((b) => b.status?.conditions?.some((c) => c.observedGeneration === b.metadata.generation)) ? list : undefined;
    }, 120_000, 200);
    for (const bucket of buckets) {
      const writers = new Set(
        sandbox.requestLog
          .slice(from)
          .filter((r) => r.resource === 'buckets' && r.name === bucket.metadata.name && ['create', 'update', 'patch'].includes(r.verb) && (r.userAgent ?? '').startsWith('k8or-engine/'))
          .map((r) => (r.userAgent ?? '').replace(/^k8or-engine\//, '')),
      );
      assert.deepEqual([...writers], [bucket.metadata.labels?.[SHARD]], `${bucket.metadata.name} was written by ${[...writers].join(', ')}`);
    }

    // shard-b stops (releasing its Lease): with --shard-takeover adopt, the leader names shard-a its
    // adopter on that Lease, and every object ends on shard-a.
    await managers[1]!.stop();
    const leasePath = '/apis/coordination.k8s.io/v1/namespaces/k8or-system/leases/shard-b';
    await waitFor('shard-b\'s Lease naming its adopter', async () => (await rest.get<{ metadata: { annotations?: Record<string, string> } }>(leasePath))?.metadata.annotations?.['k8or.io/adopted-by'] === 'shard-a', 120_000, 200);
    await waitFor('every Bucket on shard-a', async () => {
      const list = (await rest.get<{ items: Bucket[] }>(k8orPath('Bucket', 'team-a')))?.items ?? [];
      return list.length === names.length && list.every((b) => b.metadata.labels?.[SHARD] === 'shard-a' && b.metadata.labels['drain.k8or.io/bucket'] === undefined);
    }, 120_000, 200);
  });
});
