// A shard SIGKILLed mid-run: three replicas of `k8or operator`, each the shard of its own name,
// keep Buckets and Tables on two ProviderConfigs Ready against the S3 fake and DynamoDB Local. A
// user edits every object; while the edits are being reconciled one replica (not the assigner) is
// killed. Its objects go to the others once its Lease expired, and they reconcile them; the trace of
// every cloud call (each names the replica and the object) shows no two replicas' calls on one
// object overlapping. bench/sharding.bench.ts runs the same flow at scale, with figures.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@k8or/core/testing';
import { missingOperator } from './support/cluster.ts';
import { busiestWindow, createObjects, editObjects, fleetObjects, leaderShard, objectStates, overlappingCalls, startFleet, type Fleet, type ObjectState } from './support/shard-fleet.ts';

const OBJECTS = 24;
const SHARDS = ['shard-0', 'shard-1', 'shard-2'];

describe('a shard killed mid-run: the others take its objects over, and no object is worked by two replicas at once', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
  let fleet: Fleet;
  const objects = fleetObjects(OBJECTS);

  before(async () => {
    fleet = await startFleet({ workers: 4 });
    for (const shard of SHARDS) await fleet.startReplica(shard);
    await createObjects(fleet.admin, objects);
  });

  after(async () => {
    await fleet?.stop();
  });

  const settled = (states: ObjectState[], live: readonly string[]) =>
    states.length === OBJECTS && states.every((s) => s.ready && s.shard !== undefined && live.includes(s.shard) && !s.draining);

  it('every object is labelled for a live shard and Ready, spread over all three', async () => {
    const states = await waitFor('every object on a shard and Ready', async () => {
      const now = await objectStates(fleet.admin);
      return settled(now, SHARDS) && new Set(now.map((s) => s.shard)).size === SHARDS.length ? now : undefined;
    }, 600_000, 1_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${fleet.output()}`);
    });
    assert.equal(states.length, OBJECTS);
  });

  it('a replica killed while it reconciles edits: its objects are relabelled and reconciled by the others', async () => {
    const leader = await waitFor('the assigner elected', () => leaderShard(fleet.admin, SHARDS), 60_000, 500);
    const before = await objectStates(fleet.admin);
    const victim = SHARDS.filter((s) => s !== leader).sort((a, b) => before.filter((o) => o.shard === b).length - before.filter((o) => o.shard === a).length)[0]!;
    const victimObjects = before.filter((o) => o.shard === victim);
    assert.ok(victimObjects.length > 0, `${victim} holds objects`);

    const editsFrom = Date.now();
    await editObjects(fleet.admin, objects, '1');
    // mid-run: the victim has started on the edits (a cloud call of its own since they were made)
    await waitFor(`${victim} calling the cloud for the edits`, () => fleet.calls().some((c) => c.caller === victim && c.sentAt >= editsFrom), 300_000, 50);
    const killedAt = Date.now();
    await fleet.kill(victim);
    const goneAt = Date.now();
    const survivors = SHARDS.filter((s) => s !== victim);

    const after = await waitFor('every object Ready for its edit on a live shard', async () => {
      const now = await objectStates(fleet.admin);
      return settled(now, survivors) ? now : undefined;
    }, 600_000, 500).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${fleet.output()}`);
    });
    const takeoverSeconds = (Date.now() - killedAt) / 1000;
    for (const object of victimObjects) {
      const now = after.find((o) => o.kind === object.kind && o.name === object.name)!;
      assert.ok(now.shard !== victim && survivors.includes(now.shard!), `${object.kind} ${object.name} moved to a live shard (${now.shard})`);
      assert.ok(now.generation > object.generation, `${object.kind} ${object.name}: the edit reached the API server`);
    }
    // the survivors called the cloud for some of the victim's objects: the edits it had not finished
    const victimResources = new Set(victimObjects.map((o) => `k8or-fleet-${o.name}`));
    const takenOver = fleet.calls().filter((c) => c.sentAt > goneAt && c.resource !== undefined && victimResources.has(c.resource));
    // A request the victim wrote just before the kill can still be read by the proxy after its exit
    // (this process reads both): such a late arrival must come before any survivor worked that object.
    for (const late of takenOver.filter((c) => c.caller === victim)) {
      const firstSurvivorCall = Math.min(...takenOver.filter((c) => c.resource === late.resource && c.caller !== victim).map((c) => c.sentAt));
      assert.ok(late.sentAt < firstSurvivorCall, `${late.resource}: a call of the killed replica (${late.operation}) reached the cloud after a survivor took the object over`);
    }
    assert.ok(takenOver.length > 0, 'the survivors reconciled the objects the victim had left');
    console.log(`${victim} (${victimObjects.length} of ${OBJECTS} objects) killed; every object Ready for its edit on the survivors ${takeoverSeconds.toFixed(1)} s later`);
  });

  it('the trace: every cloud call names its replica, and no two replicas\' calls on one object overlap', () => {
    const calls = fleet.calls();
    assert.ok(calls.length > 0);
    const anonymous = calls.filter((c) => c.caller === undefined || !SHARDS.includes(c.caller));
    assert.deepEqual(anonymous.map((c) => `${c.service} ${c.operation} ${c.resource}`), [], 'calls without a replica in their User-Agent');
    assert.deepEqual(overlappingCalls(calls), []);
  });
});

describe('the overlap checker', () => {
  const call = (caller: string, sentAt: number, answeredAt: number) => ({ operation: 'PUT /bucket?tagging', resource: 'k8or-fleet-b-0', caller, answer: '200', ok: true, sentAt, answeredAt, providerConfig: 'fleet-a' as const, service: 's3' as const });

  it('finds two replicas\' calls on one object that overlap, and passes calls one after the other', () => {
    assert.equal(overlappingCalls([call('shard-0', 100, 200), call('shard-1', 150, 250)]).length, 1);
    assert.equal(overlappingCalls([call('shard-0', 100, 200), call('shard-1', 300, 400), call('shard-0', 120, 0)]).length, 1, 'an unanswered call lasts until now');
    assert.deepEqual(overlappingCalls([call('shard-0', 100, 200), call('shard-0', 150, 250), call('shard-1', 250, 300)]), []);
  });
});

describe('the busiest window of calls', () => {
  it('counts the most arrivals within any window, and says where that window starts', () => {
    assert.deepEqual(busiestWindow([], 1000), { most: 0, from: undefined });
    assert.deepEqual(busiestWindow([5000, 100, 900, 1099, 1100, 2050], 1000), { most: 3, from: 100 });
    assert.deepEqual(busiestWindow([0, 1000, 2000], 1000), { most: 1, from: 0 }, 'a window holds what arrived before its end, not at it');
  });
});
