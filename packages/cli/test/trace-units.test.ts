import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redact, redactText, secretNeedles } from '../src/trace/redact.ts';
import { parseTraceTarget, TraceArgumentError } from '../src/trace/target-arg.ts';
import { isCredentialRefusal, problemsOf } from '../src/trace/problems.ts';

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
  it('a delete blocked by a protection: where the protection lives decides what lets it go', () => {
    const engine = 'Deletion is blocked: the cloud resource is protected from deletion by spec.deletionProtection; k8or never removes a protection on delete, and a spec edit is not applied to an object being deleted. Turn the protection off on the cloud resource itself and k8or deletes it at its next try, or set the deletion policy Retain (annotation k8or.io/deletion-policy: Retain) to let the object go and keep the resource.';
    const todoOf = (deletionProtection: boolean, message: string, protection: { field: string; enabled: boolean; blocksDeletion?: boolean }[]): string => {
      const problems = problemsOf({
        object: { kind: 'Table', namespace: 'default', name: 'orders', annotations: {}, deleting: { since: 'now', finalizers: ['k8or.io/finalizer'] }, deletionProtection },
        conditions: [{ type: 'Synced', status: 'False', reason: 'DeletionBlocked', message }],
        cloud: { read: 'done', exists: true, protection },
        events: [],
      });
      const blocked = problems.find((p) => p.code === 'deletion-blocked');
      assert.ok(blocked, JSON.stringify(problems));
      return blocked.todo;
    };
    const held = [{ field: 'spec.deletionProtection', enabled: true, blocksDeletion: true }];
    // The spec asked for it and the cloud holds it: a spec edit no longer reaches the cloud once the object is deleting.
    const asked = todoOf(true, engine, held);
    assert.match(asked, /^spec\.deletionProtection: true asked for it, and k8or never lowers a protection while deleting/);
    assert.match(asked, /turn deletion protection off on the cloud resource yourself/);
    assert.match(asked, /kubectl annotate table\/orders -n default k8or\.io\/deletion-policy=Retain --overwrite/);
    assert.doesNotMatch(asked, /kubectl patch/);
    // Set in the cloud by someone else: turn it off there.
    const outside = todoOf(false, engine, held);
    assert.match(outside, /^the protection \(spec\.deletionProtection\) was set outside k8or: turn it off on the cloud resource/);
    assert.doesNotMatch(outside, /kubectl patch/);
    // No protection in the cloud (an Azure table): k8or enforces the spec's own at each try, so lowering the spec lets it go.
    const azure = todoOf(true, 'Deletion is blocked: Azure table "orders" has spec.deletionProtection: true; set it to false to delete the table, or use deletionPolicy: Retain to keep it', []);
    assert.match(azure, /^set spec\.deletionProtection: false \(kubectl patch table\/orders -n default --type merge/);
    // Only k8or's record of its create to go on (an Azure table made through a SAS): Retain, or delete it yourself.
    const unproven = todoOf(false, 'Deletion is blocked: k8or created Table "orders" through credentials that could give it no identity, and its cloud keeps no owner tags for it, so nothing on it shows it is still the one k8or created: someone may have deleted it and made another under the name. k8or never deletes a resource on its own record alone. Set spec.deletionPolicy: Retain to let this object go.', []);
    assert.match(unproven, /^nothing proves the resource under the name is still the one k8or created.*k8or\.io\/deletion-policy=Retain/);
  });

  it('Delete refused where the credentials can give the resource no identity: Retain, or other credentials', () => {
    const problems = problemsOf({
      object: { kind: 'Table', namespace: 'default', name: 'orders', annotations: {}, deletionProtection: false },
      providerConfig: { name: 'azure-sas', chosenBy: 'spec', found: true, provider: 'azure' },
      conditions: [{ type: 'Synced', status: 'False', reason: 'IdentityUnavailable', message: 'spec.deletionPolicy: Delete is refused for this Table (rule deletion-policy.needs-evidence): ...' }],
      events: [],
    });
    const refused = problems.find((p) => p.code === 'identity-unavailable');
    assert.ok(refused, JSON.stringify(problems));
    assert.match(refused.todo, /"deletionPolicy":"Retain"/);
    assert.match(refused.todo, /ProviderConfig "azure-sas"/);
  });
});
