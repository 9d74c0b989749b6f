import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CLOUD_PROVIDERS, MANAGED_KINDS, NAME_VALIDATORS, defaultExternalName } from '@k8or/api';

const objects: [string, string][] = [
  ['default', 'photos'],
  ['team-a', 'Orders_2024'],
  ['x'.repeat(63), 'y'.repeat(253)],
  ['prod', '123'],
  ['ns', 'a.b.c'],
];

describe('defaultExternalName', () => {
  for (const kind of MANAGED_KINDS) {
    for (const provider of CLOUD_PROVIDERS) {
      it(`gives a valid ${provider} ${kind} name for every object name`, () => {
        for (const [namespace, name] of objects) {
          const external = defaultExternalName(kind, provider, namespace, name);
          assert.deepEqual(NAME_VALIDATORS[kind][provider](external), [], `${namespace}/${name} -> ${external}`);
        }
      });
    }
  }

  it('is deterministic and keeps namespaces apart', () => {
    assert.equal(defaultExternalName('Bucket', 'aws', 'a', 'photos'), defaultExternalName('Bucket', 'aws', 'a', 'photos'));
    assert.notEqual(defaultExternalName('Bucket', 'aws', 'a-b', 'c'), defaultExternalName('Bucket', 'aws', 'a', 'b-c'));
  });
});
