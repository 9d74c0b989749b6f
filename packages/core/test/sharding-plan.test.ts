import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { HashRing, adoptionHash, assignShard, drainLabel, isDeadShard, planShardLabels, shardKeyHash, shardLabel, type ShardedObject, type ShardKeySource, type ShardMembership } from '@k8or/core';

const SHARD = shardLabel('Bucket');
const DRAIN = drainLabel('Bucket');

type TestObject = ShardedObject & ShardKeySource;

/** The object with these labels, as the assigner reads them. */
function withLabels(object: TestObject, labels: Record<string, string>): TestObject {
  return { ...object, shard: labels[SHARD], draining: labels[DRAIN] !== undefined };
}

function bucket(name: string, labels: Record<string, string> = {}): TestObject {
  const source: ShardKeySource = { kind: 'Bucket', namespace: 'default', name };
  return withLabels({ ...source, keyHash: shardKeyHash(source), shard: undefined, draining: false }, labels);
}

/** The first of `count` Buckets whose shard on `live` is `shard`. */
function bucketOn(live: string[], shard: string, labels: (name: string) => Record<string, string>): TestObject {
  const ring = new HashRing(live);
  for (let i = 0; ; i++) {
    const candidate = bucket(`b-${i}`);
    if (assignShard(ring, candidate) === shard) return withLabels(candidate, labels(candidate.name));
  }
}

const members = (live: string[], expiring: string[] = []): ShardMembership => ({ live, expiring });

describe('planning shard labels', () => {
  it('assigns unassigned objects to their shard on the ring of live shards', () => {
    const membership = members(['a', 'b', 'c']);
    const objects = Array.from({ length: 30 }, (_, i) => bucket(`b-${i}`));
    const changes = planShardLabels(objects, membership);
    assert.equal(changes.length, 30);
    const ring = new HashRing(membership.live);
    for (const change of changes) {
      assert.equal(change.action, 'assign');
      assert.equal(change.action === 'assign' && change.shard, assignShard(ring, change.object));
    }
    assert.equal(new Set(changes.map((c) => c.action === 'assign' && c.shard)).size, 3, 'all three shards get objects');
  });

  it('leaves objects that are on their shard alone', () => {
    const live = ['a', 'b'];
    const settled = bucketOn(live, 'a', () => ({ [SHARD]: 'a' }));
    assert.deepEqual(planShardLabels([settled], members(live)), []);
  });

  it('drains an object from a live shard that is no longer its shard, and never assigns it meanwhile', () => {
    const live = ['a', 'b'];
    // Its shard on [a, b] is b, but a holds it (a shard joined).
    const moving = bucketOn(live, 'b', () => ({ [SHARD]: 'a' }));
    assert.deepEqual(planShardLabels([moving], members(live)), [{ action: 'drain', object: moving, from: 'a', to: 'b' }]);
    // While a has not let go, nothing more happens.
    const draining = withLabels(moving, { [SHARD]: 'a', [DRAIN]: 'true' });
    assert.deepEqual(planShardLabels([draining], members(live)), []);
    // a let go (both labels removed): now b gets it.
    const released = withLabels(moving, {});
    assert.deepEqual(planShardLabels([released], members(live)), [{ action: 'assign', object: released, shard: 'b' }]);
  });

  it('moves objects off a dead shard without a Lease at once, with no handshake', () => {
    const live = ['a', 'b'];
    const orphan = bucketOn(live, 'b', () => ({ [SHARD]: 'gone' }));
    assert.deepEqual(planShardLabels([orphan], members(live)), [{ action: 'assign', object: orphan, shard: 'b', from: 'gone' }]);
    // A drain asked of a shard that then died does not wait for it.
    const drainingOrphan = withLabels(orphan, { [SHARD]: 'gone', [DRAIN]: 'true' });
    assert.deepEqual(planShardLabels([drainingOrphan], members(live)), [{ action: 'assign', object: drainingOrphan, shard: 'b', from: 'gone' }]);
  });

  it('hands a dead shard\'s objects on from the adopter that works them: at once only where that adopter is their shard, or died, or no adoption is in effect for a drained one', () => {
    const live = ['a', 'b', 'c'];
    const objects = Array.from({ length: 60 }, (_, i) => bucket(`o-${i}`, { [SHARD]: 'x', ...(i % 3 === 0 ? { [DRAIN]: 'true' } : {}) }));
    const ring = new HashRing(live);
    const adopterOn = (adopters: string[], object: TestObject) => new HashRing(adopters).shardAt(adoptionHash(object))!;
    // No adoption in effect yet: the fence's first write names the live shards, so they adopt.
    for (const change of planShardLabels(objects, { ...members(live), leased: ['x'] })) {
      const adopter = adopterOn(live, change.object);
      const desired = ring.shardAt(change.object.keyHash)!;
      if (adopter === desired || change.object.draining) assert.deepEqual(change, { action: 'assign', object: change.object, shard: desired, from: 'x' });
      else assert.deepEqual(change, { action: 'drain', object: change.object, from: adopter, to: desired });
    }
    // In effect, by a ring of a, b and d, d dead since and c new: a drained one waits for its adopter to let go.
    const inEffect: ShardMembership = { ...members(live), leased: ['x', 'd'], adoptions: [{ shard: 'x', adopters: ['a', 'b', 'd'], workableUntil: Infinity }] };
    const changes = planShardLabels(objects, inEffect);
    for (const object of objects) {
      const change = changes.find((c) => c.object === object);
      const adopter = adopterOn(['a', 'b', 'd'], object);
      const desired = ring.shardAt(object.keyHash)!;
      if (adopter === desired) assert.deepEqual(change, { action: 'assign', object, shard: desired, from: 'x' });
      else if (adopter === 'd') assert.deepEqual(change, { action: 'assign', object, shard: desired, from: 'd' });
      else if (object.draining) assert.equal(change, undefined, `${object.name} moved while ${adopter} may still work it`);
      else assert.deepEqual(change, { action: 'drain', object, from: adopter, to: desired });
    }
    // An adopter that is expiring keeps what it works.
    const expiringAdopter = planShardLabels(objects, { ...members(live, ['d']), leased: ['x', 'd'], adoptions: inEffect.adoptions! });
    for (const object of objects.filter((o) => adopterOn(['a', 'b', 'd'], o) === 'd')) assert.equal(expiringAdopter.find((c) => c.object === object), undefined);
  });

  it('never moves an adopted object away from the adopter that may be working it, over random memberships', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const names = ['a', 'b', 'c', 'd', 'e'];
    const pick = (from: string[]) => from.filter(() => random() < 0.5);
    for (let round = 0; round < 300; round++) {
      const live = pick(names);
      const expiring = pick(names.filter((n) => !live.includes(n)));
      const dead = names.filter((n) => !live.includes(n) && !expiring.includes(n));
      if (live.length === 0 || dead.length === 0) continue;
      const adopters = pick(names);
      const membership: ShardMembership = { live, expiring, leased: pick(dead), ...(adopters.length > 0 ? { adoptions: [{ shard: dead[0]!, adopters, workableUntil: Infinity }] } : {}) };
      const objects = Array.from({ length: 20 }, (_, i) => bucket(`r${round}-${i}`, { [SHARD]: dead[0]!, ...(random() < 0.3 ? { [DRAIN]: 'true' } : {}) }));
      for (const change of planShardLabels(objects, membership)) {
        if (adopters.length === 0 || change.action !== 'assign') continue;
        const adopter = new HashRing(adopters).shardAt(adoptionHash(change.object))!;
        // An adopter works an object while it is live or expiring; only a dead one has stopped.
        assert.ok(change.shard === adopter || isDeadShard(membership, adopter), `round ${round}: ${change.object.name} moved to ${change.shard} while ${adopter} may work it`);
      }
    }
  });

  it('takes nothing from an expiring shard: it may still be working', () => {
    const live = ['a', 'b'];
    const held = bucketOn(live, 'b', () => ({ [SHARD]: 'stopping' }));
    assert.deepEqual(planShardLabels([held], members(live, ['stopping'])), []);
  });

  it('cancels a drain when the object\'s shard is its own again', () => {
    const live = ['a', 'b'];
    const back = bucketOn(live, 'a', () => ({ [SHARD]: 'a', [DRAIN]: 'true' }));
    assert.deepEqual(planShardLabels([back], members(live)), [{ action: 'undrain', object: back, shard: 'a' }]);
  });

  it('changes nothing while no shard is live', () => {
    assert.deepEqual(planShardLabels([bucket('x'), bucket('y', { [SHARD]: 'gone' })], members([], ['stopping'])), []);
  });
});
