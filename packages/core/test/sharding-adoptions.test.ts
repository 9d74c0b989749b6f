import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { HashRing, ShardAdoptions, adoptionHash, shardLabel } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';

const SHARD = shardLabel('Bucket');

function bucket(name: string, shard: string): { metadata: { namespace: string; name: string; labels: Record<string, string> } } {
  return { metadata: { namespace: 'team', name, labels: { [SHARD]: shard } } };
}

/** Buckets labelled for `dead`, one falling to each of `adopters` (by `adoptionHash`). */
function onEach(dead: string, adopters: string[]): Map<string, ReturnType<typeof bucket>> {
  const ring = new HashRing(adopters);
  const found = new Map<string, ReturnType<typeof bucket>>();
  for (let i = 0; found.size < adopters.length; i++) {
    const adopter = ring.shardAt(adoptionHash({ kind: 'Bucket', namespace: 'team', name: `o-${i}` }))!;
    if (!found.has(adopter)) found.set(adopter, bucket(`o-${i}`, dead));
  }
  return found;
}

/** Each change of the sources watched beside the shard's own objects, as their label selectors. */
function adoptionsOf(self: string): { adoptions: ShardAdoptions; selectors: string[][] } {
  const selectors: string[][] = [];
  const adoptions = new ShardAdoptions({ kind: 'Bucket', self, onSourcesChange: (sources) => selectors.push(sources.map((source) => source.labelSelector)) });
  return { adoptions, selectors };
}

describe('a shard\'s adoptions of dead shards', () => {
  it('works its own objects, and a dead shard\'s that fall to it, only while the adoption is workable', () => {
    const { adoptions, selectors } = adoptionsOf('b');
    const mine = onEach('x', ['b', 'c']);
    assert.equal(adoptions.selector, `${SHARD}=b`);
    assert.ok(adoptions.works(bucket('own', 'b')));
    assert.ok(!adoptions.works(mine.get('b')!), 'nothing adopted yet');

    const now = performance.now();
    adoptions.set([{ shard: 'x', adopters: ['c', 'b'], workableUntil: now + 60_000 }], now);
    assert.deepEqual(selectors, [[`${SHARD}=x`]], 'the dead shard\'s objects watched beside its own');
    assert.equal(adoptions.selector, `${SHARD}=b`, 'its own watch unchanged');
    assert.ok(adoptions.sources[0]!.owns(mine.get('c')!), 'the source holds every object of the dead shard');
    assert.ok(!adoptions.sources[0]!.owns(bucket('own', 'b')));
    assert.ok(adoptions.works(mine.get('b')!));
    assert.ok(!adoptions.awaits(mine.get('b')!));
    assert.ok(!adoptions.works(mine.get('c')!), 'the other adopter\'s');
    assert.ok(!adoptions.works(bucket('elsewhere', 'y')), 'a shard it does not adopt');
    assert.ok(adoptions.lapseSignal(mine.get('b')!) && !adoptions.lapseSignal(mine.get('b')!)!.aborted);
    assert.equal(adoptions.lapseSignal(bucket('own', 'b')), undefined);

    // Not named as an adopter: nothing.
    const other = adoptionsOf('d');
    other.adoptions.set([{ shard: 'x', adopters: ['b', 'c'], workableUntil: now + 60_000 }], now);
    assert.deepEqual(other.selectors, []);
    adoptions.stop();
  });

  it('pauses at its deadline without a newer write (its calls abort, its objects stay watched), resumes on one, and leaves the watch once no read grants it', async () => {
    const { adoptions, selectors } = adoptionsOf('b');
    const object = onEach('x', ['b', 'c']).get('b')!;
    const theirs = onEach('x', ['b', 'c']).get('c')!;
    adoptions.set([{ shard: 'x', adopters: ['b', 'c'], workableUntil: performance.now() + 50 }]);
    const signal = adoptions.lapseSignal(object)!;
    await waitFor('the adoption paused at its deadline', () => signal.aborted, 30_000, 10);
    assert.ok(!adoptions.works(object), 'worked past its deadline');
    assert.ok(adoptions.awaits(object), 'its objects wait for the adoption to resume');
    assert.ok(!adoptions.awaits(theirs), 'not the other adopter\'s');
    assert.deepEqual(adoptions.sources.map((source) => source.labelSelector), [`${SHARD}=x`], 'still watched: a read may show a newer write');

    // A read that has not seen a newer write keeps it paused.
    adoptions.set([{ shard: 'x', adopters: ['b', 'c'], workableUntil: -Infinity }]);
    assert.ok(!adoptions.works(object));
    // One that has: worked again, with a signal of its own.
    adoptions.set([{ shard: 'x', adopters: ['b', 'c'], workableUntil: performance.now() + 60_000 }]);
    assert.ok(adoptions.works(object) && !adoptions.awaits(object));
    assert.ok(!adoptions.lapseSignal(object)!.aborted);

    // Adopters that changed are another adoption: the old one ends at once.
    const before = adoptions.lapseSignal(object)!;
    adoptions.set([{ shard: 'x', adopters: ['b', 'd'], workableUntil: performance.now() + 60_000 }]);
    assert.ok(before.aborted);
    // No longer granted: out of the watch.
    const last = adoptions.lapseSignal(object);
    adoptions.set([]);
    assert.ok(last === undefined || last.aborted);
    assert.deepEqual(adoptions.sources, []);
    assert.deepEqual(selectors, [[`${SHARD}=x`], []]);
    assert.ok(!adoptions.works(object) && !adoptions.awaits(object));
  });
});
