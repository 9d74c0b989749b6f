import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type Bucket, type Condition, type ProviderConfig } from '@k8or/api';
import {
  NotOwnedError,
  RetryableError,
  TerminalError,
  cloudResourceKey,
  cloudTargetFor,
  compareIdentity,
  createOutcomeOf,
  decideDeletion,
  decideOwnership,
  refuseCreate,
  mayManage,
  perObjectNameToken,
  sameCloudTarget,
  deletionPolicyFor,
  describeDiff,
  mergeConditions,
  ownershipOf,
  parseGoDuration,
  providerConfigFor,
  resyncPeriodFor,
  resyncPeriodViolation,
  statusEqual,
} from '@k8or/core';

function bucket(spec: Bucket['spec'] = {}, annotations: Record<string, string> = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media', annotations, finalizers: [FINALIZER] }, spec };
}
const namespace = (annotations: Record<string, string>) => ({ metadata: { name: 'media', annotations } });

describe('reconcile rules', () => {
  it('picks the deletion policy: resource annotation, spec, namespace annotation, operator default', () => {
    const policy = (...args: Parameters<typeof deletionPolicyFor>) => deletionPolicyFor(...args).policy;
    assert.equal(policy(bucket(), undefined, 'Delete'), 'Delete');
    assert.deepEqual(deletionPolicyFor(bucket(), namespace({ [Annotations.deletionPolicy]: 'Retain' }), 'Delete'), { policy: 'Retain', source: 'namespace-annotation' });
    assert.equal(policy(bucket({ deletionPolicy: 'Delete' }), namespace({ [Annotations.deletionPolicy]: 'Retain' }), 'Retain'), 'Delete');
    assert.deepEqual(deletionPolicyFor(bucket({ deletionPolicy: 'Delete' }, { [Annotations.deletionPolicy]: 'Retain' }), undefined, 'Delete'), { policy: 'Retain', source: 'resource-annotation' });
    assert.equal(policy(bucket({}, { [Annotations.deletionPolicy]: 'Sometimes' }), undefined, 'Retain'), 'Retain', 'an unknown value is ignored');
  });

  it('picks the ProviderConfig: spec, namespace annotation, then default', () => {
    assert.deepEqual(providerConfigFor(bucket(), undefined), { name: 'default', source: 'cluster-default' });
    assert.deepEqual(providerConfigFor(bucket(), namespace({ [Annotations.providerConfig]: 'media-aws' })), { name: 'media-aws', source: 'namespace-annotation' });
    assert.equal(providerConfigFor(bucket({ providerConfigRef: { name: 'mine' } }), namespace({ [Annotations.providerConfig]: 'media-aws' })).name, 'mine');
  });

  it('reads Go durations for k8or.io/resync-period, and never goes below the floor', () => {
    assert.equal(parseGoDuration('30s'), 30_000);
    assert.equal(parseGoDuration('5m'), 300_000);
    assert.equal(parseGoDuration('1h30m'), 5_400_000);
    assert.equal(parseGoDuration('1.5h'), 5_400_000);
    assert.equal(parseGoDuration('250ms'), 250);
    assert.equal(parseGoDuration('10'), undefined);
    assert.equal(parseGoDuration('banana'), undefined);
    assert.equal(parseGoDuration('-5m'), -300_000);
    assert.equal(parseGoDuration('0s'), 0);
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: '2m' }), 3_600_000), 120_000);
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: 'often' }), 3_600_000), 3_600_000);
    // What the API server holds does not matter: 1ns or -5m never make a hot loop.
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: '1ns' }), 3_600_000, 10_000), 10_000);
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: '-5m' }), 3_600_000, 10_000), 3_600_000);
    assert.equal(resyncPeriodFor(bucket(), 1_000, 10_000), 10_000);
  });

  it('names the rule a bad k8or.io/resync-period breaks', () => {
    assert.equal(resyncPeriodViolation('banana')?.rule, 'resync-period.format');
    assert.equal(resyncPeriodViolation('-5m')?.rule, 'resync-period.positive');
    assert.equal(resyncPeriodViolation('0s')?.rule, 'resync-period.positive');
    assert.equal(resyncPeriodViolation('1ns')?.rule, 'resync-period.floor');
    assert.match(resyncPeriodViolation('5s')?.message ?? '', /floor of 10s/);
    assert.equal(resyncPeriodViolation('10s'), undefined);
    assert.equal(resyncPeriodViolation('1h'), undefined);
  });


  it('keeps lastTransitionTime unless the status changes, and sees no change as no change', () => {
    const before: Condition[] = [{ type: 'Ready', status: 'True', reason: 'Available', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 }];
    const same = mergeConditions(before, [{ type: 'Ready', status: 'True', reason: 'Available', message: 'ok' }], 1, '2026-06-01T00:00:00Z');
    assert.deepEqual(same, before);
    assert.ok(statusEqual({ conditions: before, observedGeneration: 1 }, { conditions: same, observedGeneration: 1 }));
    const reworded = mergeConditions(before, [{ type: 'Ready', status: 'True', reason: 'Available', message: 'still ok' }], 2, '2026-06-01T00:00:00Z');
    assert.equal(reworded[0]?.lastTransitionTime, '2026-01-01T00:00:00Z');
    assert.equal(reworded[0]?.observedGeneration, 2);
    const flipped = mergeConditions(before, [{ type: 'Ready', status: 'False', reason: 'Deleting', message: 'bye' }], 2, '2026-06-01T00:00:00Z');
    assert.equal(flipped[0]?.lastTransitionTime, '2026-06-01T00:00:00Z');
    assert.equal(statusEqual({ conditions: before }, { conditions: flipped }), false);
  });

  // Replaces the test of the withdrawn rule ("create-pending or create-succeeded, no foreign owner
  // tags = ours"): ownership is proven by owner tags, the recorded identity, or a name k8or
  // generated for this object, never inferred from a marker and a missing tag.
  it('proves ownership from evidence only: owner tags, the identity recorded at creation, a generated name', () => {
    const ours = { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'photos' };
    const pending = { [Annotations.createPending]: '2026-01-01T00:00:00Z' };
    const failed = { [Annotations.createFailed]: '2026-01-01T00:00:00Z' };
    const created = { [Annotations.createSucceeded]: '2026-01-01T00:00:00Z' };
    const adopt = { [Annotations.adopt]: 'true' };
    const withIdentity = (b: Bucket, identity: Record<string, string>): Bucket => ({ ...b, status: { identity } });
    const uid = (b: Bucket): Bucket => ({ ...b, metadata: { ...b.metadata, uid: 'u-1' } });
    const generated = `media-photos-${perObjectNameToken('u-1')}`;

    assert.equal(ownershipOf(bucket(), { ownerTags: { ...ours, extra: 'x' } }, ours), 'ours', 'every owner tag');
    assert.equal(ownershipOf(bucket(), { ownerTags: { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'videos' } }, ours), 'foreign', 'another owner named');
    assert.equal(ownershipOf(bucket({}, pending), { ownerTags: { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'videos' } }, ours), 'foreign', 'another owner named, even mid-create');
    assert.equal(ownershipOf(bucket({}, adopt), { ownerTags: { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'videos' } }, ours), 'foreign', 'adopt never overrides another live owner');
    assert.equal(ownershipOf(bucket({}, adopt), { ownerTags: { 'k8or.io/name': 'videos' } }, ours), 'adopt', 'released (no managed-by): adoptable');
    assert.equal(ownershipOf(bucket({}, adopt), { ownerTags: {} }, ours), 'adopt');
    assert.equal(ownershipOf(bucket(), { ownerTags: {} }, ours), 'unproven', 'untagged and never created by us');

    // Create-pending without proof: someone else may have made it after our create failed.
    assert.equal(ownershipOf(bucket({}, pending), { ownerTags: {} }, ours), 'unproven');
    assert.equal(ownershipOf(bucket({}, pending), {}, ours), 'unproven', 'a cloud without tags');
    assert.equal(ownershipOf(bucket({}, failed), { ownerTags: {} }, ours), 'unproven', 'a refused create left nothing of ours');
    // ...unless the name is one k8or generated for this very object.
    assert.equal(ownershipOf(uid(bucket({ name: generated }, pending)), {}, ours), 'finish-create');
    assert.equal(ownershipOf(uid(bucket({ name: 'media-photos-0000beef' }, pending)), {}, ours), 'unproven', "another object's token proves nothing");

    // Created, tags gone: not ours without the identity.
    assert.equal(ownershipOf(bucket({}, created), { ownerTags: {} }, ours), 'unproven', 'created, tags gone, no identity recorded');
    assert.equal(ownershipOf(bucket({}, created), { identity: { id: 'a' } }, ours), 'unproven', 'created, a cloud without tags, an identity it reports but none recorded');
    assert.equal(ownershipOf(bucket({}, created), {}, ours), 'ours', 'created, a cloud with neither tags nor identity: the create record is all the evidence there is');
    assert.equal(ownershipOf(bucket({}, pending), {}, ours), 'unproven', 'but never for an unknown create outcome');
    assert.equal(ownershipOf(withIdentity(bucket({}, created), { id: 'a' }), { ownerTags: {}, identity: { id: 'a' } }, ours), 'ours', 'the recorded identity matches');
    assert.equal(ownershipOf(withIdentity(bucket({}, created), { id: 'a' }), { identity: { id: 'b' } }, ours), 'replaced', 'another identity: replaced');
    assert.equal(ownershipOf(withIdentity(bucket({}, { ...created, ...adopt }), { id: 'a' }), { ownerTags: {}, identity: { id: 'b' } }, ours), 'replaced', 'adopt does not override a replacement');
    assert.equal(ownershipOf(withIdentity(bucket({}, created), { id: 'a' }), { ownerTags: ours, identity: { id: 'b' } }, ours), 'ours', 'our atomic tags on a resource we made again');
    assert.equal(ownershipOf(withIdentity(bucket({}, created), { id: 'a' }), { ownerTags: {}, identity: { other: 'b' } }, ours), 'unproven', 'no shared key proves nothing');
    // A recorded identity not found (replaced by a resource without one, or credentials that cannot read it): unproven, and said so.
    const notFound = decideOwnership(withIdentity(bucket({}, created), { marker: 'k8or-id-1' }), {}, ours);
    assert.equal(notFound.ownership, 'unproven');
    assert.match(notFound.message ?? '', /identity recorded at creation \(marker=k8or-id-1\) is not found on it.*credentials cannot read it/);
    assert.equal(ownershipOf(uid(bucket({ name: generated }, created)), { identity: { id: 'a' } }, ours), 'ours', 'a kind without tags, under a generated name');
    assert.equal(ownershipOf(uid(bucket({ name: generated }, created)), { ownerTags: {} }, ours), 'unproven', 'a taggable kind whose tags are gone');

    assert.equal(compareIdentity({ a: '1', b: '2' }, { a: '1', c: '3' }), 'same');
    assert.equal(compareIdentity({ a: '1' }, { a: '2' }), 'different');
    assert.equal(compareIdentity(undefined, { a: '1' }), 'unknown');
    assert.ok(mayManage('ours') && mayManage('finish-create') && mayManage('adopt'));
    assert.ok(!mayManage('foreign') && !mayManage('unproven') && !mayManage('replaced'));
    assert.match(decideOwnership(bucket({ name: 'x' }), { ownerTags: {} }, ours).message ?? '', /k8or\.io\/adopt: "true"/, 'says how to adopt');

    // A delete needs evidence on the resource itself: k8or's own create record is not enough.
    const deletion = (b: Bucket, found: Parameters<typeof decideOwnership>[1]) => decideDeletion(decideOwnership(b, found, ours), 'Table', 'orders').action;
    assert.equal(deletion(bucket({}, created), { ownerTags: ours }), 'delete', 'owner tags');
    assert.equal(deletion(withIdentity(bucket({}, created), { id: 'a' }), { identity: { id: 'a' } }), 'delete', 'the recorded identity');
    assert.equal(deletion(uid(bucket({ name: generated }, pending)), {}), 'delete', 'a name generated for this object');
    assert.equal(deletion(bucket({}, created), {}), 'block', 'the create record alone, nothing to compare');
    assert.equal(deletion(bucket({}, { ...created, ...adopt }), {}), 'delete', 'adopted, neither tags nor identity: the user vouched for it');
    assert.equal(deletion(bucket({}, adopt), { ownerTags: {} }), 'leave', 'an adoption never recorded');
    assert.equal(deletion(bucket({}, created), { ownerTags: {} }), 'leave', 'unproven');
    const blocked = decideDeletion(decideOwnership(bucket({}, created), {}, ours), 'Table', 'orders');
    assert.match(blocked.action === 'block' ? blocked.message : '', /Table "orders".*spec\.deletionPolicy: Retain/);
    // ...so under Delete, k8or creates nothing that could hold no identity.
    assert.equal(refuseCreate('Retain', 'Table', 'a SAS'), undefined);
    assert.equal(refuseCreate('Delete', 'Table', undefined), undefined);
    assert.match(refuseCreate('Delete', 'Table', 'a SAS cannot') ?? '', /^spec\.deletionPolicy: Delete is refused for this Table \(rule deletion-policy\.needs-evidence\): a SAS cannot/);
  });

  it('classifies a failed create: refused before any effect, or an unknown outcome', () => {
    assert.equal(createOutcomeOf(new TerminalError('bad request')), 'refused');
    assert.equal(createOutcomeOf(new NotOwnedError('taken')), 'refused');
    assert.equal(createOutcomeOf(new RetryableError('SlowDown', { code: 'SlowDown', noEffect: true })), 'refused');
    assert.equal(createOutcomeOf(new RetryableError('socket hang up')), 'unknown');
    assert.equal(createOutcomeOf(new TerminalError('tagging denied after create', { noEffect: false })), 'unknown');
    assert.equal(createOutcomeOf(new Error('timeout')), 'unknown');
  });

  it('names cloud targets and resources: same target on the union of keys, no secret in an endpoint', () => {
    const pc = (spec: Partial<ProviderConfig['spec']>): ProviderConfig => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'p' }, spec: { provider: 'aws', ...spec } });
    const a = cloudTargetFor(undefined, 'Table', pc({ region: 'eu-west-1', endpoint: 'http://user:pw@LocalHost:8000/?sig=abc' }));
    assert.deepEqual(a, { provider: 'aws', region: 'eu-west-1', project: '', storageAccount: '', instance: '', endpoint: 'http://localhost:8000' });
    assert.ok(sameCloudTarget(a, { ...a, accountId: '123' }), 'a part only one side has is no difference (a provider that reports more later)');
    assert.ok(!sameCloudTarget(a, { ...a, region: 'us-east-1' }));
    assert.ok(!sameCloudTarget(a, { ...a, endpoint: '' }), 'an endpoint removed: another target');
    assert.ok(sameCloudTarget(cloudTargetFor(undefined, 'Table', pc({ region: 'eu-west-1' }), { key: 'old' }), cloudTargetFor(undefined, 'Table', pc({ region: 'eu-west-1' }), { key: 'new' })), 'credentials are no part of it');
    const plugin = { targetOf: () => ({ account: '123', endpoint: 'https://x.test/a/?token=s3cr3t' }) };
    assert.deepEqual(cloudTargetFor(plugin, 'Bucket', pc({})), { provider: 'aws', account: '123', endpoint: 'https://x.test/a' });
    assert.equal(cloudResourceKey({ provider: 'aws', region: 'eu', endpoint: '' }, 'Table', 'orders'), 'provider=aws,region=eu/Table/orders');
    assert.equal(cloudResourceKey({ region: 'eu', provider: 'aws' }, 'Table', 'orders'), cloudResourceKey({ provider: 'aws', region: 'eu' }, 'Table', 'orders'), 'key order makes no difference');
  });

  it('describes a diff in words a user can act on', () => {
    assert.equal(
      describeDiff([
        { field: 'spec.versioning', desired: true, actual: false },
        { field: 'spec.labels', desired: { team: 'a' }, actual: {} },
      ]),
      'spec.versioning (wanted true, found false), spec.labels (wanted {"team":"a"}, found {})',
    );
  });
});

