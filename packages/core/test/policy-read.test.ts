// The readers every policy reads objects with (the engine's, the webhook's, the assigner's).
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { field, fieldAt, stringField } from '@k8or/core';

const object = {
  metadata: { name: 'b', annotations: { 'k8or.io/external-name': 'data', empty: '' } },
  spec: { rateLimits: { s3: { requestsPerSecond: 5, nested: { a: { b: 'deep' } } } }, tags: ['x'] },
};

describe('field, fieldAt and stringField', () => {
  it('read a path of one to five keys, and of any length with fieldAt', () => {
    assert.equal(field(object, 'metadata', 'name'), 'b');
    assert.deepEqual(field(object, 'spec'), object.spec);
    assert.equal(field(object, 'spec', 'rateLimits', 's3', 'requestsPerSecond'), 5);
    assert.equal(field(object, 'spec', 'rateLimits', 's3', 'nested', 'a'), object.spec.rateLimits.s3.nested.a);
    assert.equal(fieldAt(object, ['spec', 'rateLimits', 's3', 'nested', 'a', 'b']), 'deep');
    assert.equal(fieldAt(object, []), object);
  });

  it('give undefined for a missing step, a step through a value that is not an object, or a key the object does not own', () => {
    assert.equal(field(object, 'status', 'conditions'), undefined);
    assert.equal(field(object, 'metadata', 'name', 'length'), undefined);
    assert.equal(field(object, 'spec', 'tags', '0'), undefined);
    assert.equal(field(object, 'metadata', 'toString'), undefined);
    assert.equal(field(null, 'metadata'), undefined);
    assert.equal(fieldAt(object, ['spec', 'missing', 'deeper']), undefined);
  });

  it('stringField gives a non-empty string only', () => {
    assert.equal(stringField(object, 'metadata', 'annotations', 'k8or.io/external-name'), 'data');
    assert.equal(stringField(object, 'metadata', 'annotations', 'empty'), undefined);
    assert.equal(stringField(object, 'spec', 'rateLimits', 's3', 'requestsPerSecond'), undefined);
  });

  it('take no key that may be undefined, which would end the path early', () => {
    const key = undefined as string | undefined;
    // @ts-expect-error an undefined key is refused at compile time
    assert.equal(field(object, 'metadata', key), object.metadata);
    // @ts-expect-error the same for stringField
    assert.equal(stringField(object, 'metadata', 'annotations', key), undefined);
  });
});
