import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Annotations } from '@k8or/api';
import { CoreMetrics, Reasons, type Engine, type ShardAssigner } from '@k8or/core';
import { SHARD_RING, World, shardAssigner, isReadyAndSynced, waitFor } from './engine-harness.ts';

// A ProviderConfig's drift-check budget is the cloud account's: three shards over one in-memory
// cloud, each planning its own Buckets with a third of the budget, together check them no more
// often than the one budget allows (counted where the checks arrive, at the cloud).

/** The account's budget: one check a second for the whole fleet (the in-memory plugin makes one call a check). */
const BUDGET_PER_HOUR = 3_600;
const BUCKETS = 12;
const WINDOW_MS = 30_000;
const SHARDS = ['shard-a', 'shard-b', 'shard-c'];

describe('engine: shards divide a ProviderConfig\'s drift-check budget', () => {
  let world: World;
  let assigner: ShardAssigner;
  const assigning = new AbortController();
  const engines: Engine[] = [];
  const metrics = SHARDS.map(() => new CoreMetrics());
  const sharding = SHARD_RING;

  before(async () => {
    world = await World.start();
    assigner = await shardAssigner(world);
  });
  after(async () => {
    assigning.abort();
    assigner?.close();
    await world?.stop();
  });

  it('three shards together check within the one budget, each planning with a third of it', async () => {
    await world.createProviderConfig('budgeted', { driftCheckBudget: { callsPerHour: BUDGET_PER_HOUR } });
    for (const [i, shard] of SHARDS.entries()) engines.push(await world.startEngine({ identity: shard, metrics: metrics[i]!, sharding: { ...sharding, shard } }));
    await waitFor('every shard holds its Lease', async () => engines.every((e) => e.isLeader()), 60_000, 100);
    void assigner.run(assigning.signal, 300);
    const ns = await world.newNamespace({ [Annotations.providerConfig]: 'budgeted' });
    // Each asks for a check every 2 s: 21,600 calls an hour, six times the budget.
    const names = Array.from({ length: BUCKETS }, (_, i) => `checked-${i}`);
    for (const name of names) await world.createBucket(ns, name, {}, { [Annotations.resyncPeriod]: '2s' });
    for (const name of names) await world.waitForBucket(ns, name, 'Ready, its interval in status', (b) => isReadyAndSynced(b) && b.status?.driftCheckInterval !== undefined);

    // Checks already scheduled at an interval from before every Bucket reached its shard run out first.
    const externalNames = new Set<string>();
    for (const name of names) externalNames.add((await world.bucket(ns, name))?.spec.name ?? '');
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const from = Date.now();
    await waitFor(`${WINDOW_MS / 1000} s of checks`, () => Date.now() - from >= WINDOW_MS, WINDOW_MS + 10_000);
    const checks = world.cloud.calls.filter((c) => c.at >= from && c.at < from + WINDOW_MS && externalNames.has(c.name) && c.operation === 'observe').length;
    const allowed = (BUDGET_PER_HOUR * WINDOW_MS) / 3_600_000;
    console.log(`${checks} drift checks by the fleet in ${WINDOW_MS / 1000} s; the budget allows ${allowed}`);
    // At most one check of each Bucket more than the budget's rate: a check due at the window's start edge.
    assert.ok(checks <= allowed + BUCKETS, `the fleet's ${checks} checks in ${WINDOW_MS / 1000} s keep to the budget's ${allowed} (+ ${BUCKETS})`);
    assert.ok(checks >= allowed / 3, `the shards kept checking (${checks})`);

    const plans = engines.flatMap((e) => e.driftCheckPlans().filter((p) => p.providerConfig === 'budgeted'));
    assert.ok(plans.length >= 2, 'the Buckets are spread over the shards');
    for (const plan of plans) {
      assert.equal(plan.budgetShare, 1 / 3, 'each shard plans with a third of the budget');
      assert.equal(plan.budgetCallsPerHour, BUDGET_PER_HOUR / 3);
      assert.ok(plan.projectedCallsPerHour <= BUDGET_PER_HOUR / 3 + 1e-6, `a shard's projection within its share: ${plan.projectedCallsPerHour}`);
    }
    assert.equal(plans.reduce((sum, p) => sum + p.resources, 0), BUCKETS, 'each shard\'s projection is for its own Buckets');
    // Each shard's metrics: the share it plans with, and the part of the budget that is.
    for (const [i, engine] of engines.entries()) {
      if (!engine.driftCheckPlans().some((p) => p.providerConfig === 'budgeted')) continue;
      const text = await metrics[i]!.registry.metrics();
      assert.match(text, /k8or_drift_check_budget_share\{provider="aws",provider_config="budgeted"\} 0\.333/);
      assert.match(text, /k8or_drift_check_budget_calls_per_hour\{provider="aws",provider_config="budgeted"\} 1200/);
    }

    // The Event goes out once per Bucket, when the budget first lengthens its interval: with the
    // share the shard planned with then. While the shards came up that may have been a larger one
    // (fewer shards held the ProviderConfig's objects yet); whichever it was, the Event names it, and
    // the calls it allows are that share of the budget.
    const events = await waitFor('an Event that names the budget the interval was lengthened by', async () => {
      const found = [];
      for (const name of names) found.push(...(await world.events(ns, name)).filter((e) => e.reason === Reasons.DriftCheckIntervalLengthened));
      return found.length > 0 ? found : undefined;
    });
    for (const { message } of events) {
      const share = /allows its drift checks (\d+) calls an hour \((?:this shard's 1\/(\d) of )?spec\.driftCheckBudget\.callsPerHour\), shared by its \d+ resources( on this shard)?/.exec(message);
      assert.ok(share, `the Event names the budget: ${message}`);
      const parts = Number(share[2] ?? 1);
      assert.ok(parts >= 1 && parts <= SHARDS.length, message);
      assert.equal(Number(share[1]), BUDGET_PER_HOUR / parts, `the calls it names are its share of the budget: ${message}`);
      assert.equal(share[3] !== undefined, parts > 1, `a shard's share says "on this shard": ${message}`);
    }
  });
});
