import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, CoreV1Api, KubeConfig, V1MicroTime } from '@kubernetes/client-node';
import { ADOPTED_BY_ANNOTATION, FleetShare, SHARD_LEASE_LABEL, ShardLeaseReader, isDeadShard, shardLease, type LeaderElector, type ShardMembership } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

/** One replica holding its shard Lease, and whether it may work. */
interface Shard {
  name: string;
  lease: LeaderElector;
  running: Promise<void>;
  signal: AbortSignal | undefined;
}

describe('shard Leases in the sandbox', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let coordination: CoordinationV1Api;
  const namespace = 'k8or-system';
  const shards: Shard[] = [];
  let ringCounter = 0;

  before(async () => {
    sandbox = await startSandbox();
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  });

  after(async () => {
    await Promise.all(shards.map((shard) => shard.lease.stop({ release: false })));
    await sandbox?.stop();
  });

  /** Short durations keep expiry quick: a 2 s Lease (1.5 s rounds up), renewed every 200 ms. */
  function startShard(ring: string, name: string, leaseDurationMs = 1500): Shard {
    const lease = shardLease({ kubeConfig, namespace, ring, shard: name, leaseDurationMs, renewDeadlineMs: 1000, retryPeriodMs: 200 });
    const shard: Shard = { name, lease, running: Promise.resolve(), signal: undefined };
    shard.running = lease.run({ onStartedLeading: (signal) => void (shard.signal = signal), onStoppedLeading: () => undefined });
    shards.push(shard);
    return shard;
  }

  function newRing(): { ring: string; reader: ShardLeaseReader } {
    const ring = `ring-${++ringCounter}`;
    return { ring, reader: new ShardLeaseReader({ kubeConfig, namespace, ring }) };
  }

  /** Who is live and who expiring, without the rest a read says. */
  const who = (membership: ShardMembership): Pick<ShardMembership, 'live' | 'expiring'> => ({ live: membership.live, expiring: membership.expiring });

  /** Reads until `holds` is true of the membership (a generous deadline: the machine is shared). */
  async function readUntil(reader: ShardLeaseReader, what: string, holds: (m: ShardMembership) => boolean): Promise<ShardMembership> {
    let last: ShardMembership = { live: [], expiring: [] };
    await waitFor(what, async () => holds((last = await reader.read())), 30_000, 100);
    return last;
  }

  it('lists the live shards of its own ring, each Lease held by its own name and labelled', async () => {
    const { ring, reader } = newRing();
    startShard(ring, `${ring}-a`);
    startShard(ring, `${ring}-b`);
    startShard('another-ring', `${ring}-other`);
    const membership = await readUntil(reader, 'two live shards', (m) => m.live.length === 2);
    assert.deepEqual(who(membership), { live: [`${ring}-a`, `${ring}-b`], expiring: [] });
    const lease = await coordination.readNamespacedLease({ namespace, name: `${ring}-a` });
    assert.equal(lease.spec?.holderIdentity, `${ring}-a`);
    assert.equal(lease.metadata?.labels?.[SHARD_LEASE_LABEL], ring);
    // Renewals keep both live over several Lease durations.
    const until = Date.now() + 5000;
    while (Date.now() < until) assert.deepEqual((await reader.read()).live, [`${ring}-a`, `${ring}-b`]);
  });

  it('calls a shard that released its Lease dead at once', async () => {
    const { ring, reader } = newRing();
    const a = startShard(ring, `${ring}-a`);
    startShard(ring, `${ring}-b`);
    await readUntil(reader, 'two live shards', (m) => m.live.length === 2);
    await a.lease.stop();
    assert.equal(a.signal?.aborted, true, 'the shard stopped its work before it let go');
    const membership = await reader.read();
    assert.deepEqual(who(membership), { live: [`${ring}-b`], expiring: [] });
    assert.ok(isDeadShard(membership, a.name));
  });

  it('calls a crashed shard dead only once its Lease expired by the reader\'s clock', async () => {
    const { ring, reader } = newRing();
    const a = startShard(ring, `${ring}-a`);
    startShard(ring, `${ring}-b`);
    await readUntil(reader, 'two live shards', (m) => m.live.length === 2);
    await a.lease.stop({ release: false });
    // The last record the shard wrote is seen no earlier than this read began.
    const seenAt = performance.now();
    assert.ok((await reader.read()).live.includes(a.name), 'a crash is not seen at once');
    const membership = await readUntil(reader, 'the crashed shard to drop out', (m) => !m.live.includes(a.name));
    const waited = performance.now() - seenAt;
    assert.ok(waited >= 2000, `called dead ${waited.toFixed(0)} ms after its last record was seen, before its 2 s Lease expired`);
    assert.deepEqual(who(membership), { live: [`${ring}-b`], expiring: [] });
    assert.ok(isDeadShard(membership, a.name));
  });

  it('calls a crashed shard silent once a third of its Lease duration passed without a renewal, and live until the Lease expires', async () => {
    const { ring, reader } = newRing();
    // A 6 s Lease: silent from 2 s on, live until 6 s, a window no read of a loaded machine misses.
    const a = startShard(ring, `${ring}-a`, 6000);
    startShard(ring, `${ring}-b`);
    await readUntil(reader, 'two live shards', (m) => m.live.length === 2);
    assert.equal((await reader.read()).silent?.includes(a.name) ?? false, false, 'a shard that renews is not silent');
    await a.lease.stop({ release: false });
    const stoppedAt = performance.now();
    const silent = await readUntil(reader, 'the crashed shard silent, or dead', (m) => m.silent?.includes(a.name) === true || !m.live.includes(a.name));
    assert.deepEqual({ live: silent.live, silent: silent.silent }, { live: [`${ring}-a`, `${ring}-b`], silent: [`${ring}-a`] }, 'silent while still live');
    assert.ok(performance.now() - stoppedAt >= 2000 - 300, 'not silent before a third of its Lease passed (less a renewal period)');
    const dead = await readUntil(reader, 'the crashed shard to drop out', (m) => !m.live.includes(a.name));
    assert.equal(dead.silent, undefined, 'a dead shard is not silent: it is not live');
  });

  it('gives a shard whose Lease was taken or deleted time to stop: expiring, then dead', async () => {
    const { ring, reader } = newRing();
    const name = `${ring}-a`;
    // A stale Lease nobody renews, so the shard cannot take it back while we watch.
    await coordination.createNamespacedLease({
      namespace,
      body: { metadata: { name, labels: { [SHARD_LEASE_LABEL]: ring } }, spec: { holderIdentity: name, leaseDurationSeconds: 2, renewTime: new V1MicroTime(), acquireTime: new V1MicroTime() } },
    });
    assert.deepEqual(who(await reader.read()), { live: [name], expiring: [] });
    const current = await coordination.readNamespacedLease({ namespace, name });
    current.spec = { ...current.spec, holderIdentity: 'someone-else', renewTime: new V1MicroTime() };
    await coordination.replaceNamespacedLease({ namespace, name, body: current });
    assert.deepEqual(who(await reader.read()), { live: [], expiring: [name] }, 'not live, but maybe still working');
    await coordination.deleteNamespacedLease({ namespace, name });
    assert.deepEqual(who(await reader.read()), { live: [], expiring: [name] }, 'deleting the Lease does not end the fence');
    const membership = await readUntil(reader, 'the fence to pass', (m) => m.expiring.length === 0);
    assert.ok(isDeadShard(membership, name));
  });

  it('a shard that cannot renew stops working before any reader calls it dead', async () => {
    const { ring, reader } = newRing();
    const a = startShard(ring, `${ring}-a`);
    await readUntil(reader, 'the shard live', (m) => m.live.includes(a.name));
    // Someone else keeps the Lease: every renewal of the shard now fails.
    let intruding = true;
    const intruder = (async () => {
      while (intruding) {
        const current = await coordination.readNamespacedLease({ namespace, name: a.name });
        current.spec = { ...current.spec, holderIdentity: 'intruder', renewTime: new V1MicroTime(), leaseDurationSeconds: 60 };
        await coordination.replaceNamespacedLease({ namespace, name: a.name, body: current }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await readUntil(reader, 'the shard dead', (m) => {
        if (!isDeadShard(m, a.name)) return false;
        assert.equal(a.signal?.aborted, true, 'called dead while the shard still worked');
        return true;
      });
      await a.running;
    } finally {
      intruding = false;
      await intruder;
    }
  });

  it('takes a dead shard\'s Lease, so a replica of that name waits for that record to expire', async () => {
    const { ring, reader } = newRing();
    const crashed = startShard(ring, `${ring}-a`);
    const released = startShard(ring, `${ring}-b`);
    await readUntil(reader, 'two live shards', (m) => m.live.length === 2);
    await released.lease.stop();
    await crashed.lease.stop({ release: false });
    await readUntil(reader, 'both dead', (m) => m.live.length === 0 && m.expiring.length === 0);
    assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner'), true);
    assert.equal(await reader.takeOver(released.name, 'k8or-shard-assigner'), true);
    const takenAt = performance.now();
    assert.equal((await coordination.readNamespacedLease({ namespace, name: crashed.name })).spec?.holderIdentity, 'k8or-shard-assigner');
    assert.deepEqual(who(await reader.read()), { live: [], expiring: [] }, 'still dead once taken, the released one too');

    const back = startShard(ring, crashed.name);
    assert.ok(!(await reader.read()).live.includes(back.name), 'not live at once');
    await readUntil(reader, 'the replica to hold its Lease again', (m) => m.live.includes(back.name));
    const waited = performance.now() - takenAt;
    assert.ok(waited >= 2000, `held its Lease again ${waited.toFixed(0)} ms after the takeover, before that record expired`);
  });

  it('holds a dead shard\'s Lease for as long as it is called again (a move longer than the Lease), and lets it expire after', async () => {
    const { ring, reader } = newRing();
    const crashed = startShard(ring, `${ring}-a`);
    await readUntil(reader, 'the shard live', (m) => m.live.includes(crashed.name));
    await crashed.lease.stop({ release: false });
    await readUntil(reader, 'the shard dead', (m) => m.live.length === 0 && m.expiring.length === 0);
    assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner'), true);
    const back = startShard(ring, crashed.name);
    // Three Lease durations (2 s each) of moves, one every 100 ms.
    const holdUntil = performance.now() + 6_000;
    let writes = 0;
    let version = (await coordination.readNamespacedLease({ namespace, name: crashed.name })).metadata?.resourceVersion;
    while (performance.now() < holdUntil) {
      assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner'), true);
      assert.equal(back.signal, undefined, 'the replica of the dead shard\'s name holds its Lease while its objects still move');
      const lease = await coordination.readNamespacedLease({ namespace, name: crashed.name });
      assert.equal(lease.spec?.holderIdentity, 'k8or-shard-assigner');
      if (lease.metadata?.resourceVersion !== version) writes++;
      version = lease.metadata?.resourceVersion;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(writes >= 3 && writes <= 30, `renewed ${writes} times in 6 s: every fifth of the Lease duration, not on every call`);
    // Once the moves stop, the takeover's last record expires and the replica holds its Lease again.
    await waitFor('the replica to hold its Lease once the moves stop', async () => back.signal !== undefined, 30_000, 50);
  });

  it('names the adopters when it takes a dead shard\'s Lease, keeps them while an adopter may work by them, and names others only once that record expired', async () => {
    const { ring, reader } = newRing();
    const crashed = startShard(ring, `${ring}-a`);
    const b = startShard(ring, `${ring}-b`);
    const c = startShard(ring, `${ring}-c`);
    await readUntil(reader, 'three live shards', (m) => m.live.length === 3);
    await crashed.lease.stop({ release: false });
    await readUntil(reader, 'the shard dead', (m) => isDeadShard(m, crashed.name) && m.live.length === 2);
    const adoptedBy = async (): Promise<string | undefined> => (await coordination.readNamespacedLease({ namespace, name: crashed.name })).metadata?.annotations?.[ADOPTED_BY_ANNOTATION];

    assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner', [c.name, b.name]), true);
    const takenAt = performance.now();
    assert.equal(await adoptedBy(), `${b.name},${c.name}`);
    const membership = await reader.read();
    const [adoption] = membership.adoptions ?? [];
    assert.deepEqual({ shard: adoption?.shard, adopters: adoption?.adopters }, { shard: crashed.name, adopters: [b.name, c.name] });
    // Two thirds of the 2 s Lease from when the reader saw the record change, never longer.
    const window = adoption!.workableUntil - takenAt;
    assert.ok(window > 0 && window <= 1334 + (performance.now() - takenAt), `an adopter may work for ${window.toFixed(0)} ms from the takeover`);

    // A reader that has not seen the record change (an adopter just started) cannot tell how old it
    // is: in effect for the leader's plans, but not workable until the next write.
    const fresh = new ShardLeaseReader({ kubeConfig, namespace, ring });
    assert.deepEqual((await fresh.read()).adoptions?.map((a) => a.workableUntil), [-Infinity]);

    // Renewed while the adoption may be in effect: the adopters never change, whoever else is live now.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 800));
      // The fresh reader reads periodically, as an adopter does.
      await fresh.read();
      assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner', [b.name]), true);
      assert.equal(await adoptedBy(), `${b.name},${c.name}`, 'the adopters changed while an adopter may still work by them');
    }
    const sentAt = performance.now();
    const [renewed] = (await fresh.read()).adoptions ?? [];
    assert.ok(renewed!.workableUntil > performance.now() && renewed!.workableUntil <= sentAt + 1334, 'workable for two thirds of the Lease from the read before the one that saw the write');
    // Left alone, the record expires: no adoption is read any more, and the next takeover names the shards live then.
    await readUntil(reader, 'the adoption over', (m) => (m.adoptions ?? []).length === 0);
    assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner', [b.name]), true);
    assert.equal(await adoptedBy(), b.name);
  });

  it('reads no adoption of a shard that holds its own Lease again', async () => {
    const { ring, reader } = newRing();
    const crashed = startShard(ring, `${ring}-a`);
    await readUntil(reader, 'the shard live', (m) => m.live.includes(crashed.name));
    await crashed.lease.stop({ release: false });
    await readUntil(reader, 'the shard dead', (m) => isDeadShard(m, crashed.name));
    assert.equal(await reader.takeOver(crashed.name, 'k8or-shard-assigner', ['someone']), true);
    assert.equal((await reader.read()).adoptions?.length, 1);
    startShard(ring, crashed.name);
    // Its Lease keeps the annotation (the shard's renewals keep what they read), but it holds it.
    const membership = await readUntil(reader, 'the shard live again', (m) => m.live.includes(crashed.name));
    assert.deepEqual(membership.adoptions ?? [], []);
  });

  it('does not take the Lease of a shard that renewed since it was read', async () => {
    const { ring, reader } = newRing();
    const a = startShard(ring, `${ring}-a`);
    await readUntil(reader, 'the shard live', (m) => m.live.includes(a.name));
    const readVersion = (await coordination.readNamespacedLease({ namespace, name: a.name })).metadata?.resourceVersion;
    await waitFor('a renewal', async () => (await coordination.readNamespacedLease({ namespace, name: a.name })).metadata?.resourceVersion !== readVersion, 30_000, 50);
    assert.equal(await reader.takeOver(a.name, 'k8or-shard-assigner'), false);
    assert.equal((await coordination.readNamespacedLease({ namespace, name: a.name })).spec?.holderIdentity, a.name);
  });

  it('never answers "no shards" when it cannot list', async () => {
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: 'gone', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'nobody' }],
      contexts: [{ name: 'gone', cluster: 'gone', user: 'nobody' }],
      currentContext: 'gone',
    });
    const reader = new ShardLeaseReader({ kubeConfig: unreachable, namespace, ring: 'x', timeoutMs: 2000 });
    await assert.rejects(reader.read());
  });

  it('a shard\'s share of the rate limits: one over the shards that may call the cloud, itself always counted', async () => {
    const { ring } = newRing();
    const shares: number[] = [];
    const fleet = new FleetShare({ kubeConfig, namespace, ring, shard: `${ring}-c`, target: { setShare: (share) => void shares.push(share) }, leaseDurationMs: 1500 });
    // before its own Lease is listed, it counts itself
    assert.equal(await fleet.refresh(), 1);
    startShard(ring, `${ring}-a`);
    const b = startShard(ring, `${ring}-b`);
    await waitFor('two others counted', async () => (await fleet.refresh()) === 3, 30_000, 100);
    assert.equal(shares.at(-1), 1 / 3);
    // one stops and releases its Lease: it has stopped calling, and stops counting at once
    await b.lease.stop();
    await waitFor('the released shard no longer counted', async () => (await fleet.refresh()) === 2, 30_000, 100);
    assert.equal(shares.at(-1), 1 / 2);

    // no answer is never fewer shards: a failed read throws and the share stays
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({ clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }], users: [{ name: 'u', token: 't' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
    const blind: number[] = [];
    const cut = new FleetShare({ kubeConfig: unreachable, namespace, ring, shard: `${ring}-c`, target: { setShare: (share) => void blind.push(share) } });
    await assert.rejects(cut.refresh());
    assert.deepEqual(blind, []);
    assert.equal(cut.shards, undefined);
  });

  it('a joining shard makes no cloud call before every other shard has lowered its share for it, however late that shard reads the Leases', async () => {
    const { ring } = newRing();
    const slowShares: number[] = [];
    startShard(ring, `${ring}-a`);
    // A reads the Leases every 4 s; the joiner would otherwise be done waiting after two of its own 200 ms periods.
    const slow = new FleetShare({ kubeConfig, namespace, ring, shard: `${ring}-a`, target: { setShare: (share) => void slowShares.push(share) }, periodMs: 4_000, leaseDurationMs: 1500 });
    await waitFor('A counting itself alone', async () => (await slow.refresh()) === 1, 30_000, 100);
    slow.start();
    startShard(ring, `${ring}-b`);
    const joiner = new FleetShare({ kubeConfig, namespace, ring, shard: `${ring}-b`, target: { setShare: () => undefined }, periodMs: 200, leaseDurationMs: 1500 });
    try {
      await joiner.settle();
      assert.equal(slowShares.at(-1), 1 / 2, 'A had lowered its share to a half before the joiner was free to call');
      assert.equal(joiner.share, 1 / 2);
      const annotations = (await coordination.readNamespacedLease({ namespace, name: `${ring}-a` })).metadata?.annotations;
      assert.equal(annotations?.['k8or.io/shards-counted'], `${ring}-a,${ring}-b`);
    } finally {
      slow.stop();
      joiner.stop();
    }
  });
});
