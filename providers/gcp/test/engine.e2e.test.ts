import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Bigtable } from '@google-cloud/bigtable';
import { Storage } from '@google-cloud/storage';
import { findCbtemulator } from '@k8or/local-clouds';
import { COLUMN_FAMILIES_ANNOTATION, IDENTITY_FAMILY_PREFIX, ownerLabelKey } from '@k8or/provider-gcp';
import { GcpWorld, conditionOf, isReady, waitFor } from './e2e-world.ts';
import { INSTANCE, PROJECT } from './support.ts';

const emulator = findCbtemulator();
const run = promisify(execFile);

describe('GCP provider through the engine: Kubernetes objects in, Cloud Storage and Bigtable state out', () => {
  let world: GcpWorld;
  let storage: Storage;
  let bigtable: Bigtable | undefined;

  before(async () => {
    world = await GcpWorld.start(!('missing' in emulator));
    storage = new Storage({ apiEndpoint: world.gcs.endpoint, projectId: PROJECT });
    if (world.bigtable) bigtable = new Bigtable({ projectId: PROJECT, apiEndpoint: world.bigtable.host, metricsEnabled: false, universeDomain: 'googleapis.com' });
    await world.startEngine();
  });
  after(async () => {
    await bigtable?.close();
    await world?.stop();
  });

  /** True once some Event of `reason` on the object mentions every one of `words`. */
  const eventMentions = async (objectName: string, reason: string, words: string[]): Promise<boolean> =>
    (await world.events(objectName)).some((e) => e.reason === reason && words.every((w) => e.message.includes(w)));

  it('creates, updates, repairs drift in and force-deletes a Bucket', async () => {
    const name = 'e2e-photos';
    const gcs = storage.bucket(name);
    await world.createBucket('photos', { name, versioning: true, labels: { team: 'a' }, lifecycle: [{ id: 'tmp', prefix: 'tmp/', expirationDays: 7 }] }, { 'k8or.io/resync-period': '1s' });
    const ready = await world.waitForBucket('photos', 'Ready', isReady);
    assert.equal(ready.status?.atProvider?.location, 'EUROPE-WEST1');
    assert.equal(ready.status?.atProvider?.url, `gs://${name}`);
    const [created] = await gcs.getMetadata();
    assert.deepEqual(created.versioning, { enabled: true });
    assert.equal(created.labels?.['team'], 'a');
    assert.equal(created.labels?.[ownerLabelKey('k8or.io/name')], 'photos');
    assert.equal(created.iamConfiguration?.publicAccessPrevention, 'enforced');
    assert.deepEqual(created.lifecycle?.rule, [{ action: { type: 'Delete' }, condition: { age: 7, isLive: true, matchesPrefix: ['tmp/'] } }]);
    assert.ok(world.gcs.requests.some((r) => r.principal === 'k8or-operator@k8or-test-project.iam.gserviceaccount.com'), 'the engine signs in with the Secret\'s key');

    // The user changes the spec: the bucket follows.
    const patched = await world.patchBucket('photos', { spec: { labels: { team: 'b' }, lifecycle: null } });
    await world.waitForBucket('photos', 'the new generation synced', (b) => isReady(b) && b.status?.observedGeneration === patched.metadata.generation);
    const [changed] = await gcs.getMetadata();
    assert.equal(changed.labels?.['team'], 'b');
    assert.equal(changed.lifecycle, undefined);

    // Someone turns versioning off and removes a label behind k8or's back: the next resync puts them back.
    await gcs.setMetadata({ versioning: { enabled: false }, labels: { team: null } });
    await waitFor('versioning re-enabled', async () => (await gcs.getMetadata())[0].versioning?.enabled === true);
    await waitFor('label team restored', async () => (await gcs.getMetadata())[0].labels?.['team'] === 'b');
    await waitFor('a RepairedDrift event naming spec.versioning', () => eventMentions('photos', 'RepairedDrift', ['spec.versioning']));
    await waitFor('a RepairedDrift event naming spec.labels.team', () => eventMentions('photos', 'RepairedDrift', ['spec.labels.team']));

    // A bucket with data is not deleted without forceDelete...
    await gcs.file('album/1.jpg').save('jpeg', { resumable: false });
    await world.deleteBucket('photos');
    const blocked = await world.waitForBucket('photos', 'DeletionBlocked', (b) => conditionOf(b, 'Synced')?.reason === 'DeletionBlocked');
    assert.match(conditionOf(blocked, 'Synced')?.message ?? '', /BucketNotEmpty/);
    assert.equal((await gcs.exists())[0], true);
    // ...and is, with every generation, once the user sets it.
    await world.patchBucket('photos', { spec: { forceDelete: true } });
    await waitFor('the Bucket object gone', async () => (await world.bucket('photos')) === undefined);
    assert.equal((await gcs.exists())[0], false);
  });

  it("never keeps a Bucket named after another project's bucket Terminating: NotOwned, and its delete leaves the bucket and releases the object", async () => {
    // Someone in another project holds the name (an anonymous caller of the fake may act in any project).
    const theirs = new Storage({ apiEndpoint: world.gcs.endpoint, projectId: 'someone-elses-project' });
    await theirs.createBucket('e2e-their-bucket');
    await world.createBucket('theirs', { name: 'e2e-their-bucket' });
    const refused = await world.waitForBucket('theirs', 'NotOwned', (b) => conditionOf(b, 'Synced')?.reason === 'NotOwned');
    assert.equal(conditionOf(refused, 'Synced')?.status, 'False');
    await world.deleteBucket('theirs');
    await waitFor('the Bucket object gone', async () => (await world.bucket('theirs')) === undefined);
    assert.equal((await theirs.bucket('e2e-their-bucket').exists())[0], true, 'their bucket stays');
  });

  it('creates, updates, repairs drift in and deletes a Table', { skip: 'missing' in emulator ? emulator.missing : false }, async () => {
    const id = 'e2e-orders';
    const admin = bigtable?.admin.getTableAdminClient();
    assert.ok(admin);
    const path = `projects/${PROJECT}/instances/${INSTANCE}/tables/${id}`;
    const families = async (): Promise<string[]> => Object.keys((await admin.getTable({ name: path, view: 'FULL' }))[0].columnFamilies ?? {}).filter((id) => !id.startsWith(IDENTITY_FAMILY_PREFIX)).sort();
    await world.createTable('orders', { name: id, sortKey: { name: 'at', type: 'string' } }, { 'k8or.io/resync-period': '1s', [COLUMN_FAMILIES_ANNOTATION]: 'meta' });
    const ready = await world.waitForTable('orders', 'Ready', isReady);
    assert.equal(ready.status?.atProvider?.id, path);
    assert.deepEqual(await families(), ['d', 'meta']);
    try {
      const { stdout } = await run('cbt', ['-project', PROJECT, '-instance', INSTANCE, 'ls'], { env: { ...process.env, BIGTABLE_EMULATOR_HOST: world.bigtable?.host } });
      assert.match(stdout, /^e2e-orders$/m);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    }

    // The user asks for deletion protection: the table follows.
    const patched = await world.patchTable('orders', { spec: { deletionProtection: true } });
    await world.waitForTable('orders', 'the new generation synced', (t) => isReady(t) && t.status?.observedGeneration === patched.metadata.generation);
    await waitFor('deletion protection on', async () => (await admin.getTable({ name: path, view: 'FULL' }))[0].deletionProtection === true);

    // Someone drops the default column family behind k8or's back (protection off first, as Bigtable requires).
    await admin.updateTable({ table: { name: path, deletionProtection: false }, updateMask: { paths: ['deletion_protection'] } });
    await admin.modifyColumnFamilies({ name: path, modifications: [{ id: 'd', drop: true }] });
    await waitFor('column family d restored', async () => (await families()).includes('d'));
    await waitFor('deletion protection restored', async () => (await admin.getTable({ name: path, view: 'FULL' }))[0].deletionProtection === true);
    await waitFor('a RepairedDrift event naming columnFamilies.d', () => eventMentions('orders', 'RepairedDrift', ['columnFamilies.d']));

    // Protected: the delete waits, and never turns the protection off; turned off in Bigtable, the table goes.
    await world.deleteTable('orders');
    await world.waitForTable('orders', 'DeletionBlocked', (t) => conditionOf(t, 'Synced')?.reason === 'DeletionBlocked');
    assert.equal((await admin.getTable({ name: path, view: 'FULL' }))[0].deletionProtection, true);
    await admin.updateTable({ table: { name: path, deletionProtection: false }, updateMask: { paths: ['deletion_protection'] } });
    await world.patchTable('orders', { spec: { deletionProtection: false } });
    await waitFor('the Table object gone', async () => (await world.table('orders')) === undefined);
    await assert.rejects(admin.getTable({ name: path }), (error: { code?: number }) => error.code === 5);
  });

  it('never says Synced for the settings Bigtable cannot apply: SettingsNotApplied names each field', { skip: 'missing' in emulator ? emulator.missing : false }, async () => {
    await world.createTable('ledger', { name: 'e2e-ledger', pointInTimeRecovery: true, labels: { team: 'a' } });
    const table = await world.waitForTable('ledger', 'SettingsNotApplied', (t) => conditionOf(t, 'Synced')?.reason === 'SettingsNotApplied');
    const message = conditionOf(table, 'Synced')?.message ?? '';
    assert.equal(conditionOf(table, 'Synced')?.status, 'False');
    assert.match(message, /spec\.pointInTimeRecovery \(not applied: Bigtable has no point-in-time recovery/);
    assert.match(message, /spec\.labels \(not applied: Bigtable tables carry no labels\)/);
    assert.equal(message.match(/spec\.labels/g)?.length, 1, 'each field once');
    assert.equal(conditionOf(table, 'Ready')?.status, 'True', 'the table itself exists and works');
    await world.deleteTable('ledger');
    await waitFor('the Table object gone', async () => (await world.table('ledger')) === undefined);
  });
});
