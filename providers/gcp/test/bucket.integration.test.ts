import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Storage } from '@google-cloud/storage';
import type { Bucket } from '@k8or/api';
import { DeletionBlockedError, NotOwnedError, RetryableError, TerminalError, type ExternalClient } from '@k8or/core';
import { bucketConnector, destroyStorageClients, ownerLabelKey } from '@k8or/provider-gcp';
import { startGcsFake, type GcsFake } from '@k8or/local-clouds';
import { PROJECT, bucket, call, connectionContext, gcpProviderConfig, serviceAccountKey } from './support.ts';

/** Resolves once `done` holds (checked every 10 ms, for at most 10 s). */
async function waitUntil(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !done(); ) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('Bucket -> Cloud Storage, with the real @google-cloud/storage against the GCS fake', () => {
  let fake: GcsFake;
  let storage: Storage;
  const operator = serviceAccountKey('operator@k8or-test-project.iam.gserviceaccount.com');
  const stranger = serviceAccountKey('someone@other-project-1.iam.gserviceaccount.com', 'other-project-1');
  const secret = { 'credentials.json': operator.json };

  before(async () => {
    fake = await startGcsFake({
      serviceAccounts: {
        [operator.key['client_email'] as string]: { project: PROJECT, publicKeyPem: operator.publicKeyPem },
        [stranger.key['client_email'] as string]: { project: 'other-project-1', publicKeyPem: stranger.publicKeyPem },
      },
    });
    storage = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT });
  });
  after(async () => {
    await destroyStorageClients();
    await fake.stop();
  });

  async function connect(resource: Bucket, secretData: Record<string, string> | undefined = secret): Promise<ExternalClient<Bucket> & { calls: string[] }> {
    const context = connectionContext(gcpProviderConfig({ bucket: fake.endpoint }, { credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'gcp' } } }), resource, secretData);
    return Object.assign(await bucketConnector.connect(resource, context), { calls: context.calls });
  }
  const metadataOf = async (name: string) => (await storage.bucket(name).getMetadata())[0];

  it('creates a bucket with every setting and the owner labels in the one insert call, and observes it up to date', async () => {
    const resource = bucket('photos-team-a', {
      location: 'europe-west1',
      versioning: true,
      encryption: { type: 'CustomerManaged', keyId: 'projects/p/locations/europe-west1/keyRings/r/cryptoKeys/k' },
      lifecycle: [
        { id: 'logs', prefix: 'logs/', expirationDays: 365, transitions: [{ days: 30, tier: 'InfrequentAccess' }, { days: 90, tier: 'Archive' }] },
        { id: 'old-versions', noncurrentVersionExpirationDays: 30 },
      ],
      labels: { team: 'a' },
    });
    const client = await connect(resource);
    assert.equal((await client.observe(resource, call())).exists, false);
    client.calls.length = 0;
    await client.create(resource, call());
    assert.deepEqual(client.calls, ['buckets.insert']);
    const inserted = fake.requests.filter((r) => r.method === 'POST' && r.path === '/storage/v1/b').at(-1);
    assert.equal(inserted?.principal, operator.key['client_email'], 'the insert is signed with the Secret\'s service-account key');

    const observation = await client.observe(resource, call());
    assert.deepEqual(observation.diff, []);
    assert.deepEqual(observation.immutableDiff, []);
    assert.equal(observation.upToDate, true);
    assert.equal(observation.ownerTags?.['k8or.io/kind'], 'Bucket');
    assert.equal(observation.atProvider?.location, 'EUROPE-WEST1');
    assert.equal(observation.atProvider?.url, 'gs://photos-team-a');
    assert.match(String(observation.atProvider?.id), /\/storage\/v1\/b\/photos-team-a$/);
    assert.ok(observation.atProvider?.createdTime);

    const metadata = await metadataOf('photos-team-a');
    assert.deepEqual(metadata.versioning, { enabled: true });
    assert.equal(metadata.iamConfiguration?.publicAccessPrevention, 'enforced');
    assert.equal(metadata.iamConfiguration?.uniformBucketLevelAccess?.enabled, true);
    assert.equal(metadata.encryption?.defaultKmsKeyName, 'projects/p/locations/europe-west1/keyRings/r/cryptoKeys/k');
    assert.equal(metadata.labels?.['team'], 'a');
    assert.equal(metadata.labels?.[ownerLabelKey('k8or.io/managed-by')], 'k8or');
    assert.equal(metadata.lifecycle?.rule?.length, 4);
    assert.ok(metadata.lifecycle?.rule?.some((r) => r.action.type === 'SetStorageClass' && r.action.storageClass === 'NEARLINE' && r.condition.age === 30));
  });

  it('sees drift (versioning off, a label removed, public access prevention relaxed) and repairs it with one conditional patch', async () => {
    const resource = bucket('drifting-bucket', { versioning: true, labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call());
    const gcs = storage.bucket('drifting-bucket');
    await gcs.setMetadata({ versioning: { enabled: false }, labels: { team: null }, iamConfiguration: { publicAccessPrevention: 'inherited' } });

    const drifted = await client.observe(resource, call());
    assert.equal(drifted.upToDate, false);
    assert.deepEqual(drifted.diff?.map((d) => d.field).sort(), ['spec.labels.team', 'spec.publicAccess', 'spec.versioning']);
    assert.deepEqual(drifted.diff?.find((d) => d.field === 'spec.versioning'), { field: 'spec.versioning', desired: true, actual: false });

    client.calls.length = 0;
    await client.update(resource, drifted, call());
    assert.deepEqual(client.calls, ['buckets.patch']);
    const patch = fake.requests.filter((r) => r.method === 'PATCH').at(-1);
    assert.match(patch?.query ?? '', /ifMetagenerationMatch=2/);
    assert.deepEqual((await client.observe(resource, call())).diff, []);
    assert.equal((await metadataOf('drifting-bucket')).versioning?.enabled, true);
  });

  it('does not overwrite a change made after its observe: the patch fails its metageneration precondition and is retried', async () => {
    const resource = bucket('racing-bucket', { versioning: true });
    const client = await connect(resource);
    await client.create(resource, call());
    await storage.bucket('racing-bucket').setMetadata({ versioning: { enabled: false } });
    const observation = await client.observe(resource, call());
    await storage.bucket('racing-bucket').setMetadata({ labels: { added: 'meanwhile' } });
    await assert.rejects(client.update(resource, observation, call()), (error: unknown) => {
      assert.ok(error instanceof RetryableError);
      assert.equal(error.code, 'conditionNotMet');
      return true;
    });
    const fresh = await client.observe(resource, call());
    await client.update(resource, fresh, call());
    assert.deepEqual((await client.observe(resource, call())).diff, []);
    assert.equal((await metadataOf('racing-bucket')).labels?.['added'], undefined, 'the label added behind k8or\'s back is removed: the spec owns the label set');
  });

  it('applies spec changes: lifecycle removed, encryption back to Google-managed, public access allowed; held protections stay; the location is immutable', async () => {
    const resource = bucket('changing-bucket', { location: 'EU', versioning: true, lifecycle: [{ id: 'tmp', prefix: 'tmp/', expirationDays: 1 }], encryption: { type: 'CustomerManaged', keyId: 'projects/p/locations/eu/keyRings/r/cryptoKeys/k' } });
    const client = await connect(resource);
    await client.create(resource, call());
    const changed = bucket('changing-bucket', { location: 'EU', versioning: false, publicAccess: 'Allowed' });
    const observation = await client.observe(changed, call());
    assert.deepEqual(observation.diff?.map((d) => d.field).sort(), ['spec.encryption', 'spec.lifecycle', 'spec.publicAccess', 'spec.versioning']);
    assert.deepEqual(observation.protection?.filter((p) => p.enabled).map((p) => p.field), ['spec.publicAccess', 'spec.versioning']);

    // A resync holds the protections: update gets the spec with the bucket's own values there, and patches only the rest.
    const held = bucket('changing-bucket', { location: 'EU', versioning: true, publicAccess: 'Blocked' });
    await client.update(held, observation, call());
    const kept = await metadataOf('changing-bucket');
    assert.equal(kept.lifecycle, undefined);
    assert.equal(kept.encryption, undefined);
    assert.equal(kept.iamConfiguration?.publicAccessPrevention, 'enforced');
    assert.equal(kept.versioning?.enabled, true);

    // Uniform bucket-level access turned off behind k8or's back is repaired without relaxing the prevention held.
    await storage.bucket('changing-bucket').setMetadata({ iamConfiguration: { uniformBucketLevelAccess: { enabled: false } } });
    await client.update(held, await client.observe(changed, call()), call());
    const repaired = await metadataOf('changing-bucket');
    assert.equal(repaired.iamConfiguration?.uniformBucketLevelAccess?.enabled, true);
    assert.equal(repaired.iamConfiguration?.publicAccessPrevention, 'enforced');

    // The user's new generation (nothing held): the bucket follows.
    await client.update(changed, await client.observe(changed, call()), call());
    assert.deepEqual((await client.observe(changed, call())).diff, []);
    const metadata = await metadataOf('changing-bucket');
    assert.equal(metadata.iamConfiguration?.publicAccessPrevention, 'inherited');
    assert.equal(metadata.versioning?.enabled, false);
    const moved = await client.observe(bucket('changing-bucket', { location: 'us-central1' }), call());
    assert.deepEqual(moved.immutableDiff, [{ field: 'spec.location', desired: 'US-CENTRAL1', actual: 'EU' }]);
  });

  it('reports the owner tags of a bucket whose owner labels were removed as {} (someone else\'s), and update writes them back', async () => {
    const resource = bucket('unlabelled-bucket');
    const client = await connect(resource);
    await client.create(resource, call());
    const labels = (await metadataOf('unlabelled-bucket')).labels ?? {};
    await storage.bucket('unlabelled-bucket').setMetadata({ labels: Object.fromEntries(Object.keys(labels).map((key) => [key, null])) });
    const observation = await client.observe(resource, call());
    assert.deepEqual(observation.ownerTags, {});
    await client.update(resource, observation, call());
    assert.equal((await client.observe(resource, call())).ownerTags?.['k8or.io/name'], 'unlabelled-bucket');
  });

  it('refuses to delete a non-empty bucket without forceDelete (DeletionBlocked), and deletes every generation with it', async () => {
    const resource = bucket('full-bucket', { versioning: true });
    const client = await connect(resource);
    await client.create(resource, call());
    const gcs = storage.bucket('full-bucket');
    for (let i = 0; i < 3; i++) await gcs.file('keep.txt').save(`v${i}`, { resumable: false });
    await assert.rejects(client.delete(resource, call()), (error: unknown) => {
      assert.ok(error instanceof DeletionBlockedError);
      assert.equal(error.code, 'BucketNotEmpty');
      assert.match(error.message, /forceDelete/);
      return true;
    });
    assert.equal((await client.observe(resource, call())).exists, true);
    assert.equal((await gcs.getFiles({ versions: true }))[0].length, 3);

    const forced = bucket('full-bucket', { versioning: true, forceDelete: true });
    await client.delete(forced, call());
    assert.equal((await client.observe(forced, call())).exists, false);
    await client.delete(forced, call());
  });

  it('fails with NotOwnedError when another project owns the name, and never reports its 403 as absence', async () => {
    const theirs = new Storage({ apiEndpoint: fake.endpoint, projectId: 'other-project-1', credentials: stranger.key, useAuthWithCustomEndpoint: true });
    theirs.authClient.useJWTAccessWithScope = true;
    await theirs.createBucket('taken-name');
    const resource = bucket('taken-name');
    const client = await connect(resource);
    // observe and probe say what the create says: the name is another project's, nothing of ours is there (never absence).
    const notOurs = (error: unknown): boolean => {
      assert.ok(error instanceof NotOwnedError, String(error));
      assert.equal(error.code, 'forbidden');
      assert.match(error.message, /buckets\.get failed with 403 forbidden/);
      assert.match(error.message, /not in project k8or-test-project's bucket list: another project owns the name/);
      return true;
    };
    await assert.rejects(client.observe(resource, call()), notOurs);
    await assert.rejects(client.probe?.(resource, call()) ?? Promise.resolve(), notOurs);
    await assert.rejects(client.create(resource, call()), (error: unknown) => {
      assert.ok(error instanceof NotOwnedError);
      assert.match(error.message, /taken by another project/);
      return true;
    });
  });

  it('reports its identity (timeCreated, projectNumber) and its protections as facts; a bucket made again has another identity', async () => {
    const resource = bucket('identified-bucket', { versioning: true });
    const client = await connect(resource);
    await client.create(resource, call());
    const observation = await client.observe(resource, call());
    const metadata = await metadataOf('identified-bucket');
    assert.deepEqual(observation.identity, { timeCreated: new Date(String(metadata.timeCreated)).toISOString(), projectNumber: String(metadata.projectNumber) });
    assert.deepEqual(observation.protection, [
      { field: 'spec.publicAccess', enabled: true },
      { field: 'spec.versioning', enabled: true },
      { field: 'retentionPolicy', enabled: false, blocksDeletion: false },
    ]);
    await client.delete(resource, call());
    await waitUntil(() => Date.now() > new Date(observation.identity?.['timeCreated'] ?? 0).getTime() + 5);
    await client.create(resource, call());
    assert.notDeepEqual((await client.observe(resource, call())).identity, observation.identity);
  });

  it('releases ownership for Retain: one patch removes the owner labels, the user\'s labels and settings stay; a missing bucket is success', async () => {
    const resource = bucket('released-bucket', { versioning: true, labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call());
    await client.release?.(resource, call());
    const metadata = await metadataOf('released-bucket');
    assert.deepEqual(metadata.labels, { team: 'a' });
    assert.equal(metadata.versioning?.enabled, true);
    assert.deepEqual((await client.observe(resource, call())).ownerTags, {});
    await client.release?.(resource, call());
    await client.delete(resource, call());
    await client.release?.(resource, call());
  });

  it('retries rather than calls the name taken when the read after a 409 fails: a 503 is no verdict on ownership', async () => {
    const resource = bucket('busy-name');
    const client = await connect(resource);
    await client.create(resource, call());
    // The repeated insert answers 409 (the name exists); the read that tells whose it is answers 503.
    fake.failNext(1, 503, 'GET');
    await assert.rejects(client.create(resource, call()), (error: unknown) => error instanceof RetryableError && error.code === 'backendError');
    await client.create(resource, call());
  });

  it('succeeds when the create is repeated (its own bucket, its owner labels)', async () => {
    const resource = bucket('repeated-create');
    const client = await connect(resource);
    await client.create(resource, call());
    await client.create(resource, call());
    assert.equal((await client.observe(resource, call())).upToDate, true);
  });

  it('fails terminally on 400 invalid and 403 denied, and retries 429 and 503', async () => {
    const invalid = bucket('kms-bucket', { encryption: { type: 'CustomerManaged', keyId: 'not-a-key' } });
    await assert.rejects((await connect(invalid)).create(invalid, call()), (error: unknown) => error instanceof TerminalError && error.code === 'invalid' && /400 invalid/.test(error.message));
    fake.deny(operator.key['client_email'] as string);
    const denied = bucket('denied-bucket');
    await assert.rejects((await connect(denied)).observe(denied, call()), (error: unknown) => error instanceof TerminalError && error.code === 'forbidden');
    fake.allow(operator.key['client_email'] as string);
    fake.failNext(1, 429);
    await assert.rejects((await connect(denied)).observe(denied, call()), (error: unknown) => error instanceof RetryableError && error.code === 'rateLimitExceeded');
    fake.failNext(1, 503);
    await assert.rejects((await connect(denied)).observe(denied, call()), (error: unknown) => error instanceof RetryableError && error.code === 'backendError');
    assert.equal((await (await connect(denied)).observe(denied, call())).exists, false);
  });

  it('starts nothing once the call is aborted', async () => {
    const resource = bucket('aborted-bucket');
    const client = await connect(resource);
    const controller = new AbortController();
    controller.abort(new Error('leadership lost'));
    const before = fake.requests.length;
    await assert.rejects(client.create(resource, { signal: controller.signal }), (error: unknown) => error instanceof RetryableError && /leadership lost/.test(error.message));
    assert.equal(fake.requests.length, before);
  });

  it("probes with observe's one buckets.get: owner tags from the labels, absence only on 404, a 403 or a 503 thrown", async () => {
    const resource = bucket('probed-bucket', { labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call());
    const observation = await client.observe(resource, call());
    client.calls.length = 0;
    assert.deepEqual(await client.probe?.(resource, call()), { exists: true, ownerTags: observation.ownerTags, identity: observation.identity, protection: observation.protection });
    assert.deepEqual(client.calls, ['buckets.get']);
    assert.equal(observation.ownerTags?.['k8or.io/name'], 'probed-bucket');
    fake.deny(operator.key['client_email'] as string);
    try {
      // A denial of this project's own bucket (its bucket list denied too) stays a denial: never "not ours", never absence.
      await assert.rejects(client.probe?.(resource, call()) ?? Promise.resolve(), (error: unknown) => error instanceof TerminalError && !(error instanceof NotOwnedError) && error.code === 'forbidden');
    } finally {
      fake.allow(operator.key['client_email'] as string);
    }
    fake.failNext(1, 503);
    await assert.rejects(client.probe?.(resource, call()) ?? Promise.resolve(), (error: unknown) => error instanceof RetryableError && error.code === 'backendError');
    await client.delete(resource, call());
    assert.deepEqual(await client.probe?.(resource, call()), { exists: false });
  });

  it('refuses a Secret without a service-account key, naming the key it needs', async () => {
    const resource = bucket('no-key-bucket');
    await assert.rejects(connect(resource, { other: 'x' }), /must hold a service-account JSON key under the key credentials.json/);
  });
});
