import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { admit, contextFromManifests, staticContext, validateObject, type AdmissionContext } from '@k8or/webhook';
import { reviewOf } from './helpers/reviews.ts';
import { aws, bucket, namespace, providerConfig, table, TEST_CLUSTER_ID } from './helpers/fixtures.ts';

const RULE = 'cloud-resource.one-object';

/** Two regions of one cloud, and a Table or two already in the cluster. */
function world(resources: unknown[]): AdmissionContext {
  return staticContext({
    clusterId: TEST_CLUSTER_ID,
    providers: [aws],
    providerConfigs: [providerConfig('default', { provider: 'aws', region: 'us-east-1' }), providerConfig('staging', { provider: 'aws', region: 'eu-west-1' })],
    namespaces: [namespace('apps'), namespace('shop'), namespace('team-a', { 'k8or.io/provider-config': 'staging' })],
    resources,
  });
}

const orders = table('shop', 'orders', { name: 'orders', providerConfigRef: { name: 'default' } }, { creationTimestamp: '2026-01-01T00:00:00Z' });

describe('one object per cloud resource: the rule, offline', () => {
  it('names the object that already names the resource, the target, the field and the rule', () => {
    const { violations } = validateObject(table('apps', 'copy', { name: 'orders' }), world([orders]));
    assert.deepEqual(
      violations.map((v) => [v.field, v.rule]),
      [['spec.name', RULE]],
    );
    assert.equal(
      violations[0]?.message,
      'Table shop/orders already names the Table "orders" in aws (region=us-east-1): one object per cloud resource (either object would manage it, and could delete it under the other); choose another name, or manage it through Table shop/orders',
    );
  });

  it('lists the others oldest first, and says when the first is being deleted', () => {
    const younger = table('apps', 'younger', { name: 'orders' }, { creationTimestamp: '2026-02-01T00:00:00Z' });
    const leaving = { ...orders, metadata: { ...(orders.metadata as object), deletionTimestamp: '2026-03-01T00:00:00Z' } };
    const [violation] = validateObject(table('apps', 'third', { name: 'orders' }), world([younger, leaving])).violations;
    assert.match(violation?.message ?? '', /^Table shop\/orders, Table apps\/younger already name the Table "orders" .*\(Table shop\/orders is being deleted: apply again once it is gone\)/);
  });

  it('is not fooled by kind, target or itself, and counts the annotation and the default name', () => {
    const context = world([orders, table('apps', 'ledger', {})]);
    assert.deepEqual(validateObject(bucket('apps', 'orders-bucket', { name: 'orders' }), context).violations, [], 'a Bucket is another resource');
    assert.deepEqual(validateObject(table('apps', 'eu', { name: 'orders', providerConfigRef: { name: 'staging' } }), context).violations, [], 'another region is another resource');
    assert.deepEqual(validateObject(table('team-a', 'eu', { name: 'orders' }), context).violations, [], 'the namespace default ProviderConfig counts');
    assert.deepEqual(validateObject(orders, context).violations, [], 'an object never collides with itself');
    const annotated = validateObject(table('apps', 'annotated', {}, { annotations: { 'k8or.io/external-name': 'orders' } }), context).violations;
    assert.deepEqual(annotated.map((v) => [v.field, v.rule]), [['metadata.annotations[k8or.io/external-name]', RULE]]);
    const ledgerName = (aws.naming?.Table?.defaultName({ clusterId: TEST_CLUSTER_ID, namespace: 'apps', name: 'ledger' })) ?? '';
    const defaulted = validateObject(table('shop', 'ledger-copy', { name: ledgerName }), context).violations;
    assert.match(defaulted[0]?.message ?? '', /^Table apps\/ledger already names/);
  });

  it('a move to another ProviderConfig that lands on a named resource is denied; an object that already collided can still be edited', () => {
    const eu = table('apps', 'eu', { name: 'orders', providerConfigRef: { name: 'staging' } });
    const context = world([orders, eu]);
    const moved = validateObject(table('apps', 'eu', { name: 'orders', providerConfigRef: { name: 'default' } }), context, { operation: 'UPDATE', oldObject: eu });
    assert.deepEqual(moved.violations.map((v) => v.rule), [RULE]);
    const twin = table('apps', 'twin', { name: 'orders' });
    const edited = validateObject(table('apps', 'twin', { name: 'orders', pointInTimeRecovery: true }), world([orders, twin]), { operation: 'UPDATE', oldObject: twin });
    assert.deepEqual(edited.violations, [], 'ratcheting: the stored object already broke the rule');
  });

  it('a ProviderConfig may not point where its objects would collide; pointing away from created resources is warned about', () => {
    const eu = table('apps', 'eu', { name: 'orders', providerConfigRef: { name: 'staging' } });
    const created = table('apps', 'made', { name: 'made-here', providerConfigRef: { name: 'staging' } }, { annotations: { 'k8or.io/create-succeeded': '2026-01-01T00:00:00Z' } });
    const staging = providerConfig('staging', { provider: 'aws', region: 'eu-west-1' });
    const retargeted = providerConfig('staging', { provider: 'aws', region: 'us-east-1' });
    const review = admit(reviewOf('UPDATE', retargeted, staging), world([orders, eu, created]));
    assert.equal(review.response?.allowed, false);
    const causes = review.response?.status?.details?.causes ?? [];
    assert.deepEqual(causes.map((c) => [c.field, c.reason]), [['spec', RULE]]);
    assert.match(causes[0]?.message ?? '', /^Table apps\/eu would name the Table "orders" in aws \(region=us-east-1\), which Table shop\/orders already names: one object per cloud resource/);
    assert.deepEqual(review.response?.warnings, [
      'ProviderConfig "staging" now points elsewhere for Table apps/made, which may have created its resource in aws (region=eu-west-1): the target of a created resource is pinned, so the operator stops it with a condition rather than follow; to manage resources in the new place, use another ProviderConfig for new objects',
    ]);
    // Without the collision, the move is admitted with the warning.
    const moved = admit(reviewOf('UPDATE', providerConfig('staging', { provider: 'aws', region: 'ap-south-1' }), staging), world([orders, eu, created]));
    assert.equal(moved.response?.allowed, true);
    assert.equal(moved.response?.warnings?.length, 1);
    // Credentials and rate limits are not the target: nothing to say.
    const rotated = providerConfig('staging', { provider: 'aws', region: 'eu-west-1', credentials: { source: 'Environment' }, rateLimits: {} });
    const kept = admit(reviewOf('UPDATE', rotated, staging), world([orders, eu, created])).response;
    assert.equal(kept?.allowed, true);
    assert.equal(kept?.warnings, undefined);
    // A ProviderConfig that lost its spec is refused for that, not by a crash of this check.
    const broken = admit(reviewOf('UPDATE', { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'staging' } }, staging), world([orders, eu, created])).response;
    assert.ok(broken?.status?.details?.causes.some((c) => c.reason === 'schema.object'), JSON.stringify(broken));
  });

  it('k8or validate -f: two objects of the files naming one resource are both reported', () => {
    const files = [providerConfig('default', { provider: 'aws', region: 'us-east-1' }), table('apps', 'a', { name: 'orders' }), table('apps', 'b', { name: 'orders' })];
    const context = contextFromManifests(files, { providers: [aws], clusterId: TEST_CLUSTER_ID });
    assert.match(validateObject(files[1], context).violations[0]?.message ?? '', /^Table apps\/b already names/);
    assert.match(validateObject(files[2], context).violations[0]?.message ?? '', /^Table apps\/a already names/);
  });
});
