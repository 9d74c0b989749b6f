import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type Bucket, type Condition } from '@k8or/api';
import { deletionPolicyFor, describeDiff, mergeConditions, ownershipOf, parseGoDuration, providerConfigFor, resyncPeriodFor, resyncPeriodViolation, statusEqual, withJitter } from '@k8or/core';

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

  it('spreads the resync period by at most ±10 %', () => {
    assert.equal(withJitter(1000, 0.1, () => 0), 900);
    assert.equal(withJitter(1000, 0.1, () => 0.5), 1000);
    assert.equal(withJitter(1000, 0.1, () => 1), 1100);
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

  it('recognises its own cloud resources by every owner tag, finishes its own interrupted creates, and adopts others only when asked', () => {
    const ours = { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'photos' };
    const pending = { [Annotations.createPending]: '2026-01-01T00:00:00Z' };
    const created = { [Annotations.createSucceeded]: '2026-01-01T00:00:00Z' };
    assert.equal(ownershipOf(bucket(), { ...ours, extra: 'x' }, ours), 'ours');
    assert.equal(ownershipOf(bucket(), { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'videos' }, ours), 'foreign', 'another owner named');
    assert.equal(ownershipOf(bucket(pendingSpec(), pending), { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'videos' }, ours), 'foreign', 'another owner named, even mid-create');
    assert.equal(ownershipOf(bucket({}, { [Annotations.adopt]: 'true' }), {}, ours), 'adopt');
    assert.equal(ownershipOf(bucket(), {}, ours), 'foreign', 'untagged and never created by us');
    // A create cut short between the create call and the tags (or the marker).
    assert.equal(ownershipOf(bucket({}, pending), {}, ours), 'interrupted-create');
    assert.equal(ownershipOf(bucket({}, pending), undefined, ours), 'interrupted-create');
    // A cloud without tags: the create k8or recorded proves ownership.
    assert.equal(ownershipOf(bucket(), undefined, ours), 'foreign');
    assert.equal(ownershipOf(bucket({}, created), undefined, ours), 'ours');
    assert.equal(ownershipOf(bucket({}, created), {}, ours), 'ours', 'our tags removed behind our back: still ours, update rewrites them');
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

function pendingSpec(): Bucket['spec'] {
  return {};
}
