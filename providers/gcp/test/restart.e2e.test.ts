// A restart costs no cloud calls for Buckets in sync: counted at the GCS fake, through the real
// @google-cloud/storage client the provider uses. Only an object that asks for it (a new
// generation) is reconciled at once; the others wait for their drift-check slot.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GcpWorld, isReady, waitFor } from './e2e-world.ts';

describe('GCP provider through the engine: a restart', () => {
  let world: GcpWorld;

  before(async () => {
    world = await GcpWorld.start(false);
  });
  after(async () => world?.stop());

  const requestsFor = (bucket: string, from: number) =>
    world.gcs.requests.slice(from).filter((r) => r.path === `/storage/v1/b/${bucket}` || r.path.startsWith(`/storage/v1/b/${bucket}/`));

  it('sends no request to Cloud Storage for Buckets in sync, and reconciles an edited one at once', async () => {
    const names = ['restart-photos', 'restart-logs', 'restart-media', 'restart-edited'];
    await world.startEngine();
    for (const name of names) await world.createBucket(name, { name, labels: { team: 'a' } });
    for (const name of names) await world.waitForBucket(name, 'Ready and synced', (b) => isReady(b) && b.status?.observedGeneration === b.metadata.generation);
    await world.engine?.stop();

    const edited = await world.patchBucket('restart-edited', { spec: { labels: { team: 'b' } } });
    const from = world.gcs.requests.length;
    const engine = await world.startEngine();
    await world.waitForBucket('restart-edited', 'the new generation synced', (b) => isReady(b) && b.status?.observedGeneration === edited.metadata.generation);
    const queue = engine.controllers.get('Bucket')?.queue;
    await waitFor('no reconcile due', () => queue?.len() === 0);

    for (const name of names.filter((n) => n !== 'restart-edited')) assert.deepEqual(requestsFor(name, from), [], `${name}: no request after the restart`);
    assert.ok(requestsFor('restart-edited', from).some((r) => r.method === 'PATCH'), 'the edited Bucket was updated at once');
  });
});
