import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { API_VERSION, type Bucket } from '@k8or/api';
import {
  MAX_EVENT_MESSAGE_BYTES,
  changesOfCreate,
  changesOfDiff,
  changesOfRelease,
  redactChanges,
  secretNeedles,
  writeEventMessage,
} from '@k8or/core';

const bucket: Bucket = {
  apiVersion: API_VERSION,
  kind: 'Bucket',
  metadata: { name: 'photos', namespace: 'media' },
  spec: { name: 'media-photos', versioning: true, labels: { team: 'media' }, deletionPolicy: 'Retain', driftPolicy: { default: 'Hold' }, providerConfigRef: { name: 'default' } },
};

describe('the record of a cloud write', () => {
  it('an update writes each field from the cloud value to the spec value; unset stays unset', () => {
    const changes = changesOfDiff([
      { field: 'spec.versioning', desired: true, actual: false },
      { field: 'spec.labels.team', desired: undefined, actual: 'ops' },
      { field: 'ownerTags.k8or.io/managed-by', desired: 'k8or', actual: undefined },
    ]);
    assert.deepEqual(changes, [
      { field: 'spec.versioning', from: false, to: true },
      { field: 'spec.labels.team', from: 'ops' },
      { field: 'ownerTags.k8or.io/managed-by', to: 'k8or' },
    ]);
    assert.equal(
      writeEventMessage('Repaired drift in Bucket "media-photos"', changes),
      'Repaired drift in Bucket "media-photos": spec.versioning: false -> true, spec.labels.team: "ops" -> unset, ownerTags.k8or.io/managed-by: unset -> "k8or".',
    );
  });

  it("a create writes the spec's cloud settings and the owner tags, never k8or's own instructions", () => {
    const changes = changesOfCreate(bucket, { 'k8or.io/managed-by': 'k8or' });
    assert.deepEqual(changes, [
      { field: 'spec.labels', to: { team: 'media' } },
      { field: 'spec.versioning', to: true },
      { field: 'ownerTags.k8or.io/managed-by', to: 'k8or' },
    ]);
    assert.deepEqual(
      changesOfCreate(bucket, undefined).map((c) => c.field),
      ['spec.labels', 'spec.versioning'],
      'a kind without tags: no owner tags written',
    );
  });

  it('a release removes the owner tags the resource carried', () => {
    assert.deepEqual(changesOfRelease({ 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'photos', team: 'media' }, { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'photos', 'k8or.io/uid': 'u' }), [
      { field: 'ownerTags.k8or.io/managed-by', from: 'k8or' },
      { field: 'ownerTags.k8or.io/name', from: 'photos' },
    ]);
  });

  it('values compare and print as values: key order makes no difference', () => {
    const a = writeEventMessage('Updated', changesOfDiff([{ field: 'spec.labels', desired: { b: '2', a: '1' }, actual: {} }]));
    const b = writeEventMessage('Updated', changesOfDiff([{ field: 'spec.labels', desired: { a: '1', b: '2' }, actual: {} }]));
    assert.equal(a, b);
    assert.equal(a, 'Updated: spec.labels: {} -> {"a":"1","b":"2"}.');
  });

  it('an Event stays under the message limit: long values are cut with the count left out, extra fields counted', () => {
    const long = 'x'.repeat(500);
    const one = writeEventMessage('Updated', changesOfDiff([{ field: 'spec.labels.note', desired: long, actual: 'short' }]));
    assert.match(one, /spec\.labels\.note: "short" -> "x{79}\.\.\. \(422 more chars\)\./);

    const many = changesOfDiff(Array.from({ length: 40 }, (_, i) => ({ field: `spec.labels.key${i}`, desired: long, actual: `old-${i}` })));
    const message = writeEventMessage('Repaired drift in Bucket "media-photos"', many);
    assert.ok(Buffer.byteLength(message) <= MAX_EVENT_MESSAGE_BYTES, `${Buffer.byteLength(message)} bytes`);
    const shown = [...message.matchAll(/spec\.labels\.key\d+:/g)].length;
    assert.ok(shown >= 3, `${shown} fields shown`);
    assert.match(message, new RegExp(`, and ${40 - shown} more fields\\.$`));
  });

  it('never holds a credential, a signed query string or a value under a sensitive key', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const changes = redactChanges(
      [
        { field: 'spec.labels.copied', to: `key=${secret}` },
        { field: 'spec.labels.link', from: 'https://acct.blob.core.windows.net/c?sv=2024&sig=abc123', to: 'https://user:pw@example.com/path?X-Amz-Signature=f00#frag' },
        { field: 'spec.encryption', from: { password: 'hunter22', kmsKeyId: 'alias/k' }, to: { kmsKeyId: 'alias/k' } },
      ],
      secretNeedles([secret]),
    );
    assert.deepEqual(changes, [
      { field: 'spec.labels.copied', to: 'key=***' },
      { field: 'spec.labels.link', from: 'https://acct.blob.core.windows.net/c', to: 'https://example.com/path' },
      { field: 'spec.encryption', from: { password: '[Redacted]', kmsKeyId: 'alias/k' }, to: { kmsKeyId: 'alias/k' } },
    ]);
    const message = writeEventMessage('Updated', changes);
    for (const needle of [secret, 'sig=', 'X-Amz-Signature', 'hunter22', 'pw@']) assert.ok(!message.includes(needle), `${needle} in ${message}`);
  });
});
