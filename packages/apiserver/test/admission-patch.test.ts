// A webhook's JSONPatch is applied to a copy that shares what the patch does not touch: the object
// the webhook was sent stays as it was.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatchSharing } from '../dist/admission/patch.js';

interface Bucket {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string>; moved?: Record<string, string> };
  spec: { versioning: boolean; lifecycle: Array<{ id: string; expirationDays: number }>; labels?: Record<string, string>; name?: string };
}

const bucket = (): Bucket => ({
  apiVersion: 'k8or.io/v1alpha1',
  kind: 'Bucket',
  metadata: { name: 'photos', labels: { team: 'media' }, annotations: { a: '1' } },
  spec: { versioning: true, lifecycle: [{ id: 'old', expirationDays: 30 }], labels: { team: 'media' } },
});

describe('applying a webhook JSONPatch', () => {
  it('changes the result, leaves the input as it was, and shares the untouched parts', () => {
    const input = bucket();
    const before = structuredClone(input);
    const result = applyJsonPatchSharing(input, [
      { op: 'add', path: '/metadata/labels/k8or.io~1owner', value: 'engine' },
      { op: 'add', path: '/spec/name', value: 'photos-1a2b' },
      { op: 'replace', path: '/spec/lifecycle/0/expirationDays', value: 60 },
    ]);
    assert.deepEqual(input, before);
    assert.deepEqual(result.metadata.labels, { team: 'media', 'k8or.io/owner': 'engine' });
    assert.equal(result.spec.name, 'photos-1a2b');
    assert.equal(result.spec.lifecycle[0]?.expirationDays, 60);
    assert.equal(result.metadata.annotations, input.metadata.annotations, 'an untouched object is shared, not copied');
    assert.equal(result.spec.labels, input.spec.labels);
  });

  it('copies what a move brings onto a later operation’s path', () => {
    const input = bucket();
    const result = applyJsonPatchSharing(input, [
      { op: 'move', from: '/spec/labels', path: '/metadata/moved' },
      { op: 'add', path: '/metadata/moved/extra', value: 'x' },
    ]);
    assert.deepEqual(input.spec.labels, { team: 'media' });
    assert.deepEqual(result.metadata.moved, { team: 'media', extra: 'x' });
    assert.equal(result.spec.labels, undefined);
  });

  it('refuses a path through __proto__ and a failed test, without touching the input', () => {
    const input = bucket();
    assert.throws(() => applyJsonPatchSharing(input, [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]));
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.throws(() => applyJsonPatchSharing(input, [{ op: 'test', path: '/spec/versioning', value: false }]));
    assert.deepEqual(input, bucket());
  });
});
