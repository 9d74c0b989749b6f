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
});
