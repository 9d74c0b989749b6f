// The drift-check schedule: each resource's slot in its interval comes from its uid.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type Bucket } from '@k8or/api';
import { awaitsItsSlot, delayUntilNextCheck, firstCheckDelay, nextCheckAt, phaseFraction } from '@k8or/core';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-27T12:00:00Z');

function inSync(overrides: { metadata?: Partial<Bucket['metadata']>; status?: Partial<NonNullable<Bucket['status']>> } = {}): Bucket {
  const condition = (type: string) => ({ type, status: 'True' as const, reason: 'ReconcileSuccess', message: '', lastTransitionTime: '2026-11-27T11:00:00Z', observedGeneration: 3 });
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: { name: 'photos', namespace: 'media', uid: 'b6f1c7e2-0000-4000-8000-000000000001', generation: 3, finalizers: [FINALIZER], ...overrides.metadata },
    spec: {},
    status: { observedGeneration: 3, conditions: [condition('Ready'), condition('Synced')], ...overrides.status },
  };
}

function neverReconciled(): Bucket {
  const bucket = inSync();
  delete bucket.status;
  return bucket;
}

describe('the drift-check schedule', () => {
  it('puts every check of a resource on the same slot, whatever the clock says when it is asked', () => {
    const uid = 'b6f1c7e2-0000-4000-8000-000000000001';
    const slot = nextCheckAt(uid, HOUR, NOW);
    assert.ok(slot > NOW && slot <= NOW + HOUR);
    assert.equal((slot - Math.floor(phaseFraction(uid) * HOUR)) % HOUR, 0, 'the slot is the phase plus whole intervals');
    // Asked again a little later, or from another process, the answer is the same slot.
    assert.equal(nextCheckAt(uid, HOUR, NOW + 1234), slot);
    assert.equal(nextCheckAt(uid, HOUR, slot - 1), slot);
    // At the slot itself, the next one is a whole interval on.
    assert.equal(nextCheckAt(uid, HOUR, slot), slot + HOUR);
    assert.equal(delayUntilNextCheck(uid, HOUR, slot), HOUR);
  });

  it('spreads the slots of many resources evenly over the interval: no minute holds much more than its share', () => {
    const perMinute = new Array<number>(60).fill(0);
    for (let i = 0; i < 6_000; i++) perMinute[Math.floor((nextCheckAt(`uid-${i}`, HOUR, NOW) - NOW) / 60_000)]! += 1;
    // 100 a minute on average; a uniform spread keeps every minute within a few standard deviations.
    assert.ok(Math.max(...perMinute) < 140, `busiest minute: ${Math.max(...perMinute)}`);
    assert.ok(Math.min(...perMinute) > 60, `quietest minute: ${Math.min(...perMinute)}`);
  });

  it('lets an object in sync wait for its slot after a restart, and looks at once at anything else', () => {
    assert.equal(awaitsItsSlot(inSync()), true);
    assert.equal(firstCheckDelay(inSync(), HOUR, NOW), delayUntilNextCheck('b6f1c7e2-0000-4000-8000-000000000001', HOUR, NOW));
    const atOnce: [string, Bucket][] = [
      ['a new generation', inSync({ metadata: { generation: 4 } })],
      ['being deleted', inSync({ metadata: { deletionTimestamp: '2026-11-27T11:59:00Z' } })],
      ['no finalizer yet', inSync({ metadata: { finalizers: [] } })],
      ['never reconciled', neverReconciled()],
      ['Synced False', inSync({ status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Available', message: '', lastTransitionTime: '' }, { type: 'Synced', status: 'False', reason: 'DriftReported', message: '', lastTransitionTime: '' }] } })],
      ['Ready False', inSync({ status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Creating', message: '', lastTransitionTime: '' }, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', message: '', lastTransitionTime: '' }] } })],
      ['a condition of an older generation', inSync({ status: { observedGeneration: 3, conditions: [{ type: 'Ready', status: 'True', reason: 'Available', message: '', lastTransitionTime: '', observedGeneration: 2 }, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', message: '', lastTransitionTime: '', observedGeneration: 3 }] } })],
      ['a reconcile asked for and not handled', inSync({ metadata: { annotations: { [Annotations.reconcileRequestedAt]: '2026-11-27T11:58:00Z' } } })],
      ['paused since', inSync({ metadata: { annotations: { [Annotations.paused]: 'true' } } })],
    ];
    for (const [why, object] of atOnce) {
      assert.equal(awaitsItsSlot(object), false, why);
      assert.equal(firstCheckDelay(object, HOUR, NOW), 0, why);
    }
    const handled = inSync({ metadata: { annotations: { [Annotations.reconcileRequestedAt]: '2026-11-27T11:58:00Z' } }, status: { lastHandledReconcileAt: '2026-11-27T11:58:00Z' } });
    assert.equal(awaitsItsSlot(handled), true, 'a reconcile request already handled asks for nothing');
  });
});
