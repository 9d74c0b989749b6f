import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { HashRing, assignShard, drainLabel, planShardLabels, shardKeyHash, shardLabel, type ShardedObject, type ShardKeySource, type ShardMembership } from '@k8or/core';

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

  it('moves objects off a dead shard at once, with no handshake', () => {
    const live = ['a', 'b'];
    const orphan = bucketOn(live, 'b', () => ({ [SHARD]: 'gone' }));
    assert.deepEqual(planShardLabels([orphan], members(live)), [{ action: 'assign', object: orphan, shard: 'b', from: 'gone' }]);
    // A drain asked of a shard that then died does not wait for it.
    const drainingOrphan = withLabels(orphan, { [SHARD]: 'gone', [DRAIN]: 'true' });
    assert.deepEqual(planShardLabels([drainingOrphan], members(live)), [{ action: 'assign', object: drainingOrphan, shard: 'b', from: 'gone' }]);
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
