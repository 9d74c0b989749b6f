import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { NAMESPACE_INDEX, ObjectCache, objectKey, splitObjectKey } from '@k8or/core';

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
});

describe('ObjectCache (the informer indexer)', () => {
  it('finds objects by namespace out of the box', () => {
    const cache = new ObjectCache<KubernetesObject>();
    cache.set(configMap('team-a', 'one', 'web'));
    cache.set(configMap('team-a', 'two', 'db'));
    cache.set(configMap('team-b', 'three', 'web'));
    cache.set(configMap(undefined, 'cluster-wide', 'web'));
    assert.deepEqual(cache.byIndex(NAMESPACE_INDEX, 'team-a').map(objectKey).sort(), ['team-a/one', 'team-a/two']);
    assert.deepEqual(cache.byIndex(NAMESPACE_INDEX, '').map(objectKey), ['cluster-wide']);
    assert.deepEqual(cache.byIndex(NAMESPACE_INDEX, 'nobody'), []);
  });

  it('builds a custom index over existing objects and keeps it in step with updates and deletes', () => {
    const cache = new ObjectCache<KubernetesObject>();
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
});
