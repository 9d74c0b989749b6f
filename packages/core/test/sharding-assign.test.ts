import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Bucket, ProviderConfig } from '@k8or/api';
import { HashRing, StringPool, assignShard, hashRingOf, ringHash, drainLabel, shardKeyOf, shardKeySourceOf, shardLabel, shardRecordOf, type ShardKeySource } from '@k8or/core';
import { cloudResourceKey } from '@k8or/core/policy';
import { InMemoryCloud, inMemoryProviderPlugin } from '@k8or/core/testing';

/** `count` Buckets spread over a few namespaces and ProviderConfig targets, each naming its own cloud resource. */
function buckets(count: number): ShardKeySource[] {
  return Array.from({ length: count }, (_, i) => ({
    kind: 'Bucket' as const,
    namespace: `team-${i % 7}`,
    name: `bucket-${i}`,
    cloudResourceKey: cloudResourceKey({ provider: 'aws', region: i % 2 ? 'eu-west-1' : 'us-east-1', endpoint: '' }, 'Bucket', `data-${i}`),
  }));
}

function assignAll(ring: HashRing, objects: readonly ShardKeySource[]): string[] {
  return objects.map((object) => assignShard(ring, object) ?? '');
}

function moved(before: readonly string[], after: readonly string[]): number {
  return before.filter((shard, i) => shard !== after[i]).length;
}

const shardNames = (n: number): string[] => Array.from({ length: n }, (_, i) => `k8or-7d9f8-${String.fromCharCode(97 + i)}x${i}`);

describe('shard assignment by consistent hashing', () => {
  const objects = buckets(3000);

  it('spreads objects evenly: no shard far above its fair share', () => {
    for (const n of [2, 3, 5]) {
      const counts = new Map<string, number>();
      for (const shard of assignAll(new HashRing(shardNames(n)), objects)) counts.set(shard, (counts.get(shard) ?? 0) + 1);
      assert.equal(counts.size, n, `every one of ${n} shards gets objects`);
      const fair = objects.length / n;
      const largest = Math.max(...counts.values()) / fair;
      const smallest = Math.min(...counts.values()) / fair;
      console.log(`${n} shards: largest ${largest.toFixed(2)}x, smallest ${smallest.toFixed(2)}x the fair share`);
      assert.ok(largest < 1.3 && smallest > 0.7, `${n} shards: ${[...counts.values()].join(', ')}`);
    }
  });

  it('moves about the ideal share of objects going from 3 to 5 shards and back', () => {
    const three = assignAll(new HashRing(shardNames(3)), objects);
    const five = assignAll(new HashRing(shardNames(5)), objects);
    const backToThree = assignAll(new HashRing(shardNames(3)), objects);
    assert.deepEqual(backToThree, three, 'the same live shards give the same assignment');
    // Growing from 3 to 5, the 2 new shards should take their 2/5; shrinking back gives those 2/5 back.
    const ideal = 2 / 5;
    const up = moved(three, five) / objects.length;
    const down = moved(five, backToThree) / objects.length;
    console.log(`3 -> 5 shards: ${(up * 100).toFixed(1)} % moved (ideal ${(ideal * 100).toFixed(0)} %, ratio ${(up / ideal).toFixed(2)})`);
    console.log(`5 -> 3 shards: ${(down * 100).toFixed(1)} % moved (ideal ${(ideal * 100).toFixed(0)} %, ratio ${(down / ideal).toFixed(2)})`);
    assert.ok(up / ideal < 1.25 && up / ideal > 0.75, `3 -> 5 moved ${up}`);
    assert.ok(down / ideal < 1.25 && down / ideal > 0.75, `5 -> 3 moved ${down}`);
    // Only objects of the shards that left move when shrinking: the others stay where they were.
    const kept = new Set(shardNames(3));
    five.forEach((shard, i) => {
      if (kept.has(shard)) assert.equal(backToThree[i], shard, 'an object on a remaining shard stays there');
    });
  });

  it('puts every object that names one cloud resource on one shard', () => {
    const ring = new HashRing(shardNames(5));
    const target = { provider: 'gcp', project: 'acme', endpoint: '' };
    for (let i = 0; i < 200; i++) {
      const key = cloudResourceKey(target, 'Table', `orders-${i}`);
      const claimants = ['default', 'team-a', 'team-b'].map((namespace, j) => ({ kind: 'Table' as const, namespace, name: `orders-copy-${i}-${j}`, cloudResourceKey: key }));
      const shards = new Set(claimants.map((claimant) => assignShard(ring, claimant)));
      assert.equal(shards.size, 1, `the claimants of ${key} are on ${[...shards].join(', ')}`);
    }
  });

  it('falls back to the object itself when its cloud resource is not known', () => {
    assert.equal(shardKeyOf({ kind: 'Bucket', namespace: 'a', name: 'b' }), 'object:Bucket/a/b');
    assert.notEqual(shardKeyOf({ kind: 'Bucket', namespace: 'a', name: 'b' }), shardKeyOf({ kind: 'Table', namespace: 'a', name: 'b' }));
    assert.equal(shardKeyOf({ kind: 'Bucket', namespace: 'a', name: 'b', cloudResourceKey: 'region=x/Bucket/n' }), 'resource:region=x/Bucket/n');
  });

  it('depends on the set of shards only, not their order; an empty ring assigns nothing', () => {
    const names = shardNames(4);
    const a = new HashRing(names);
    const b = new HashRing([...names].reverse().concat(names[0]!));
    assert.deepEqual(assignAll(a, objects.slice(0, 500)), assignAll(b, objects.slice(0, 500)));
    assert.equal(new HashRing([]).shardFor('anything'), undefined);
    assert.throws(() => new HashRing(['']), RangeError);
  });

  it('places every key where it always has: the first 48 bits of the SHA-256 of its UTF-8 (a change would move every object of a fleet on upgrade)', () => {
    const keys = [...objects.slice(0, 200).map((object) => `resource:${object.cloudResourceKey}`), 'object:Bucket/team-ü/ßucket-名前', '', 'k8or-7d9f8-ax0#99'];
    for (const key of keys) assert.equal(ringHash(key), createHash('sha256').update(key, 'utf8').digest().readUIntBE(0, 6), key);
    assert.equal(ringHash('object:Bucket/team-a/data'), 0x62748aef4f92);
  });

  it('hands out one ring per set of shard names, whatever their order', () => {
    const names = shardNames(3);
    assert.equal(hashRingOf(names), hashRingOf([...names].reverse()));
    assert.notEqual(hashRingOf(names), hashRingOf(shardNames(4)));
    assert.deepEqual(assignAll(hashRingOf(names), objects), assignAll(new HashRing(names), objects));
  });
});

describe('the hash key of a Bucket or Table', () => {
  const providerConfigs = new Map([
    ['default', { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'eu-west-1' } }],
    ['same-account', { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'same-account' }, spec: { provider: 'aws', region: 'eu-west-1' } }],
  ] as const);
  const context = {
    namespace: (name: string) => (name === 'team-b' ? { metadata: { name, annotations: { 'k8or.io/provider-config': 'same-account' } } } : { metadata: { name } }),
    providerConfig: (name: string) => providerConfigs.get(name as 'default') as unknown as ProviderConfig | undefined,
    providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]),
    clusterId: 'test-cluster',
  };
  const bucket = (namespace: string, name: string, spec: Record<string, unknown>): Bucket =>
    ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { namespace, name }, spec }) as unknown as Bucket;

  it('is the cloud resource: objects naming it through different ProviderConfigs share it', () => {
    const a = shardKeySourceOf('Bucket', bucket('team-a', 'x', { name: 'shared-data' }), context);
    const b = shardKeySourceOf('Bucket', bucket('team-b', 'y', { name: 'shared-data' }), context);
    assert.ok(a.cloudResourceKey?.includes('shared-data'), a.cloudResourceKey);
    assert.equal(shardKeyOf(a), shardKeyOf(b));
    assert.notEqual(shardKeyOf(a), shardKeyOf(shardKeySourceOf('Bucket', bucket('team-a', 'z', { name: 'other-data' }), context)));
  });

  it('is the object itself while its cloud resource cannot be known', () => {
    const missing = shardKeySourceOf('Bucket', bucket('team-a', 'x', { name: 'd', providerConfigRef: { name: 'nowhere' } }), context);
    assert.equal(missing.cloudResourceKey, undefined);
    assert.equal(shardKeyOf(missing), 'object:Bucket/team-a/x');
  });

  it('is the same from the assigner\'s record of an object as from the object, whatever names it', () => {
    const pool = new StringPool();
    const specs: Record<string, unknown>[] = [{ name: 'given' }, { name: '' }, {}, { providerConfigRef: { name: 'same-account' } }, { name: 'given', providerConfigRef: { name: 'nowhere' } }];
    const annotationSets: (Record<string, string> | undefined)[] = [undefined, { 'k8or.io/external-name': 'annotated' }, { other: 'x' }];
    let compared = 0;
    for (const namespace of ['team-a', 'team-b']) {
      for (const spec of specs) {
        for (const annotations of annotationSets) {
          for (const uid of [undefined, '4b1c7f0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f']) {
            const object = { ...bucket(namespace, 'x', spec), metadata: { namespace, name: 'x', ...(uid ? { uid } : {}), ...(annotations ? { annotations } : {}) } };
            const record = shardRecordOf('Bucket', object, pool);
            assert.deepEqual(shardKeySourceOf('Bucket', record.keyObject(), context), shardKeySourceOf('Bucket', object, context), JSON.stringify(object));
            compared++;
          }
        }
      }
    }
    assert.equal(compared, 60);
  });

  it('is read from records that share their repeated strings and change only with what a plan reads', () => {
    const pool = new StringPool();
    const labelled = (resourceVersion: string, labels: Record<string, string>) =>
      ({ ...bucket('team-a', 'x', { name: 'given' }), metadata: { namespace: 'team-a', name: 'x', resourceVersion, labels: { team: 'data', ...labels } } });
    const a = shardRecordOf('Bucket', labelled('1', { [shardLabel('Bucket')]: 'shard-0' }), pool);
    const statusWrite = shardRecordOf('Bucket', labelled('2', { [shardLabel('Bucket')]: 'shard-0' }), pool);
    const userLabel = shardRecordOf('Bucket', labelled('3', { [shardLabel('Bucket')]: 'shard-0', team: 'other' }), pool);
    const draining = shardRecordOf('Bucket', labelled('4', { [shardLabel('Bucket')]: 'shard-0', [drainLabel('Bucket')]: 'true' }), pool);
    assert.equal(a.metadata.resourceVersion, '1');
    assert.equal(a.metadata.name, 'x');
    assert.equal(a.cacheKey, 'team-a/x', 'the key a cache keeps it under (objectKey)');
    // a resourceVersion is kept as a number only where that gives it back exactly
    for (const version of ['0', '12', '9007199254740991', '9007199254740993', '012', '1e3', ' 7', 'opaque-1']) {
      assert.equal(shardRecordOf('Bucket', labelled(version, {}), pool).metadata.resourceVersion, version);
    }
    const asked: string[] = [];
    const update = shardRecordOf('Bucket', labelled('6', {}), pool, (key) => (asked.push(key), a.cacheKey));
    assert.deepEqual(asked, ['team-a/x'], 'a record made for an update asks for the key the cache keeps');
    assert.equal(update.cacheKey, a.cacheKey);
    assert.equal(update.name, 'x');
    assert.ok(a.samePlanInputs(statusWrite) && a.samePlanInputs(userLabel), 'a status write or a user\'s label is no change to plan from');
    assert.ok(!a.samePlanInputs(draining));
    assert.equal(draining.shard, 'shard-0');
    assert.equal(draining.draining, true);
    assert.equal(shardRecordOf('Table', labelled('5', { [shardLabel('Bucket')]: 'shard-0' }), pool).shard, undefined, 'a Table reads the Table label');
    assert.throws(() => a.keyHash, /not computed/);
    let computed = 0;
    assert.equal(a.keyHashAt(1, () => ++computed), 1);
    assert.equal(a.keyHashAt(1, () => ++computed), 1, 'kept for the same context version');
    assert.equal(a.keyHashAt(2, () => ++computed), 2, 'computed again when a Namespace or ProviderConfig changed');
    assert.equal(a.keyHash, 2);
  });
});
