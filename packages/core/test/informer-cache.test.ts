import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { NAMESPACE_INDEX, ObjectCache, compactJsonCodec, objectKey, splitObjectKey } from '@k8or/core';

function configMap(namespace: string | undefined, name: string, app: string, resourceVersion = '1'): KubernetesObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name, resourceVersion, labels: { app } } };
}

describe('objectKey', () => {
  it('keys namespaced objects as namespace/name and cluster-scoped ones by name', () => {
    assert.equal(objectKey(configMap('team-a', 'photos', 'web')), 'team-a/photos');
    assert.equal(objectKey({ metadata: { name: 'default' } }), 'default');
    assert.deepEqual(splitObjectKey('team-a/photos'), { namespace: 'team-a', name: 'photos' });
    assert.deepEqual(splitObjectKey('default'), { namespace: undefined, name: 'default' });
  });

  it('is the key a compact record keeps, which a cache then stores it under', () => {
    const record = { cacheKey: 'team-a/photos', metadata: { name: 'photos', namespace: 'team-a' } };
    assert.equal(objectKey(record), 'team-a/photos');
    const cache = new ObjectCache<typeof record>();
    cache.set(record);
    assert.equal(cache.get('team-a/photos'), record);
  });
});

describe('ObjectCache without its namespace index', () => {
  it('keeps none when asked not to', () => {
    const cache = new ObjectCache<KubernetesObject>(undefined, { namespaceIndex: false });
    cache.set(configMap('team-a', 'one', 'web'));
    assert.throws(() => cache.keysByIndex(NAMESPACE_INDEX, 'team-a'), /no index named/);
    assert.deepEqual(cache.keys(), ['team-a/one']);
  });
});

const MODES = [
  { mode: 'kept as they are', make: () => new ObjectCache<KubernetesObject>() },
  { mode: 'compact', make: () => new ObjectCache<KubernetesObject>(compactJsonCodec()) },
];

for (const { mode, make } of MODES) describe(`ObjectCache (the informer indexer), objects ${mode}`, () => {
  it('finds objects by namespace out of the box', () => {
    const cache = make();
    cache.set(configMap('team-a', 'one', 'web'));
    cache.set(configMap('team-a', 'two', 'db'));
    cache.set(configMap('team-b', 'three', 'web'));
    cache.set(configMap(undefined, 'cluster-wide', 'web'));
    assert.deepEqual(cache.byIndex(NAMESPACE_INDEX, 'team-a').map(objectKey).sort(), ['team-a/one', 'team-a/two']);
    assert.deepEqual(cache.byIndex(NAMESPACE_INDEX, '').map(objectKey), ['cluster-wide']);
    assert.deepEqual(cache.byIndex(NAMESPACE_INDEX, 'nobody'), []);
  });

  it('builds a custom index over existing objects and keeps it in step with updates and deletes', () => {
    const cache = make();
    cache.set(configMap('ns', 'a', 'web'));
    cache.set(configMap('ns', 'b', 'db'));
    cache.addIndex('app', (obj) => [obj.metadata?.labels?.app ?? '']);
    assert.deepEqual(cache.byIndex('app', 'web').map(objectKey), ['ns/a']);

    const old = cache.set(configMap('ns', 'a', 'db', '2'));
    assert.equal(old?.metadata?.resourceVersion, '1');
    assert.deepEqual(cache.byIndex('app', 'web'), []);
    assert.deepEqual(cache.byIndex('app', 'db').map(objectKey).sort(), ['ns/a', 'ns/b']);

    cache.delete('ns/b');
    assert.deepEqual(cache.byIndex('app', 'db').map(objectKey), ['ns/a']);
    assert.deepEqual(cache.keys(), ['ns/a']);
    assert.throws(() => cache.byIndex('missing', 'x'), /no index named/);
    assert.throws(() => cache.addIndex('app', () => []), /already exists/);
  });

  it('answers every index as a scan of the objects would, over a random history of sets (index values kept, changed, several) and deletes', () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const cache = make();
    // Several values per object, some shared by the values of others: a label that changes or not with each write.
    cache.addIndex('apps', (obj) => (obj.metadata?.labels?.app ?? '').split('+').filter(Boolean));
    const apps = ['web', 'db', 'web+db', 'cache', 'db+cache', ''];
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (let step = 0; step < 2_000; step++) {
      const namespace = ['ns-1', 'ns-2', undefined][random(3)];
      const name = names[random(names.length)]!;
      if (random(5) === 0) cache.delete(objectKey({ metadata: { name, ...(namespace ? { namespace } : {}) } }));
      else cache.set(configMap(namespace, name, apps[random(apps.length)]!, String(step)));
      const objects = cache.list();
      for (const app of ['web', 'db', 'cache']) {
        const scanned = objects.filter((obj) => (obj.metadata?.labels?.app ?? '').split('+').includes(app)).map(objectKey).sort();
        assert.deepEqual(cache.keysByIndex('apps', app).sort(), scanned, `step ${step}: index value ${app}`);
      }
      for (const namespace of ['ns-1', 'ns-2', '']) {
        const scanned = objects.filter((obj) => (obj.metadata?.namespace ?? '') === namespace).map(objectKey).sort();
        assert.deepEqual(cache.keysByIndex(NAMESPACE_INDEX, namespace).sort(), scanned, `step ${step}: namespace ${namespace}`);
      }
    }
  });

  it('keeps a summary of every object in step with sets and deletes, built over the objects already cached', () => {
    const cache = make();
    cache.set(configMap('ns', 'a', 'web'));
    const apps = cache.addSummary((obj) => obj.metadata?.labels?.app);
    assert.deepEqual([...apps], [['ns/a', 'web']]);
    cache.set(configMap('ns', 'b', 'db'));
    cache.set(configMap('ns', 'a', 'cache', '2'));
    assert.deepEqual(new Map(apps), new Map([['ns/a', 'cache'], ['ns/b', 'db']]));
    cache.delete('ns/a');
    assert.deepEqual([...apps], [['ns/b', 'db']]);
    assert.deepEqual(cache.keysByIndex(NAMESPACE_INDEX, 'ns'), ['ns/b']);
  });
});

describe('the compact cache', () => {
  it('gives each reader a copy of its own, equal to the object stored', () => {
    const cache = new ObjectCache<KubernetesObject>(compactJsonCodec());
    const stored = configMap('ns', 'a', 'web');
    cache.set(stored);
    const read = cache.get('ns/a');
    assert.equal(cache.copies, true);
    assert.deepStrictEqual(read, stored);
    read!.metadata!.labels!.app = 'changed by a reader';
    assert.equal(cache.get('ns/a')?.metadata?.labels?.app, 'web');
    assert.notEqual(cache.list()[0], cache.list()[0]);
    assert.equal(new ObjectCache<KubernetesObject>().copies, false);
  });

  it('keeps text beyond Latin-1 (accents, CJK, emoji, escapes) as it was', () => {
    const cache = new ObjectCache<KubernetesObject>(compactJsonCodec());
    const stored = { ...configMap('ns', 'a', 'web'), data: { note: 'Grüße, 東京 🪣 "quoted" \\ back\u0000slash', empty: '' } } as KubernetesObject;
    cache.set(stored);
    assert.deepStrictEqual(cache.get('ns/a'), stored);
  });

  it('reads the objects encoded before it learnt a newer dictionary', () => {
    const cache = new ObjectCache<KubernetesObject>(compactJsonCodec());
    const small = configMap('ns', 'small', 'web');
    cache.set(small);
    // Each much longer object becomes a newer dictionary (at most a few); the older entries stay readable.
    const bigger = Array.from({ length: 6 }, (_, i) => ({ ...configMap('ns', `big-${i}`, 'web'), data: { text: 'x'.repeat(200 * 2 ** i) } }) as KubernetesObject);
    for (const obj of bigger) cache.set(obj);
    assert.deepStrictEqual(cache.get('ns/small'), small);
    for (const obj of bigger) assert.deepStrictEqual(cache.get(objectKey(obj)), obj);
  });

  it('answers every read as the plain cache does, over a random history of sets and deletes', () => {
    const plain = new ObjectCache<KubernetesObject>();
    const compact = new ObjectCache<KubernetesObject>(compactJsonCodec());
    for (const cache of [plain, compact]) cache.addIndex('app', (obj) => [obj.metadata?.labels?.app ?? '']);
    const summaries = [plain, compact].map((cache) => cache.addSummary((obj) => obj.metadata?.resourceVersion));
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
    const apps = ['web', 'db', 'cache'];
    for (let step = 0; step < 2_000; step++) {
      const name = `o-${random(40)}`;
      const namespace = `ns-${random(3)}`;
      if (random(4) === 0) {
        assert.deepStrictEqual(compact.delete(`${namespace}/${name}`), plain.delete(`${namespace}/${name}`));
      } else {
        const obj = { ...configMap(namespace, name, apps[random(3)]!, String(step)), data: { step: String(step).repeat(random(30)) } } as KubernetesObject;
        assert.deepStrictEqual(compact.set(structuredClone(obj)), plain.set(obj));
      }
      const key = `${namespace}/${name}`;
      assert.deepStrictEqual(compact.get(key), plain.get(key));
      for (const app of apps) assert.deepStrictEqual(compact.byIndex('app', app).sort(byKey), plain.byIndex('app', app).sort(byKey));
      assert.deepStrictEqual(new Map(summaries[1]), new Map(summaries[0]));
    }
    assert.deepStrictEqual(compact.list().sort(byKey), plain.list().sort(byKey));
  });
});

function byKey(a: KubernetesObject, b: KubernetesObject): number {
  return objectKey(a).localeCompare(objectKey(b));
}

