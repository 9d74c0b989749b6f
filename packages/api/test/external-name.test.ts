import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { genericDefaultName, shortHash, validateGenericName, withHash } from '@k8or/api';

const objects: [string, string][] = [
  ['default', 'photos'],
  ['team-a', 'Orders_2024'],
  ['x'.repeat(63), 'y'.repeat(253)],
  ['prod', '123'],
  ['ns', 'a.b.c'],
];

describe('default-name building blocks', () => {
  it('gives a valid generic name for every object name', () => {
    for (const [namespace, name] of objects) {
      const external = genericDefaultName({ clusterId: 'c1', namespace, name });
      assert.deepEqual(validateGenericName(external), [], `${namespace}/${name} -> ${external}`);
    }
  });

  it('is unique per cluster: the same object in two clusters gets two names', () => {
    assert.notEqual(genericDefaultName({ clusterId: 'prod-eu', namespace: 'default', name: 'photos' }), genericDefaultName({ clusterId: 'prod-us', namespace: 'default', name: 'photos' }));
    assert.equal(genericDefaultName({ clusterId: 'c', namespace: 'a', name: 'photos' }), genericDefaultName({ clusterId: 'c', namespace: 'a', name: 'photos' }));
  });

  it('keeps namespaces apart that sanitise alike, and long names apart when cut', () => {
    assert.notEqual(shortHash('c', 'a-b', 'c'), shortHash('c', 'a', 'b-c'));
    const long = 'x'.repeat(100);
    const a = withHash(long, shortHash('c', 'ns', `${long}-a`), { maxLength: 63 });
    const b = withHash(long, shortHash('c', 'ns', `${long}-b`), { maxLength: 63 });
    assert.equal(a.length, 63);
    assert.notEqual(a, b);
  });
});
