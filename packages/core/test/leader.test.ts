import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, KubeConfig, V1MicroTime } from '@kubernetes/client-node';
import { LeaderElector } from '@k8or/core';
import { waitFor as pollUntil } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

/** Polls until `condition` holds (every 10 ms, 30 s at most). */
const waitFor = (what: string, condition: () => boolean, timeoutMs = 30_000): Promise<boolean> => pollUntil(what, condition, timeoutMs, 10);

/** One operator replica competing for the lease, recording what it was told. */
interface Candidate {
  identity: string;
  elector: LeaderElector;
  running: Promise<void>;
  startedLeading: number;
  stoppedLeading: number;
  signal: AbortSignal | undefined;
  leadersSeen: string[];
}

describe('leader election on a Lease in the sandbox', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let coordination: CoordinationV1Api;
  const namespace = 'k8or-system';
  const candidates: Candidate[] = [];
  let leaseCounter = 0;

  before(async () => {
    sandbox = await startSandbox();
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  });

  after(async () => {
    await Promise.all(candidates.map((c) => c.elector.stop({ release: false })));
    await sandbox?.stop();
  });

  /** Short durations keep failover quick; `relaxed` gives a loaded machine more slack where nothing should change. */
  function candidate(identity: string, lease: string, relaxed = false): Candidate {
    const elector = new LeaderElector({
      kubeConfig,
      namespace,
      name: lease,
      identity,
      leaseDurationMs: relaxed ? 4000 : 1500,
      renewDeadlineMs: relaxed ? 3000 : 1000,
      retryPeriodMs: relaxed ? 300 : 200,
    });
    const c: Candidate = { identity, elector, running: Promise.resolve(), startedLeading: 0, stoppedLeading: 0, signal: undefined, leadersSeen: [] };
    c.running = elector.run({
      onStartedLeading: (signal) => {
        c.startedLeading++;
        c.signal = signal;
      },
      onStoppedLeading: () => c.stoppedLeading++,
      onNewLeader: (id) => c.leadersSeen.push(id),
    });
    candidates.push(c);
    return c;
  }

  async function leaseSpec(name: string): Promise<{ holderIdentity?: string; leaseTransitions?: number; leaseDurationSeconds?: number }> {
    const lease = await coordination.readNamespacedLease({ namespace, name });
    return lease.spec ?? {};
  }

  /** Two replicas; resolves once one of them leads. */
  async function twoReplicas(relaxed = false): Promise<{ lease: string; leader: Candidate; standby: Candidate }> {
    const lease = `k8or-operator-${++leaseCounter}`;
    const a = candidate(`replica-a-${leaseCounter}`, lease, relaxed);
    const b = candidate(`replica-b-${leaseCounter}`, lease, relaxed);
    await waitFor('a leader', () => a.elector.isLeader() || b.elector.isLeader());
    return a.elector.isLeader() ? { lease, leader: a, standby: b } : { lease, leader: b, standby: a };
  }

  it('lets exactly one of two replicas lead, and both know who it is', async () => {
    const { lease, leader, standby } = await twoReplicas(true);
    // Watch both for several renewals: never two leaders, and the leader keeps renewing.
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      assert.ok(!(leader.elector.isLeader() && standby.elector.isLeader()), 'two leaders at once');
      assert.ok(leader.elector.isLeader(), 'the leader lost its lease while renewing normally');
      await sleep(25);
    }
    assert.equal(leader.startedLeading, 1);
    assert.equal(standby.startedLeading, 0);
    assert.equal((await leaseSpec(lease)).holderIdentity, leader.identity);
    assert.equal(standby.elector.getLeader(), leader.identity);
    assert.deepEqual(standby.leadersSeen, [leader.identity]);
  });

  it('fails over to the standby when the leader dies without releasing the lease', async () => {
    const { lease, leader, standby } = await twoReplicas();
    const transitionsBefore = (await leaseSpec(lease)).leaseTransitions ?? 0;

    // A crash: the leader stops renewing and leaves its record in place.
    await leader.elector.stop({ release: false });
    assert.equal(leader.signal?.aborted, true, 'the dead leader was told to stop its work');
    assert.equal((await leaseSpec(lease)).holderIdentity, leader.identity, 'the lease still names the dead leader');

    await waitFor('the standby to take over once the lease expired', () => standby.elector.isLeader());
    const spec = await leaseSpec(lease);
    assert.equal(spec.holderIdentity, standby.identity);
    assert.equal(spec.leaseTransitions, transitionsBefore + 1);
    assert.equal(standby.startedLeading, 1);
    assert.deepEqual(standby.leadersSeen, [leader.identity, standby.identity]);
  });

  it('hands over after a clean release without waiting for expiry', async () => {
    const { lease, leader, standby } = await twoReplicas();
    await leader.elector.stop();
    assert.equal(leader.stoppedLeading, 1);
    const released = await leaseSpec(lease);
    assert.ok(
      released.holderIdentity === '' || released.holderIdentity === undefined || released.holderIdentity === standby.identity,
      `the lease was released (holder: ${released.holderIdentity})`,
    );
    await leader.running;
    await waitFor('the standby to lead', () => standby.elector.isLeader());
    assert.equal((await leaseSpec(lease)).holderIdentity, standby.identity);
  });

  it('steps down, aborting its work, when it cannot renew within the deadline', async () => {
    const lease = `k8or-operator-${++leaseCounter}`;
    const solo = candidate(`replica-solo-${leaseCounter}`, lease);
    await waitFor('leadership', () => solo.elector.isLeader());

    // Someone else grabs the lease and keeps it fresh: every renewal of ours now fails.
    let intruding = true;
    const intruder = (async () => {
      while (intruding) {
        const current = await coordination.readNamespacedLease({ namespace, name: lease });
        current.spec = { ...current.spec, holderIdentity: 'intruder', renewTime: new V1MicroTime(), leaseDurationSeconds: 60 };
        await coordination.replaceNamespacedLease({ namespace, name: lease, body: current }).catch(() => undefined);
        await sleep(100);
      }
    })();
    await solo.running;
    intruding = false;
    await intruder;

    assert.equal(solo.elector.isLeader(), false);
    assert.equal(solo.signal?.aborted, true);
    assert.equal(solo.stoppedLeading, 1);
    assert.equal((await leaseSpec(lease)).holderIdentity, 'intruder');
  });
});
