// The drift-check schedule: each resource's slot in its interval comes from its uid.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type Bucket, type ProviderConfig } from '@k8or/api';
import { DEFERRED_CHECK_SLOT_GRACE_MS, DriftBudgetRules, EVERY_SERVICE, awaitsItsSlot, delayAfterCheck, delayOfDeferredCheck, delayUntilNextCheck, driftCheckBudgetViolations, firstCheckDelay, nextCheckAt, phaseFraction, planDriftChecks, readObjectAwaitsItsSlot, type CheckedResource, type ProviderPlugin } from '@k8or/core';

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
    // The phase of every earlier version (the first 48 bits of the uid's SHA-256): a restarted operator of a new version finds the same slots.
    assert.equal(phaseFraction(uid), 88259925013668 / 2 ** 48);
    // Asked again a little later, or from another process, the answer is the same slot.
    assert.equal(nextCheckAt(uid, HOUR, NOW + 1234), slot);
    assert.equal(nextCheckAt(uid, HOUR, slot - 1), slot);
    // At the slot itself, the next one is a whole interval on.
    assert.equal(nextCheckAt(uid, HOUR, slot), slot + HOUR);
    assert.equal(delayUntilNextCheck(uid, HOUR, slot), HOUR);
  });

  it('after a check made a hair before its slot, the next check is a whole interval on, not at that slot', () => {
    const uid = 'b6f1c7e2-0000-4000-8000-000000000001';
    const slot = nextCheckAt(uid, HOUR, NOW);
    assert.equal(delayAfterCheck(uid, HOUR, slot - 1), HOUR + 1, 'a timer that fired a millisecond early');
    assert.equal(delayAfterCheck(uid, HOUR, slot + 5), HOUR - 5, 'a check a little late');
    assert.equal(delayAfterCheck(uid, HOUR, slot - 60_000), 60_000, 'a check well before the slot (a watch event) leaves it be');
  });

  it('a deferred check near its slot tries again when the minute has room; one scheduled under a shorter interval waits for its new slot', () => {
    const uid = 'b6f1c7e2-0000-4000-8000-000000000001';
    const threeHours = 3 * HOUR;
    const slot = nextCheckAt(uid, threeHours, NOW);
    assert.equal(delayOfDeferredCheck(uid, threeHours, slot + 30_000, 20_000), 20_000, 'half a minute past its slot: retried once the minute has room');
    assert.equal(delayOfDeferredCheck(uid, threeHours, slot + DEFERRED_CHECK_SLOT_GRACE_MS, 20_000), 20_000);
    // Due at a slot of the hour it asked for before the budget lengthened it to three: an hour past its slot of three hours.
    assert.equal(delayOfDeferredCheck(uid, threeHours, slot + HOUR, 20_000), 2 * HOUR, 'waits for its next slot of the three hours');
    assert.equal(delayOfDeferredCheck(uid, threeHours, slot - 10_000, 60_000), 60_000, 'never sooner than the minute has room');
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

  it('reads an object of any shape from the API server: one not of the API\'s shape is worked at once, never thrown on', () => {
    assert.equal(readObjectAwaitsItsSlot(inSync()), true);
    assert.equal(readObjectAwaitsItsSlot(inSync({ metadata: { generation: 4 } })), false, 'a new generation');
    const malformed: [string, unknown][] = [
      ['not an object', 'bucket'],
      ['null', null],
      ['no metadata', { ...inSync(), metadata: undefined }],
      ['a status that is not an object', { ...inSync(), status: 'Ready' }],
      ['conditions that are not a list', { ...inSync(), status: { ...inSync().status, conditions: { type: 'Ready' } } }],
      ['a condition that is not an object', { ...inSync(), status: { ...inSync().status, conditions: [null, ...(inSync().status?.conditions ?? [])] } }],
    ];
    for (const [why, object] of malformed) assert.equal(readObjectAwaitsItsSlot(object), false, why);
  });
});

const plugin: Pick<ProviderPlugin, 'provider' | 'rateLimits' | 'observeCalls'> = {
  provider: 'aws',
  rateLimits: {
    's3-buckets': { requestsPerSecond: 50, burst: 100, description: '' },
    'dynamodb-control-plane': { requestsPerSecond: 250, burst: 250, description: '' },
  },
  observeCalls: { Bucket: { 's3-buckets': 7 }, Table: { 'dynamodb-control-plane': 4 } },
};

function config(budget?: ProviderConfig['spec']['driftCheckBudget'], rateLimits?: ProviderConfig['spec']['rateLimits']): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'prod' }, spec: { provider: 'aws', region: 'eu-west-1', ...(budget ? { driftCheckBudget: budget } : {}), ...(rateLimits ? { rateLimits } : {}) } };
}

function buckets(count: number, askedMs: number, prefix = 'b'): CheckedResource[] {
  return Array.from({ length: count }, (_, i) => ({ key: `${prefix}${i}`, kind: 'Bucket' as const, askedMs }));
}

describe('the drift-check budget', () => {
  it('without a budget, every resource is checked at the interval it asks for', () => {
    const plan = planDriftChecks(config(), plugin, buckets(1_000, 60_000));
    assert.equal(plan.budgetCallsPerHour, undefined);
    assert.equal(plan.budgetByService.size, 0);
    assert.equal(plan.lengthened, 0);
    assert.equal(plan.intervals.get('b0'), 60_000);
    assert.equal(plan.projectedCallsPerHour, 1_000 * 7 * 60);
  });

  it('lengthens the intervals that ask for more than callsPerHour allows, to one interval that fits', () => {
    // 1,000 Buckets every minute: 420,000 calls an hour; 70,000 allows each every 6 minutes.
    const plan = planDriftChecks(config({ callsPerHour: 70_000 }), plugin, buckets(1_000, 60_000));
    assert.equal(plan.budgetIntervalMs, 360_000);
    assert.equal(plan.intervals.get('b999'), 360_000);
    assert.equal(plan.lengthened, 1_000);
    assert.ok(Math.abs(plan.projectedCallsPerHour - 70_000) < 1e-6);
    assert.deepEqual(plan.budgetByService, new Map([[EVERY_SERVICE, 70_000]]), 'every call counts against the one budget');
  });

  it('leaves a resource that asks for less than the budget interval as it is, and shares the rest among the others', () => {
    const resources = [...buckets(100, 60_000, 'fast'), ...buckets(100, 3_600_000, 'slow')];
    // The slow hundred make 700 calls an hour; the fast hundred (700 calls a round) get the other 6,300: a round every 400 s.
    const plan = planDriftChecks(config({ callsPerHour: 7_000 }), plugin, resources);
    assert.equal(plan.intervals.get('slow0'), 3_600_000);
    assert.equal(plan.intervals.get('fast0'), 400_000);
    assert.equal(plan.lengthened, 100);
    assert.ok(plan.projectedCallsPerHour <= 7_000, `projected ${plan.projectedCallsPerHour}`);
  });

  it('lands on the whole second the budget allows at scale, not a second more for a rounding error', () => {
    // 10,000 Buckets asking every 15 s, at one call a check; 600,000 calls an hour is one check each a minute.
    const plan = planDriftChecks(config({ callsPerHour: 600_000 }), { provider: 'aws', observeCalls: { Bucket: { '': 1 } } }, buckets(10_000, 15_000));
    assert.equal(plan.budgetIntervalMs, 60_000);
    assert.equal(plan.projectedCallsPerHour, 600_000);
  });

  it('changes nothing when the asked intervals already fit', () => {
    const plan = planDriftChecks(config({ callsPerHour: 100_000 }), plugin, buckets(10, 3_600_000));
    assert.equal(plan.budgetIntervalMs, 0);
    assert.equal(plan.lengthened, 0);
    assert.equal(plan.budgetCallsPerHour, 100_000);
  });

  it('rateLimitPercent: a share of each service\'s rate in force, for the checks that draw on it', () => {
    const resources: CheckedResource[] = [...buckets(10_000, 60_000), ...Array.from({ length: 10 }, (_, i) => ({ key: `t${i}`, kind: 'Table' as const, askedMs: 60_000 }))];
    // 10 % of s3-buckets at 20/s (spec.rateLimits) is 7,200 calls an hour: 10,000 Buckets x 7 calls every 9,723 s.
    const plan = planDriftChecks(config({ rateLimitPercent: 10 }, { 's3-buckets': { requestsPerSecond: 20 } }), plugin, resources);
    assert.equal(plan.intervals.get('b0'), Math.ceil((70_000 * 3_600_000) / 7_200 / 1000) * 1000);
    assert.equal(plan.intervals.get('t0'), 60_000, 'the Tables draw on DynamoDB, whose share they fit');
    assert.equal(plan.budgetCallsPerHour, 7_200 + 90_000);
    assert.deepEqual(plan.budgetByService, new Map([['s3-buckets', 7_200], ['dynamodb-control-plane', 90_000]]), 'held service by service');
  });

  it('a shard plans its own resources with its share of the budget: three shards together stay within it', () => {
    // 3,000 Buckets every minute at 7 calls: 1,260,000 calls an hour; the account's budget is 70,000.
    const all = buckets(3_000, 60_000);
    const whole = planDriftChecks(config({ callsPerHour: 70_000 }), plugin, all);
    assert.equal(whole.budgetShare, 1);
    // Hashing spreads them unevenly: 1,200, 1,000 and 800 on the three shards, each with a third of 70,000.
    const shards = [all.slice(0, 1_200), all.slice(1_200, 2_200), all.slice(2_200)].map((own) => planDriftChecks(config({ callsPerHour: 70_000 }), plugin, own, 1 / 3));
    for (const plan of shards) {
      assert.equal(plan.budgetShare, 1 / 3);
      assert.ok(Math.abs((plan.budgetCallsPerHour ?? 0) - 70_000 / 3) < 1e-6, `a third of the budget: ${plan.budgetCallsPerHour}`);
      assert.ok(plan.projectedCallsPerHour <= 70_000 / 3 + 1e-6, `within its share: ${plan.projectedCallsPerHour}`);
    }
    // 1,200 x 7 calls in 23,333 calls an hour: a round every 1,296 s (rounded up to the second).
    assert.equal(shards[0]!.budgetIntervalMs, 1_296_000);
    assert.equal(shards[2]!.budgetIntervalMs, 864_000);
    const fleet = shards.reduce((sum, plan) => sum + plan.projectedCallsPerHour, 0);
    assert.ok(fleet <= 70_000 + 1e-6, `the fleet's checks within the account's budget: ${fleet}`);

    // rateLimitPercent: the share of each service's rate, divided as well.
    const percent = planDriftChecks(config({ rateLimitPercent: 10 }, { 's3-buckets': { requestsPerSecond: 20 } }), plugin, buckets(10, 60_000), 1 / 4);
    assert.equal(percent.budgetCallsPerHour, 7_200 / 4);
    assert.throws(() => planDriftChecks(config({ callsPerHour: 1 }), plugin, [], 0), RangeError);
  });

  it('names the field of a malformed budget, and refuses a share of rate limits a provider does not declare', () => {
    assert.deepEqual(driftCheckBudgetViolations(plugin, config({ callsPerHour: 1_000 })), []);
    assert.deepEqual(driftCheckBudgetViolations(plugin, config({ rateLimitPercent: 25 })), []);
    const rules = (budget: unknown, p: Pick<ProviderPlugin, 'provider' | 'rateLimits'> = plugin) =>
      driftCheckBudgetViolations(p, { spec: { provider: 'aws', driftCheckBudget: budget } }).map((v) => `${v.field} ${v.rule}`);
    assert.deepEqual(rules({}), [`spec.driftCheckBudget ${DriftBudgetRules.exactlyOne}`]);
    assert.deepEqual(rules({ callsPerHour: 10, rateLimitPercent: 5 }), [`spec.driftCheckBudget ${DriftBudgetRules.exactlyOne}`]);
    assert.deepEqual(rules({ callsPerHour: 0.5 }), [`spec.driftCheckBudget.callsPerHour ${DriftBudgetRules.callsPerHour}`]);
    assert.deepEqual(rules({ rateLimitPercent: 101 }), [`spec.driftCheckBudget.rateLimitPercent ${DriftBudgetRules.rateLimitPercent}`]);
    assert.deepEqual(rules({ callsPerHour: 5, perHour: 3 }), [`spec.driftCheckBudget.perHour ${DriftBudgetRules.field}`]);
    assert.deepEqual(rules('lots'), [`spec.driftCheckBudget ${DriftBudgetRules.object}`]);
    assert.deepEqual(rules({ rateLimitPercent: 10 }, { provider: 'foo' }), [`spec.driftCheckBudget.rateLimitPercent ${DriftBudgetRules.noRateLimits}`]);
  });
});
