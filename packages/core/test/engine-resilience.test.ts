import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreMetrics, ItemExponentialFailureRateLimiter, Reasons, RetryableError, TerminalError, type Engine } from '@k8or/core';
import { World, condition, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine: lost watches, conflicts and failing clouds', () => {
  let world: World;
  let engine: Engine;
  const metrics = new CoreMetrics();
  async function watchesGone(): Promise<number> {
    const { values } = await metrics.informerWatchRestartsTotal.get();
    return values.filter((v) => v.labels.resource === 'buckets.k8or.io' && v.labels.reason === 'gone').reduce((sum, v) => sum + v.value, 0);
  }

  before(async () => {
    world = await World.start();
    engine = await world.startEngine({ metrics });
  });
  after(async () => world?.stop());

  it('relists after 410 Gone and loses no change', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'compacted');
    const bucket = await world.waitForBucket(ns, 'compacted', 'Ready', isReadyAndSynced);

    // First in this file, before any other dropped watch leaves an informer reconnecting.
    // Start from an idle engine whose watch is surely open (it delivered the latest
    // change), so only the watch can bring the next change in.
    const latest = (await world.bucket(ns, 'compacted'))?.metadata.resourceVersion;
    const controller = engine.controllers.get('Bucket');
    assert.ok(controller);
    await waitFor('an idle engine with a live Bucket watch', () => {
      return controller.informer.lastResourceVersion() === latest && controller.queue.len() === 0 && controller.queue.inFlight() === 0;
    });
    const goneBefore = await watchesGone();
    world.sandbox.dropWatches();
    // The change lands while no watch is open (the informer waits a moment before
    // reconnecting); then the server forgets its history, so resuming answers 410 Gone.
    await world.patchBucket(ns, 'compacted', { spec: { versioning: true, labels: { tier: 'gold' } } });
    world.sandbox.compactHistory();
    const generation = (bucket.metadata.generation ?? 0) + 1;
    await world.waitForBucket(ns, 'compacted', 'the new generation observed', (b) => b.status?.observedGeneration === generation && isReadyAndSynced(b));
    assert.deepEqual(world.cloud.buckets.get(bucket.spec.name ?? '')?.labels, { tier: 'gold' });
    assert.ok((await watchesGone()) > goneBefore, 'the Bucket watch resumed into 410 Gone and the informer relisted');
  });

  it('loses no change when the API server drops every watch', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'dropped');
    const bucket = await world.waitForBucket(ns, 'dropped', 'Ready', isReadyAndSynced);

    world.sandbox.dropWatches();
    await world.patchBucket(ns, 'dropped', { spec: { versioning: true } });
    const generation = (bucket.metadata.generation ?? 0) + 1;
    await world.waitForBucket(ns, 'dropped', 'the new generation observed', (b) => b.status?.observedGeneration === generation && isReadyAndSynced(b));
    assert.equal(world.cloud.buckets.get(bucket.spec.name ?? '')?.versioning, true);
  });

  it('retries a status write that hits a 409 conflict', async () => {
    const ns = await world.newNamespace();
    let created = false;
    let interfered = false;
    const removeHook = world.cloud.onCall(async (call) => {
      if (!call.name.startsWith(`${ns}-`)) return;
      if (call.operation === 'create') created = true;
      else if (created && call.operation === 'observe' && !interfered) {
        // Someone labels the object while the engine is between its read and its status write.
        interfered = true;
        await world.patchBucket(ns, 'contested', { metadata: { labels: { owner: 'someone-else' } } });
      }
    });
    const from = world.sandbox.requestLog.length;
    await world.createBucket(ns, 'contested');
    const bucket = await world.waitForBucket(ns, 'contested', 'Ready', isReadyAndSynced);
    removeHook();
    assert.equal(bucket.metadata.labels?.owner, 'someone-else');
    const statusWrites = world.engineRequests(from).filter((r) => r.resource === 'buckets' && r.subresource === 'status' && r.verb !== 'get');
    assert.ok(statusWrites.some((r) => r.status === 409), 'the first status write met a conflict');
    assert.ok(statusWrites.some((r) => r.status >= 200 && r.status < 300), 'and a retry went through');
  });

  it('backs off from a throttling cloud: the call rate stays bounded and the resource converges', async () => {
    const ns = await world.newNamespace();
    const clear = world.cloud.failWith({ operation: 'create' }, () => new RetryableError('Rate exceeded', { code: 'ThrottlingException' }));
    const windowStart = Date.now();
    await world.createBucket(ns, 'throttled');
    const failing = await world.waitForBucket(ns, 'throttled', 'the throttling reported', (b) => condition(b, 'Synced')?.reason === Reasons.CannotCreateExternalResource);
    assert.match(condition(failing, 'Synced')?.message ?? '', /ThrottlingException: Rate exceeded/);
    const name = failing.spec.name ?? '';
    await sleep(3_000);
    const calls = world.cloud.calls.filter((c) => c.name === name && c.operation === 'create' && c.at >= windowStart);
    clear();
    // Per-item exponential backoff from 5 ms doubles each time: about ten tries in three seconds,
    // where a hot loop would make thousands.
    assert.ok(calls.length >= 2 && calls.length <= 15, `create calls in the window: ${calls.length}`);
    const gaps = calls.slice(1).map((c, i) => c.at - (calls[i]?.at ?? 0));
    assert.ok((gaps.at(-1) ?? 0) > (gaps[0] ?? 0), `gaps grow: ${JSON.stringify(gaps)}`);
    const warnings = (await world.events(ns, 'throttled')).filter((e) => e.reason === Reasons.CannotCreateExternalResource);
    assert.equal(warnings.length, 1, 'repeated failures aggregate into one Event');

    await world.waitForBucket(ns, 'throttled', 'Ready once the cloud recovers', isReadyAndSynced);
  });

  it('does not hot-loop on a terminal error, and tries again when the spec changes', async () => {
    const ns = await world.newNamespace();
    const clear = world.cloud.failWith({ operation: 'create' }, () => new TerminalError('Access Denied', { code: 'AccessDenied' }));
    await world.createBucket(ns, 'denied');
    const failing = await world.waitForBucket(ns, 'denied', 'the terminal error reported', (b) => condition(b, 'Synced')?.reason === Reasons.CannotCreateExternalResource);
    assert.match(condition(failing, 'Synced')?.message ?? '', /AccessDenied: Access Denied/);
    const name = failing.spec.name ?? '';

    await sleep(1_000);
    const settled = world.cloud.callCount({ name });
    await sleep(2_000);
    assert.equal(world.cloud.callCount({ name }), settled, 'no cloud calls while nothing changes');

    clear();
    await world.patchBucket(ns, 'denied', { spec: { versioning: true } });
    await world.waitForBucket(ns, 'denied', 'Ready after the spec change', isReadyAndSynced);
  });
});

describe('engine: a retry a later pass made good', () => {
  let world: World;
  let engine: Engine;
  before(async () => {
    world = await World.start();
    // Retries come slowly, so the retry is still waiting when an event brings the object in sooner.
    engine = await world.startEngine({ rateLimiter: () => new ItemExponentialFailureRateLimiter<string>(30_000, 60_000, 0) });
  });
  after(async () => world?.stop());

  it('is not run again: the pass that succeeded sets the next wake', async () => {
    const ns = await world.newNamespace();
    const key = `${ns}/retried`;
    const controller = engine.controllers.get('Bucket')!;
    let created = false;
    let failed = false;
    const removeHook = world.cloud.onCall((call) => {
      if (!call.name.startsWith(`${ns}-`)) return;
      if (call.operation === 'create') created = true;
      else if (created && call.operation === 'observe' && !failed) {
        failed = true;
        throw new RetryableError('injected: 503 on the observe after the create');
      }
    });
    try {
      await world.createBucket(ns, 'retried');
      await waitFor('the failed pass to leave a retry waiting', () => failed && controller.queue.inFlight() === 0 && controller.queue.nextWakeAt(key) !== undefined);
      const retryAt = controller.queue.nextWakeAt(key);
      await world.patchBucket(ns, 'retried', { metadata: { labels: { team: 'a' } } });
      await world.waitForBucket(ns, 'retried', 'Ready after the event', isReadyAndSynced);
      await waitFor('the pass to finish', () => controller.queue.inFlight() === 0 && controller.queue.len() === 0);
      assert.notEqual(controller.queue.nextWakeAt(key), retryAt, 'the retry the event\'s pass made good is no longer due');
    } finally {
      removeHook();
    }
  });
});
