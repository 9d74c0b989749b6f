import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redact, redactText, secretNeedles } from '../src/trace/redact.ts';
import { parseTraceTarget, TraceArgumentError } from '../src/trace/target-arg.ts';
import { isCredentialRefusal } from '../src/trace/problems.ts';

describe('k8or trace: what it may print', () => {
  it('a URL keeps scheme, host, port and path: no user info, query string (SAS, signatures) or fragment', () => {
    assert.equal(
      redactText('GET https://acct.blob.core.windows.net/c/b?sv=2024-01-01&sig=abc%2F123&se=2030 failed', []),
      'GET https://acct.blob.core.windows.net/c/b failed',
    );
    assert.equal(redactText('endpoint http://user:pass@127.0.0.1:9000/bucket#frag', []), 'endpoint http://127.0.0.1:9000/bucket');
    assert.equal(redactText('plain http://127.0.0.1:9000/devstoreaccount1', []), 'plain http://127.0.0.1:9000/devstoreaccount1');
  });

  it('a credential value never shows, nor any string inside a JSON key file; short values do not blot out words', () => {
    const keyFile = JSON.stringify({ type: 'service_account', private_key: '-----BEGIN PRIVATE KEY-----\nMIIEabc\n-----END PRIVATE KEY-----\n', client_email: 'svc@p.iam.gserviceaccount.com' });
    const needles = secretNeedles(['sandbox-secret-access-key', keyFile, 'us']);
    const report = redact({ message: 'denied for svc@p.iam.gserviceaccount.com using sandbox-secret-access-key', nested: [{ us: 'us-east-1' }] }, needles);
    assert.deepEqual(report, { message: 'denied for *** using ***', nested: [{ us: 'us-east-1' }] });
    assert.ok(needles.includes('-----BEGIN PRIVATE KEY-----\nMIIEabc\n-----END PRIVATE KEY-----\n'));
  });

  it('KIND/NAME as kubectl spells it', () => {
    for (const words of [['bucket/photos'], ['buckets/photos'], ['bkt/photos'], ['Bucket', 'photos'], ['bucket.k8or.io/photos'], ['buckets.k8or.io', 'photos']]) {
      assert.deepEqual(parseTraceTarget(words), { kind: 'Bucket', name: 'photos' }, words.join(' '));
    }
    assert.deepEqual(parseTraceTarget(['tbl/orders']), { kind: 'Table', name: 'orders' });
    assert.deepEqual(parseTraceTarget(['pc', 'default']), { kind: 'ProviderConfig', name: 'default' });
    for (const words of [['pod/x'], ['bucket'], ['bucket/'], ['bucket/a', 'b'], ['bucket', 'a', 'b'], ['bucket/a/b']]) {
      assert.throws(() => parseTraceTarget(words), TraceArgumentError, words.join(' '));
    }
  });

  it('a refusal of the credentials is told from other failures; a timeout or a 404 is not one', () => {
    for (const [code, message] of [['InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist'], ['AuthorizationFailure', 'Server failed to authenticate'], [undefined, '403 PERMISSION_DENIED: caller lacks storage.buckets.get']] as const) {
      assert.equal(isCredentialRefusal(code, message), true, message);
    }
    for (const [code, message] of [['TimeoutError', 'the call timed out'], ['NoSuchBucket', 'not found (404)'], ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9000']] as const) {
      assert.equal(isCredentialRefusal(code, message), false, message);
    }
  });
});
