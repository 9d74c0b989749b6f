// A ProviderConfig's drift-check budget: the engine checks its resources less often when they ask
// for more than it allows, says so in status and an Event, and exports the projection next to the
// calls its drift checks make. Over the sandbox API server and the in-memory cloud.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Annotations } from '@k8or/api';
import { CoreMetrics, Reasons } from '@k8or/core';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine: a drift-check budget', () => {
  let world: World;

  before(async () => {
    world = await World.start();
  });
  after(async () => world?.stop());

  it('lengthens the interval to what the budget allows, shows it in status with an Event, and exports the projection and the calls made', async () => {
    // Four Buckets asking for a check every 2 s: 7,200 calls an hour at one call a check. 3,600 allows one every 4 s.
    await world.createProviderConfig('budgeted', { driftCheckBudget: { callsPerHour: 3_600 } });
    const ns = await world.newNamespace({ [Annotations.providerConfig]: 'budgeted' });
    const names = ['north', 'south', 'east', 'west'];
    const metrics = new CoreMetrics();
    const engine = await world.startEngine({ metrics });
    for (const name of names) await world.createBucket(ns, name, {}, { [Annotations.resyncPeriod]: '2s' });
    for (const name of names) await world.waitForBucket(ns, name, 'Ready, and checked every 4s', (b) => isReadyAndSynced(b) && b.status?.driftCheckInterval === '4s');

    const plan = engine.driftCheckPlans().find((p) => p.providerConfig === 'budgeted');
    assert.equal(plan?.budgetCallsPerHour, 3_600);
    assert.equal(plan?.budgetIntervalMs, 4_000);
    assert.equal(plan?.resources, 4);
    assert.equal(plan?.lengthened, 4);
    assert.equal(plan?.projectedCallsPerHour, 3_600);

    const event = await waitFor('an Event that says why', async () => (await world.events(ns, 'north')).find((e) => e.reason === Reasons.DriftCheckIntervalLengthened));
    assert.match(event.message, /every 4s, not every 2s/);
    assert.match(event.message, /ProviderConfig "budgeted" allows its drift checks 3600 calls an hour \(spec\.driftCheckBudget\.callsPerHour\)/);

    // Checks happen at the lengthened interval: over a window, about one call per Bucket per 4 s.
    const externalNames = new Set<string>();
    for (const name of names) externalNames.add((await world.bucket(ns, name))?.spec.name ?? '');
    const from = Date.now();
    await waitFor('12 s of checks', () => Date.now() - from >= 12_000, 20_000);
    const checks = world.cloud.calls.filter((c) => c.at >= from && externalNames.has(c.name) && c.operation === 'observe').length;
    // Three 4 s rounds of four Buckets: 12, give or take a check at each end of the window.
    assert.ok(checks >= 8 && checks <= 16, `${checks} checks in 12 s; the schedule says 12`);

    const text = await metrics.registry.metrics();
    assert.match(text, /k8or_drift_check_projected_calls_per_hour\{provider="aws",provider_config="budgeted"\} 3600/);
    assert.match(text, /k8or_drift_check_budget_calls_per_hour\{provider="aws",provider_config="budgeted"\} 3600/);
    assert.match(text, /k8or_drift_check_budget_interval_seconds\{provider="aws",provider_config="budgeted"\} 4/);
    const made = /k8or_drift_check_calls_total\{provider="aws",provider_config="budgeted"\} (\d+)/.exec(text);
    assert.ok(made && Number(made[1]) >= 8, `drift-check calls counted: ${made?.[1]}`);
    await engine.stop();
  });

  it('never lets drift checks exceed the budget over any sliding window, deferring those whose slots bunch, and still checks every resource', async () => {
    // The operator's sliding minute and hour-long budgets, scaled down tenfold through the engine's
    // driftCheckWindowMs: a 6 s window, and six Buckets under 2,400 calls an hour checked every 9 s,
    // 4 calls a window on average. Their hashed phases are never exactly even, so some 6 s holds 4
    // gaps summing under 6 s: five slots in one window, which the gate must defer.
    const windowMs = 6_000;
    await world.createProviderConfig('tight', { driftCheckBudget: { callsPerHour: 2_400 } });
    const ns = await world.newNamespace({ [Annotations.providerConfig]: 'tight' });
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const metrics = new CoreMetrics();
    // All there before the engine starts, so that its first plan already counts all six.
    for (const name of names) await world.createBucket(ns, name, {}, { [Annotations.resyncPeriod]: '1s' });
    const engine = await world.startEngine({ metrics, driftCheckWindowMs: windowMs });
    for (const name of names) await world.waitForBucket(ns, name, 'Ready, and checked every 9s', (b) => isReadyAndSynced(b) && b.status?.driftCheckInterval === '9s');
    const externalNames = new Set<string>();
    for (const name of names) externalNames.add((await world.bucket(ns, name))?.spec.name ?? '');

    // From here every observe of these Buckets is a drift check. Two rounds: every Bucket checked twice.
    const from = Date.now();
    const checks = (): number[] => world.cloud.calls.filter((c) => c.at >= from && externalNames.has(c.name) && c.operation === 'observe').map((c) => c.at);
    const checkedTwice = (): boolean => [...externalNames].every((n) => world.cloud.calls.filter((c) => c.at >= from && c.name === n && c.operation === 'observe').length >= 2);
    await waitFor('every Bucket checked twice', checkedTwice, 360_000, 100);

    // The cloud stamps calls with Date.now, the gate with performance.now: a few ms of slack between the clocks.
    const inWindowMs = windowMs - 20;
    const at = checks().sort((x, y) => x - y);
    for (const start of at) {
      const inWindow = at.filter((t) => t >= start && t < start + inWindowMs).length;
      assert.ok(inWindow <= 4, `${inWindow} drift checks in the 6 s from ${new Date(start).toISOString()}; the budget allows 4: ${at.map((t) => t - from).join(', ')}`);
    }
    const text = await metrics.registry.metrics();
    const deferred = /k8or_drift_checks_deferred_total\{provider="aws",provider_config="tight"\} (\d+)/.exec(text);
    assert.ok(deferred && Number(deferred[1]) >= 1, `drift checks deferred: ${deferred?.[1]}`);
    await engine.stop();
  });
});
