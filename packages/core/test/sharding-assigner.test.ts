import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, Annotations, type ManagedResource } from '@k8or/api';
import { ADOPTED_BY_ANNOTATION, CoreMetrics, HashRing, KubeRest, ShardAssigner, ShardLeaseReader, adoptionHash, assignShard, corePath, drainLabel, installCrds, k8orPath, shardLabel, shardLease, type LeaderElector, type ShardLabelChange } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin, waitFor } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

const SHARD = shardLabel('Bucket');
const DRAIN = drainLabel('Bucket');
const ring = 'k8or';
const namespace = 'k8or-system';

describe('the shard assigner\'s options', () => {
  it('refuses a page size, concurrency or timeout that is not a positive integer, or a negative or fractional full-pass period, naming the option', () => {
    const kubeConfig = new KubeConfig();
    const base = { kubeConfig, namespace, ring, providers: new Map(), clusterId: 'c' };
    for (const [option, value] of [['listPageSize', 0], ['listPageSize', -5], ['fullPassPageSize', 0], ['fullPassEveryMs', 1.5], ['fullPassEveryMs', -1], ['concurrency', 0], ['departedConcurrency', 0], ['departedConcurrency', 2.5], ['timeoutMs', Number.NaN]] as const) {
      assert.throws(() => new ShardAssigner({ ...base, [option]: value }), (error: unknown) => error instanceof RangeError && error.message.includes(option) && error.message.includes(String(value)), `${option}: ${value}`);
    }
  });
});

describe('the shard assigner against the sandbox', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let user: KubeRest;
  let assigner: ShardAssigner;
  const metrics = new CoreMetrics();
  const shards = new Map<string, LeaderElector>();

  before(async () => {
    sandbox = await startSandbox({ recordRequests: true });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    user = new KubeRest(kubeConfig);
    await installCrds(kubeConfig);
    await waitFor('CRDs served', async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [namespace, 'team-a', 'team-b', 'team-c']) await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-west-1' } });
    for (let i = 0; i < 30; i++) await createBucket('team-a', `bucket-${i}`, `data-${i}`);
    // Three objects naming one cloud resource, from three namespaces.
    for (const ns of ['team-a', 'team-b', 'team-c']) await createBucket(ns, 'shared', 'shared-data');
    assigner = new ShardAssigner({ kubeConfig, namespace, ring, providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]), clusterId: 'test-cluster', adoptDeadShards: true, metrics: metrics.shardAssignerMetrics() });
  });

  after(async () => {
    await Promise.all([...shards.values()].map((lease) => lease.stop({ release: false })));
    assigner?.close();
    user?.close();
    await sandbox?.stop();
  });

  async function createBucket(ns: string, name: string, externalName: string): Promise<void> {
    await user.create(k8orPath('Bucket', ns), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: ns }, spec: { name: externalName } });
  }

  function startShard(name: string): void {
    const lease = shardLease({ kubeConfig, namespace, ring, shard: name, leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 300 });
    void lease.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    shards.set(name, lease);
  }

  async function buckets(): Promise<ManagedResource[]> {
    return ((await user.get<{ items: ManagedResource[] }>(k8orPath('Bucket', undefined)))?.items ?? []).sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  }

  const labelsOf = (list: ManagedResource[]): (string | undefined)[] => list.map((b) => b.metadata.labels?.[SHARD]);

  /** As the shards' engines do: let go of every drained object (both labels off, a compare-and-swap write). */
  async function letGoOfDrained(): Promise<ManagedResource[]> {
    const drained = (await buckets()).filter((b) => b.metadata.labels?.[DRAIN] !== undefined);
    for (const b of drained) {
      await user.patch(k8orPath('Bucket', b.metadata.namespace, b.metadata.name), { metadata: { resourceVersion: b.metadata.resourceVersion, labels: { [SHARD]: null, [DRAIN]: null } } });
    }
    return drained;
  }

  /** Syncs until the assigner sees exactly `live` as the live shards. */
  async function syncWith(live: string[]): Promise<Awaited<ReturnType<ShardAssigner['sync']>>> {
    return await waitFor(`live shards ${live.join(', ')}`, async () => {
      const result = await assigner.sync();
      return JSON.stringify(result.membership.live) === JSON.stringify(live) ? result : undefined;
    }, 60_000, 200);
  }

  it('labels every object for a live shard, keeps one cloud resource on one shard, and rewrites nothing on the next pass', async () => {
    for (const name of ['shard-a', 'shard-b', 'shard-c']) startShard(name);
    const first = await syncWith(['shard-a', 'shard-b', 'shard-c']);
    assert.equal(first.applied.length, 33);
    const list = await buckets();
    const labels = labelsOf(list);
    assert.ok(labels.every((l) => l === 'shard-a' || l === 'shard-b' || l === 'shard-c'), `labels: ${labels.join(', ')}`);
    assert.equal(new Set(labels).size, 3, 'every shard holds objects');
    const shared = list.filter((b) => b.metadata.name === 'shared').map((b) => b.metadata.labels?.[SHARD]);
    assert.equal(new Set(shared).size, 1, `the three objects naming shared-data are on ${shared.join(', ')}`);
    const again = await assigner.sync();
    assert.deepEqual(again.applied, [], 'a pass with nothing to do writes nothing');
    const text = await metrics.metrics();
    assert.match(text, /k8or_shard_label_changes_total\{result="applied"\} 33\n/);
    assert.match(text, /k8or_shard_label_changes_total\{result="skipped"\} 0\n/);
    assert.match(text, /k8or_shard_assignment_passes_total\{reach="all"\} 1\n/, 'one full pass');
    assert.match(text, /k8or_shard_assignment_passes_total\{reach="unassigned"\} [1-9]/, 'then a pass over the objects without a shard only');
    assert.match(text, /k8or_shard_assignment_pass_duration_seconds_count\{reach="all"\} 1\n/);
  });

  it('between full passes plans from its watches: with the shards unchanged, no pass lists the Buckets, Tables, Namespaces or ProviderConfigs again', async () => {
    sandbox.clearRequestLog();
    for (let i = 0; i < 5; i++) assert.deepEqual((await assigner.sync()).applied, []);
    const lists = sandbox.requestLog.filter((r) => r.verb === 'list' && r.resource !== 'leases');
    assert.deepEqual(lists.map((r) => r.path), []);
  });

  it('hands a dead shard\'s objects on from the live shards its Lease names as adopters: at once where the adopter is their shard, else through the drain handshake; leaves the others where they are', async () => {
    const before = await buckets();
    await shards.get('shard-c')!.stop();
    sandbox.clearRequestLog();
    const result = await syncWith(['shard-a', 'shard-b']);
    const patches = sandbox.requestLog.filter((r) => r.verb === 'patch' && r.resource === 'buckets');
    assert.equal(patches.length, result.applied.length, 'one label patch per object of the dead shard, none refused');
    // A shard only left: the pass reads the objects labelled for it and those being drained, not every object.
    const lists = sandbox.requestLog.filter((r) => r.verb === 'list' && r.resource === 'buckets' && r.userAgent?.startsWith('k8or-shard-assigner'));
    assert.deepEqual(lists.map((r) => r.labelSelector), [`${SHARD} in (shard-c)`, `${DRAIN},${SHARD} notin (shard-c)`]);
    const afterMove = await buckets();
    const onC = before.filter((b) => b.metadata.labels?.[SHARD] === 'shard-c').length;
    const lease = await user.get<{ metadata?: { annotations?: Record<string, string> }; spec?: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/shard-c`);
    assert.equal(lease?.spec?.holderIdentity, 'k8or-shard-assigner', 'the assigner holds the dead shard\'s Lease while its objects move');
    assert.equal(lease?.metadata?.annotations?.[ADOPTED_BY_ANNOTATION], 'shard-a,shard-b', 'the live shards adopt its objects');
    assert.equal(result.applied.length, onC, 'one write per object of the dead shard');
    // Each object goes on from the adopter that works it: relabelled where that adopter is its shard, else drained from it.
    const adopters = new HashRing(['shard-a', 'shard-b']);
    for (const change of result.applied) {
      const adopter = adopters.shardAt(adoptionHash(change.object));
      if (change.action === 'assign') assert.equal(change.shard, adopter, `${change.object.name} relabelled away from its adopter`);
      else assert.deepEqual(change.action === 'drain' ? change.from : change.action, adopter);
    }
    assert.ok(result.applied.some((c) => c.action === 'drain') && result.applied.some((c) => c.action === 'assign'), 'both kinds of hand-on among 33 objects');
    before.forEach((b, i) => {
      const now = afterMove[i]!.metadata.labels;
      if (b.metadata.labels?.[SHARD] !== 'shard-c') assert.equal(now?.[SHARD], b.metadata.labels?.[SHARD], `${b.metadata.name} stayed`);
      else if (now?.[DRAIN] === undefined) assert.ok(now?.[SHARD] === 'shard-a' || now?.[SHARD] === 'shard-b', `${b.metadata.name} is on ${now?.[SHARD]}`);
      else assert.equal(now[SHARD], 'shard-c', `${b.metadata.name}, drained, stays labelled for the dead shard until its adopter lets go`);
    });
    // The adopters let go; the assigner then labels each for its shard.
    const letGo = await letGoOfDrained();
    await waitFor('every object let go assigned', async () => {
      await assigner.sync();
      const list = await buckets();
      return letGo.every((b) => ['shard-a', 'shard-b'].includes(list.find((o) => o.metadata.uid === b.metadata.uid)?.metadata.labels?.[SHARD] ?? '')) ? true : undefined;
    }, 60_000, 100);
  });

  it('hands objects to a new shard only after their live shard let go (the drain handshake)', async () => {
    startShard('shard-d');
    const before = await buckets();
    const drained = await syncWith(['shard-a', 'shard-b', 'shard-d']);
    assert.ok(drained.applied.length > 0, 'some objects now belong on shard-d');
    assert.ok(drained.applied.every((c) => c.action === 'drain' && c.to === 'shard-d'));
    const draining = await buckets();
    assert.deepEqual(labelsOf(draining), labelsOf(before), 'no object changed shard while its shard holds it');
    const asked = draining.filter((b) => b.metadata.labels?.[DRAIN] !== undefined);
    assert.equal(asked.length, drained.applied.length);
    assert.deepEqual((await assigner.sync()).applied, [], 'nothing more happens until the shards let go');

    // Each old shard lets go: both labels off, in one compare-and-swap write.
    for (const b of asked) {
      await user.patch(k8orPath('Bucket', b.metadata.namespace, b.metadata.name), { metadata: { resourceVersion: b.metadata.resourceVersion, labels: { [SHARD]: null, [DRAIN]: null } } });
    }
    // The assigner sees the releases when its watch brings them: pass until every one is assigned.
    const assigned: ShardLabelChange[] = [];
    await waitFor('every released object assigned', async () => {
      assigned.push(...(await assigner.sync()).applied);
      return assigned.length >= asked.length;
    }, 60_000, 100);
    assert.equal(assigned.length, asked.length);
    assert.ok(assigned.every((c) => c.action === 'assign' && c.shard === 'shard-d'));
    const final = await buckets();
    for (const b of final) assert.equal(b.metadata.labels?.[DRAIN], undefined);
    assert.equal(final.filter((b) => b.metadata.labels?.[SHARD] === 'shard-d').length, asked.length);
    // Writes per object moved from a live shard: the leader's drain and assign, and the shard's release.
    const writes = drained.applied.length + asked.length + assigned.length;
    console.log(`moved ${asked.length} of ${final.length} objects to a new shard with ${(writes / asked.length).toFixed(1)} API writes each`);
  });

  it('follows a ProviderConfig created after its objects: their shard key, and so their shard, change with it', async () => {
    const live = ['shard-a', 'shard-b', 'shard-d'];
    const group = (await user.get<ManagedResource>(k8orPath('Bucket', 'team-a', 'shared')))!.metadata.labels?.[SHARD];
    // A name whose object-alone key hashes away from the shard of the objects naming shared-data.
    const ring = new HashRing(live);
    const name = Array.from({ length: 20 }, (_, i) => `late-${i}`).find((n) => assignShard(ring, { kind: 'Bucket', namespace: 'team-d', name: n }) !== group)!;
    await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-d', annotations: { [Annotations.providerConfig]: 'late' } } });
    await createBucket('team-d', name, 'shared-data');
    const first = await waitFor('the object on a shard by its own key', async () => {
      await assigner.sync();
      return (await user.get<ManagedResource>(k8orPath('Bucket', 'team-d', name)))?.metadata.labels?.[SHARD];
    }, 60_000, 100);
    assert.notEqual(first, group, 'no ProviderConfig yet: the object alone is its key');
    await user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'late' }, spec: { provider: 'aws', region: 'mem-west-1' } });
    const drain = await waitFor('the object asked to move to the shard of shared-data', async () => {
      return (await assigner.sync()).applied.find((c) => c.object.namespace === 'team-d' && c.object.name === name);
    }, 60_000, 100);
    assert.deepEqual(drain.action === 'drain' ? { from: drain.from, to: drain.to } : drain, { from: first, to: group });
  });

  it('run() moves a dead shard\'s objects as soon as it reads the Lease expired, not at its next interval', async () => {
    const leading = new AbortController();
    // An interval far longer than the test: only the reads of the Leases between passes can wake it.
    const running = assigner.run(leading.signal, 600_000);
    try {
      await createBucket('team-b', 'marker', 'marker-data');
      await waitFor('the passes running', async () => (await user.get<ManagedResource>(k8orPath('Bucket', 'team-b', 'marker')))?.metadata.labels?.[SHARD], 60_000, 100);
      // The pass that the marker's own label change wakes has read the Leases: a pass after it would need the interval.
      await waitFor('a read of the Leases after the marker was labelled', () => {
        const log = sandbox.requestLog;
        const labelled = log.findLastIndex((r) => r.verb === 'patch' && r.name === 'marker');
        return Promise.resolve(labelled >= 0 && log.slice(labelled).some((r) => r.resource === 'leases' && r.verb === 'list' && r.userAgent?.startsWith('k8or-shard-leases')) ? true : undefined);
      }, 60_000, 100);
      const onB = (await buckets()).filter((b) => b.metadata.labels?.[SHARD] === 'shard-b');
      assert.ok(onB.length > 0);
      await shards.get('shard-b')!.stop();
      // Each relabelled, or drained from its adopter, which lets go (the test does it for them).
      await waitFor('shard-b\'s objects handed on', async () => ((await buckets()).some((b) => b.metadata.labels?.[SHARD] === 'shard-b' && b.metadata.labels[DRAIN] === undefined) ? undefined : true), 60_000, 200);
      await letGoOfDrained();
      await waitFor('shard-b\'s objects moved', async () => ((await buckets()).some((b) => b.metadata.labels?.[SHARD] === 'shard-b' || b.metadata.labels?.[SHARD] === undefined) ? undefined : true), 60_000, 200);
    } finally {
      leading.abort();
      await running;
    }
  });

  it('run() keeps assigning new objects until its signal aborts', async () => {
    const leading = new AbortController();
    const running = assigner.run(leading.signal, 200);
    await createBucket('team-b', 'newcomer', 'newcomer-data');
    await waitFor('the newcomer assigned', async () => (await user.get<ManagedResource>(k8orPath('Bucket', 'team-b', 'newcomer')))?.metadata.labels?.[SHARD], 30_000, 100);
    leading.abort();
    await running;
    await createBucket('team-b', 'after-leading', 'after-leading-data');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal((await user.get<ManagedResource>(k8orPath('Bucket', 'team-b', 'after-leading')))?.metadata.labels?.[SHARD], undefined, 'no pass after the signal aborted');
  });

  it('sees an edit of an assigned object\'s shard key at its next full pass, and only then', async () => {
    await syncWith(['shard-a', 'shard-d']);
    const group = (await user.get<ManagedResource>(k8orPath('Bucket', 'team-a', 'shared')))!.metadata.labels?.[SHARD];
    // An object named by its external-name annotation, on a shard other than the one of shared-data.
    let moving: ManagedResource | undefined;
    for (let i = 0; moving === undefined; i++) {
      await user.create(k8orPath('Bucket', 'team-a'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: `renamed-${i}`, namespace: 'team-a', annotations: { [Annotations.externalName]: `renamed-data-${i}` } }, spec: {} });
      const shard = await waitFor(`renamed-${i} assigned`, async () => {
        await assigner.sync();
        return (await user.get<ManagedResource>(k8orPath('Bucket', 'team-a', `renamed-${i}`)))?.metadata.labels?.[SHARD];
      }, 60_000, 100);
      if (shard !== group) moving = (await user.get<ManagedResource>(k8orPath('Bucket', 'team-a', `renamed-${i}`)))!;
    }
    await user.patch(k8orPath('Bucket', 'team-a', moving.metadata.name), { metadata: { annotations: { [Annotations.externalName]: 'shared-data' } } });
    assert.deepEqual((await assigner.sync()).applied, [], 'between full passes, an assigned object is not read again');
    const sweeping = new ShardAssigner({ kubeConfig, namespace, ring, providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]), clusterId: 'test-cluster', fullPassEveryMs: 0, fullPassPageSize: 5 });
    try {
      sandbox.clearRequestLog();
      const applied = (await sweeping.sync()).applied;
      assert.deepEqual(applied.map((c) => (c.action === 'drain' ? [c.object.name, c.from, c.to] : c.action)), [[moving.metadata.name, moving.metadata.labels?.[SHARD], group]]);
      const pages = sandbox.requestLog.filter((r) => r.verb === 'list' && r.resource === 'buckets' && r.userAgent?.startsWith('k8or-shard-assigner'));
      assert.equal(pages.length, Math.ceil((await buckets()).length / 5), 'the full pass read every Bucket, 5 at a time');
    } finally {
      sweeping.close();
    }
  });

  it('in a long full pass, assigns an object without a shard that appears meanwhile, before the pass ends', async () => {
    const sweeping = new ShardAssigner({ kubeConfig, namespace, ring, providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]), clusterId: 'test-cluster', fullPassEveryMs: 0, fullPassPageSize: 1 });
    try {
      await sweeping.sync();
      sandbox.clearRequestLog();
      const pagesRead = (): number => sandbox.requestLog.filter((r) => r.verb === 'list' && r.resource === 'buckets' && r.userAgent?.startsWith('k8or-shard-assigner')).length;
      const passing = sweeping.sync();
      // After the pass's list began (its pages are of the objects as they were then), a new object.
      await waitFor('the full pass reading its pages', () => pagesRead() >= 2, 30_000, 1);
      await createBucket('team-b', 'mid-pass', 'mid-pass-data');
      const result = await passing;
      assert.ok(pagesRead() > 10, `a pass of many pages (${pagesRead()})`);
      assert.deepEqual(result.applied.filter((c) => c.object.name === 'mid-pass').map((c) => c.action), ['assign'], 'assigned within the pass that was reading when it appeared');
      assert.ok((await user.get<ManagedResource>(k8orPath('Bucket', 'team-b', 'mid-pass')))?.metadata.labels?.[SHARD]);
    } finally {
      sweeping.close();
    }
  });

  it('plans a change refused in a full pass again from a fresh read, in the same pass', async () => {
    startShard('shard-e');
    const reader = new ShardLeaseReader({ kubeConfig, namespace, ring });
    await waitFor('shard-e live', async () => ((await reader.read()).live.includes('shard-e') ? true : undefined), 60_000, 100);
    const drainingBefore = (await buckets()).filter((b) => b.metadata.labels?.[DRAIN] !== undefined).length;
    sandbox.clearRequestLog();
    // Every other write of this user refused with a 409, as if someone else had written first.
    sandbox.faults.configure({ rate: 0.5, kinds: ['conflict'], users: ['k8or-sandbox-admin'], seed: 7 });
    sandbox.faults.enable();
    let result: Awaited<ReturnType<ShardAssigner['sync']>>;
    try {
      result = await assigner.sync();
    } finally {
      sandbox.faults.disable();
    }
    assert.ok(result.membership.live.includes('shard-e'));
    const drains = result.applied.filter((c) => c.action === 'drain' && c.to === 'shard-e');
    assert.ok(drains.length > 0, 'some objects now belong on shard-e');
    const patches = new Map<string, number>();
    for (const r of sandbox.requestLog.filter((r) => r.verb === 'patch' && r.resource === 'buckets')) patches.set(`${r.namespace}/${r.name}`, (patches.get(`${r.namespace}/${r.name}`) ?? 0) + 1);
    assert.ok(sandbox.faults.injected.conflict > 0);
    assert.ok([...patches.values()].some((n) => n > 1), 'a refused change was written again in the same pass');
    const draining = (await buckets()).filter((b) => b.metadata.labels?.[DRAIN] !== undefined).length;
    assert.equal(draining - drainingBefore, drains.length, 'every drain the pass reports applied is on its object');
  });

  it('when the shard objects were draining to leaves, lets them stay where they are (undrain), reading only the departed shard\'s and the draining objects', async () => {
    const live = (await assigner.sync()).membership.live;
    assert.ok(live.includes('shard-e'));
    const draining = (await buckets()).filter((b) => b.metadata.labels?.[DRAIN] !== undefined);
    assert.ok(draining.length > 0, 'objects are being drained (to shard-e, by the test before)');
    await shards.get('shard-e')!.stop();
    sandbox.clearRequestLog();
    const result = await syncWith(live.filter((shard) => shard !== 'shard-e'));
    const undrained = result.applied.filter((c) => c.action === 'undrain');
    assert.ok(undrained.length > 0);
    const lists = sandbox.requestLog.filter((r) => r.verb === 'list' && r.resource === 'buckets' && r.userAgent?.startsWith('k8or-shard-assigner'));
    assert.ok(lists.every((r) => r.labelSelector?.includes('shard-e')), `lists: ${lists.map((r) => r.labelSelector).join('; ')}`);
    const after = await buckets();
    for (const change of undrained) {
      const now = after.find((b) => b.metadata.namespace === change.object.namespace && b.metadata.name === change.object.name)!;
      assert.equal(now.metadata.labels?.[DRAIN], undefined);
      assert.equal(now.metadata.labels?.[SHARD], change.object.shard, 'it stays on its shard');
    }
    assert.equal(after.filter((b) => b.metadata.labels?.[DRAIN] !== undefined).length, draining.length - undrained.length);
  });

  it('holds a dead shard\'s Lease, and so its adoption, for as long as its adopters have drained objects to let go of, and not after', async () => {
    const reader = new ShardLeaseReader({ kubeConfig, namespace, ring });
    const before = (await assigner.sync()).membership.live;
    startShard('shard-g');
    await syncWith([...before, 'shard-g'].sort());
    await letGoOfDrained();
    await waitFor('objects on shard-g', async () => {
      await assigner.sync();
      return (await buckets()).some((b) => b.metadata.labels?.[SHARD] === 'shard-g') && !(await buckets()).some((b) => !b.metadata.labels?.[SHARD] || b.metadata.labels[DRAIN]) ? true : undefined;
    }, 60_000, 100);
    await shards.get('shard-g')!.stop();
    const handedOn = await syncWith(before);
    assert.ok(handedOn.applied.some((c) => c.action === 'drain'), 'some of its objects drained from their adopters');
    // The adopters take their time: passes go on for longer than the Lease the assigner writes (15 s:
    // the released Lease stated 1 s), and the adoption with them.
    const until = performance.now() + 20_000;
    while (performance.now() < until) {
      await assigner.sync();
      assert.ok(((await reader.read()).adoptions ?? []).some((a) => a.shard === 'shard-g'), 'the adoption lapsed while drained objects wait for their adopters');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await letGoOfDrained();
    await waitFor('every object of shard-g on a live shard', async () => {
      await assigner.sync();
      return (await buckets()).every((b) => before.includes(b.metadata.labels?.[SHARD] ?? '')) ? true : undefined;
    }, 60_000, 100);
    // Nothing left to let go of: the Lease is no longer written, and the adoption ends.
    await waitFor('the adoption over', async () => {
      await assigner.sync();
      return ((await reader.read()).adoptions ?? []).some((a) => a.shard === 'shard-g') ? undefined : true;
    }, 60_000, 200);
  });
});
