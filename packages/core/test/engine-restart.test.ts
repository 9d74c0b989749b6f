import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine restart: resources in sync stay untouched', () => {
  let world: World;

  before(async () => {
    world = await World.start();
  });
  after(async () => world?.stop());

  it('a new engine observes every resource once and writes nothing, to the API server or the cloud', async () => {
    const ns = await world.newNamespace();
    const names = ['photos', 'logs', 'backups', 'media', 'reports'];
    const first = await world.startEngine();
    for (const name of names) await world.createBucket(ns, name, { versioning: true, labels: { team: 'a' } });
    const externalNames: string[] = [];
    for (const name of names) externalNames.push((await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced)).spec.name ?? '');
    // The engine's own writes come back as watch events; let those reconciles finish first.
    await first.stop();

    const from = world.sandbox.requestLog.length;
    const since = Date.now();
    await world.startEngine({ resyncPeriodMs: 3_600_000 });
    await waitFor('every Bucket observed by the new engine', () =>
      externalNames.every((name) => world.cloud.calls.some((c) => c.at >= since && c.name === name && c.operation === 'observe')),
    );
    const queue = bucketController(world).queue;
    await waitFor('the queue drained', () => queue.len() === 0);

    assert.deepEqual(world.engineWrites(from), []);
    assert.deepEqual(
      world.cloud.calls.filter((c) => c.at >= since && c.operation !== 'observe').map((c) => `${c.operation} ${c.name}`),
      [],
    );
    for (const name of names) assert.ok(isReadyAndSynced(await world.bucket(ns, name)));
  });
});

function bucketController(world: World) {
  const controller = world.engines.at(-1)?.controllers.get('Bucket');
  if (!controller) throw new Error('the engine runs no Bucket controller');
  return controller;
}
