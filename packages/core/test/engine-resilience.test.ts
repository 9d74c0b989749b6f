import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Reasons, RetryableError, TerminalError } from '@k8or/core';
import { World, condition, isReadyAndSynced } from './engine-harness.ts';

describe('engine: lost watches, conflicts and failing clouds', () => {
  let world: World;

  before(async () => {
    world = await World.start();
    await world.startEngine();
  });
  after(async () => world?.stop());

  it('loses no change when the API server drops every watch', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'dropped');
    const bucket = await world.waitForBucket(ns, 'dropped', 'Ready', isReadyAndSynced);

    world.sandbox.dropWatches();
    await world.patchBucket(ns, 'dropped', { spec: { versioning: true } });
    await world.waitForBucket(ns, 'dropped', 'generation 2 observed', (b) => b.status?.observedGeneration === 2 && isReadyAndSynced(b));
    assert.equal(world.cloud.buckets.get(bucket.spec.name ?? '')?.versioning, true);
  });

  it('relists after 410 Gone and loses no change', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'compacted');
    const bucket = await world.waitForBucket(ns, 'compacted', 'Ready', isReadyAndSynced);

    const from = world.sandbox.requestLog.length;
    world.sandbox.dropWatches();
    world.sandbox.compactHistory();
    await world.patchBucket(ns, 'compacted', { spec: { versioning: true, labels: { tier: 'gold' } } });
    await world.waitForBucket(ns, 'compacted', 'generation 2 observed', (b) => b.status?.observedGeneration === 2 && isReadyAndSynced(b));
    assert.deepEqual(world.cloud.buckets.get(bucket.spec.name ?? '')?.labels, { tier: 'gold' });
    const requests = world.engineRequests(from);
    assert.ok(
      requests.some((r) => r.resource === 'buckets' && r.verb === 'watch' && r.status === 410) ||
        requests.some((r) => r.resource === 'buckets' && r.verb === 'list'),
      'the informer resumed from an expired resourceVersion and relisted',
    );
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
