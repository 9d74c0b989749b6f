import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type Bucket, type Condition } from '@k8or/api';
import { deletionPolicyFor, describeDiff, mergeConditions, ownershipOf, parseGoDuration, providerConfigNameFor, resyncPeriodFor, statusEqual, withJitter } from '@k8or/core';

function bucket(spec: Bucket['spec'] = {}, annotations: Record<string, string> = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media', annotations, finalizers: [FINALIZER] }, spec };
}
const namespace = (annotations: Record<string, string>) => ({ metadata: { name: 'media', annotations } });

describe('reconcile rules', () => {
  it('picks the deletion policy: resource annotation, spec, namespace annotation, operator default', () => {
    assert.equal(deletionPolicyFor(bucket(), undefined, 'Delete'), 'Delete');
    assert.equal(deletionPolicyFor(bucket(), namespace({ [Annotations.deletionPolicy]: 'Retain' }), 'Delete'), 'Retain');
    assert.equal(deletionPolicyFor(bucket({ deletionPolicy: 'Delete' }), namespace({ [Annotations.deletionPolicy]: 'Retain' }), 'Retain'), 'Delete');
    assert.equal(deletionPolicyFor(bucket({ deletionPolicy: 'Delete' }, { [Annotations.deletionPolicy]: 'Retain' }), undefined, 'Delete'), 'Retain');
    assert.equal(deletionPolicyFor(bucket({}, { [Annotations.deletionPolicy]: 'Sometimes' }), undefined, 'Retain'), 'Retain', 'an unknown value is ignored');
  });

  it('picks the ProviderConfig: spec, namespace annotation, then default', () => {
    assert.equal(providerConfigNameFor(bucket(), undefined), 'default');
    assert.equal(providerConfigNameFor(bucket(), namespace({ [Annotations.providerConfig]: 'media-aws' })), 'media-aws');
    assert.equal(providerConfigNameFor(bucket({ providerConfigRef: { name: 'mine' } }), namespace({ [Annotations.providerConfig]: 'media-aws' })), 'mine');
  });

  it('reads Go durations for k8or.io/resync-period and falls back on nonsense', () => {
    assert.equal(parseGoDuration('30s'), 30_000);
    assert.equal(parseGoDuration('5m'), 300_000);
    assert.equal(parseGoDuration('1h30m'), 5_400_000);
    assert.equal(parseGoDuration('1.5h'), 5_400_000);
    assert.equal(parseGoDuration('250ms'), 250);
    assert.equal(parseGoDuration('10'), undefined);
    assert.equal(parseGoDuration('-5m'), undefined);
    assert.equal(parseGoDuration('0s'), undefined);
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: '2m' }), 3_600_000), 120_000);
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: 'often' }), 3_600_000), 3_600_000);
  });

  it('never resyncs faster than the operator floor, whatever the annotation asks', () => {
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: '1s' }), 3_600_000, 30_000), 30_000);
    assert.equal(resyncPeriodFor(bucket({}, { [Annotations.resyncPeriod]: '2m' }), 3_600_000, 30_000), 120_000);
    assert.equal(resyncPeriodFor(bucket({}, {}), 3_600_000, 30_000), 3_600_000);
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

  it('recognises its own cloud resources by every owner tag, and adopts others only when asked', () => {
    const ours = { 'k8or.io/managed-by': 'k8or', 'k8or.io/name': 'photos' };
    assert.equal(ownershipOf(bucket(), { exists: true, upToDate: true, ready: true, ownerTags: { ...ours, extra: 'x' } }, ours), 'ours');
    assert.equal(ownershipOf(bucket(), { exists: true, upToDate: true, ready: true, ownerTags: { 'k8or.io/managed-by': 'k8or' } }, ours), 'foreign');
    assert.equal(ownershipOf(bucket({}, { [Annotations.adopt]: 'true' }), { exists: true, upToDate: true, ready: true, ownerTags: {} }, ours), 'adopt');
    // A cloud without tags: only a create k8or recorded proves ownership.
    assert.equal(ownershipOf(bucket(), { exists: true, upToDate: true, ready: true }, ours), 'foreign');
    assert.equal(ownershipOf(bucket({}, { [Annotations.createSucceeded]: '2026-01-01T00:00:00Z' }), { exists: true, upToDate: true, ready: true }, ours), 'ours');
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
