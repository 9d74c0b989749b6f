import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { type Engine, type ShardAssigner } from '@k8or/core';
import { callRateReport, inMemoryProviderPlugin } from '@k8or/core/testing';
import { SHARD_RING, World, shardAssigner, isReadyAndSynced, waitFor } from './engine-harness.ts';

// A ProviderConfig's rate limit is the cloud account's: three shards over one in-memory cloud,
// reconciling one ProviderConfig's Buckets together, never call it faster than that one limit
// allows, over any window (counted where the calls arrive, at the cloud).

/** The ProviderConfig's limit: the plugin's default for its one service. */
const LIMIT = { requestsPerSecond: 4, burst: 4 };
/** Calls reach the cloud a moment after they took their token; timers under load fire late. */
const LATENCY_ALLOWANCE_S = 0.25;
const SHARDS = ['shard-a', 'shard-b', 'shard-c'];

describe('engine: shards divide a ProviderConfig\'s rate limits', () => {
  let world: World;
  let assigner: ShardAssigner;
  const assigning = new AbortController();
  const engines: Engine[] = [];
  const sharding = SHARD_RING;
  const plugin = (): ReturnType<typeof inMemoryProviderPlugin> => inMemoryProviderPlugin(world.cloud, { rateLimit: LIMIT });

  before(async () => {
    world = await World.start();
    assigner = await shardAssigner(world, plugin());
  });
  after(async () => {
    assigning.abort();
    assigner?.close();
    await world?.stop();
  });

  it('three shards together keep to the one limit, each spending a third of it', async () => {
    for (const shard of SHARDS) engines.push(await world.startEngine({ identity: shard, providers: new Map([['aws', plugin()]]), sharding: { ...sharding, shard } }));
    await waitFor('every shard holds its Lease', async () => engines.every((e) => e.isLeader()), 60_000, 100);
    void assigner.run(assigning.signal, 300);
    const from = Date.now();
    const ns = await world.newNamespace();
    const names = Array.from({ length: 18 }, (_, i) => `paced-${i}`);
    for (const name of names) await world.createBucket(ns, name);
    for (const name of names) await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);

    const calls = world.cloud.calls.filter((c) => c.at >= from);
    const report = callRateReport(calls.map((c) => c.at), LIMIT, LATENCY_ALLOWANCE_S);
    console.log(`${report.calls} calls in ${report.spanSeconds.toFixed(1)} s, ${report.sustainedPerSecond.toFixed(2)}/s sustained, worst window ${JSON.stringify(report.worstWindow)}`);
    assert.ok(report.calls >= names.length * 2, `the shards called the cloud (${report.calls} calls)`);
    assert.ok(report.withinLimit, `the fleet kept to ${LIMIT.burst} + ${LIMIT.requestsPerSecond}/s: worst window ${JSON.stringify(report.worstWindow)}`);
    // every shard did its part of the work, under a third of the limit
    const working = engines.filter((e) => e.cloudRateLimits.state('default', 'in-memory') !== undefined);
    assert.ok(working.length >= 2, 'the objects are spread over the shards');
    // A shard reads the fleet's split each period: one that last read it while fewer shards held the
    // ProviderConfig's objects spent a larger share until then, and comes to a third at its next read.
    for (const engine of working) {
      await waitFor(`${engine.identity}'s share at a third`, () => engine.cloudRateLimits.state('default', 'in-memory')?.share === 1 / 3, 120_000, 100);
    }
  });
});
