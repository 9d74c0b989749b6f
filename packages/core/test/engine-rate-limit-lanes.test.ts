// A drift check's cloud calls wait for their rate-limit tokens in the background lane, behind every
// change's (CloudRateLimits): the engine tells the limiter which calls are a drift check's. Over the
// sandbox API server and the in-memory cloud, with a limit the checks keep busy.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Annotations } from '@k8or/api';
import { CoreMetrics } from '@k8or/core';
import { IN_MEMORY_SERVICE, inMemoryProviderPlugin } from '@k8or/core/testing';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine: the lanes of a rate limit', () => {
  let world: World;

  before(async () => {
    world = await World.start();
  });
  after(async () => world?.stop());

  it('puts exactly the drift checks calls in the background lane, and a change calls in the change lane', async () => {
    const metrics = new CoreMetrics();
    const engine = await world.startEngine({ metrics, providers: new Map([['aws', inMemoryProviderPlugin(world.cloud, { rateLimit: { requestsPerSecond: 20, burst: 2 } })]]) });
    const ns = await world.newNamespace();
    const names = ['one', 'two', 'three'];
    for (const name of names) await world.createBucket(ns, name, {}, { [Annotations.resyncPeriod]: '1s' });
    for (const name of names) await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
    const driftCheckCalls = async (): Promise<number> => Number(/k8or_drift_check_calls_total\{provider="aws",provider_config="default"\} (\d+)/.exec(await metrics.registry.metrics())?.[1] ?? 0);
    await waitFor('drift checks made', async () => (await driftCheckCalls()) >= 6, 60_000, 100);
    // A change while the checks go on: its calls are a change's.
    await world.patchBucket(ns, 'one', { spec: { versioning: true } });
    await world.waitForBucket(ns, 'one', 'the edit applied', (b) => isReadyAndSynced(b) && b.status?.observedGeneration === b.metadata.generation && (b.metadata.generation ?? 0) > 1);
    await engine.stop();

    const state = engine.cloudRateLimits.state('default', IN_MEMORY_SERVICE);
    const checks = await driftCheckCalls();
    assert.ok(state !== undefined && checks > 0);
    assert.equal(state.backgroundCalls, checks, 'every drift check call, and nothing else, waited in the background lane');
    assert.ok(state.calls - state.backgroundCalls >= names.length * 3 + 2, `the creates and the edit went as changes (${state.calls - state.backgroundCalls} calls)`);
    const text = await metrics.registry.metrics();
    assert.match(text, /k8or_cloud_rate_limit_wait_seconds_count\{provider="aws",provider_config="default",service="in-memory",lane="background"\} [1-9]/);
    assert.match(text, /k8or_cloud_rate_limit_wait_seconds_count\{provider="aws",provider_config="default",service="in-memory",lane="change"\} [1-9]/);
  });
});
