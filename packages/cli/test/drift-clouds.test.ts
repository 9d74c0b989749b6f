// Drift policy end to end for Buckets on every cloud (Tables: drift-tables.test.ts), with the operator's engine, the real providers and SDKs
// against the local backends (S3 fake, GCS fake, Azurite). A label is changed in the cloud behind
// k8or's back, as someone with the SDK would, and `k8or reconcile` looks at once:
// - Repair writes it back, and the Event and the operator's log line name the field, old and new;
// - Report shows it and never writes;
// - Hold waits for `k8or approve`; an approval of a difference that changed since is not applied,
//   and a new approval of the new difference is.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GetBucketTaggingCommand, PutBucketTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { Annotations, type Bucket } from '@k8or/api';
import { waitFor } from '@k8or/core/testing';
import { startAzurite, startGcsFake, startS3Fake, type Azurite, type GcsFake, type S3Fake } from '@k8or/local-clouds';
import { destroyStorageClients } from '@k8or/provider-gcp';
import { DriftWorld, WAIT_MS, synced } from './drift-world.ts';

const PROJECT = 'drift-test-project';
const AWS_CREDENTIALS = { accessKeyId: 'AKIADRIFTCLOUDSEXAMPLE', secretAccessKey: 'drift-clouds-secret-access-key' };

/** Reads and changes a bucket's user labels in the cloud, as someone behind k8or's back would. */
interface CloudLabels {
  get(bucket: string): Promise<Record<string, string>>;
  change(bucket: string, labels: Record<string, string>): Promise<void>;
}

describe('drift policy on every cloud: Repair writes back, Report never writes, Hold waits for an approval of exactly the difference', () => {
  const world = new DriftWorld();
  let s3Fake: S3Fake;
  let gcs: GcsFake;
  let azurite: Azurite;
  const reconcileNow = async (object: string) => await world.reconcileNow<Bucket>('Bucket', object);
  const eventsOf = async (object: string, reason: string) => await world.eventsOf(object, reason);
  const writesOf = (object: string) => world.writesOf(object);
  const inSync = async (object: string) => await world.inSync<Bucket>('Bucket', object);

  before(async () => {
    await world.start('drift-clouds-cluster');
    [s3Fake, gcs, azurite] = await Promise.all([startS3Fake(), startGcsFake(), startAzurite()]);
    await world.createSecret('aws-creds', AWS_CREDENTIALS);
    await world.createSecret('azure-creds', { accountKey: azurite.accountKey });
    await world.createProviderConfig('local-aws', {
      provider: 'aws',
      region: 'us-east-1',
      endpoints: { bucket: s3Fake.endpoint },
      credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-creds' } },
    });
    await world.createProviderConfig('local-gcp', { provider: 'gcp', project: PROJECT, endpoints: { bucket: gcs.endpoint } });
    await world.createProviderConfig('local-azure', {
      provider: 'azure',
      storageAccount: azurite.accountName,
      endpoints: { bucket: azurite.blobEndpoint },
      credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'azure-creds' } },
    });
  });

  after(async () => {
    await world.stop();
    await destroyStorageClients();
    await Promise.all([azurite?.stop(), gcs?.stop(), s3Fake?.stop()]);
  });

  async function createBucket(object: string, providerConfig: string, spec: Omit<Bucket['spec'], 'providerConfigRef'>): Promise<void> {
    await world.create<Bucket>('Bucket', object, providerConfig, spec);
  }

  /** Repair (the default): the change is written back, and its record names the field, old and new. */
  async function repairs(cloud: string, providerConfig: string, labels: CloudLabels): Promise<void> {
    const object = `${cloud}-repair`;
    const externalName = `k8or-drift-${cloud}-repair`;
    await createBucket(object, providerConfig, { name: externalName, labels: { team: 'media' } });

    await labels.change(externalName, { team: 'ops' });
    await reconcileNow(object);
    await waitFor(`${object}: repaired in the cloud`, async () => ((await labels.get(externalName)).team === 'media' ? true : undefined), WAIT_MS);
    const [event] = await waitFor(`${object}: a RepairedDrift Event`, async () => ((events) => (events.length > 0 ? events : undefined))(await eventsOf(object, 'RepairedDrift')), WAIT_MS);
    assert.equal(event?.type, 'Warning');
    assert.equal(event?.message, `Repaired drift in Bucket "${externalName}": spec.labels.team: "ops" -> "media".`);
    const repair = writesOf(object).find((w) => w.reason === 'RepairedDrift');
    assert.ok(repair, 'a cloud-write log line for the repair');
    assert.equal(repair.operation, 'update');
    assert.equal(repair.providerConfig, providerConfig);
    assert.equal(repair.externalName, externalName);
    assert.deepEqual(repair.changes, [{ field: 'spec.labels.team', from: 'ops', to: 'media' }]);
    assert.equal(synced(await inSync(object))?.reason, 'ReconcileSuccess');
  }

  /**
   * Report for every label but one held: the held one waits for an approval of exactly its
   * difference (a stale one is not applied), the reported one is never written.
   */
  async function reportsAndHolds(cloud: string, providerConfig: string, labels: CloudLabels): Promise<void> {
    const object = `${cloud}-held`;
    const externalName = `k8or-drift-${cloud}-held`;
    await createBucket(object, providerConfig, {
      name: externalName,
      labels: { team: 'media', env: 'prod' },
      driftPolicy: { default: 'Report', fields: [{ path: 'spec.labels.team', mode: 'Hold' }] },
    });
    const writesBefore = writesOf(object).length;

    await labels.change(externalName, { team: 'ops', env: 'dev' });
    const held = await reconcileNow(object);
    assert.equal(synced(held)?.reason, 'DriftHeld');
    assert.deepEqual(new Set(held.status?.drift?.map((d) => `${d.field}=${d.mode}`)), new Set(['spec.labels.team=Hold', 'spec.labels.env=Report']));
    assert.equal(held.status?.driftCount, 2);
    const seen = held.status?.heldDriftDigest;
    assert.ok(seen);
    assert.deepEqual(await labels.get(externalName), { team: 'ops', env: 'dev' }, 'Report and Hold write nothing');

    // The user approves what they saw, but the cloud changed again meanwhile: not applied.
    await labels.change(externalName, { team: 'qa', env: 'dev' });
    await world.patch('Bucket', object, { metadata: { annotations: { [Annotations.approveDrift]: seen } } });
    const stale = await reconcileNow(object);
    assert.equal(synced(stale)?.reason, 'DriftHeld');
    assert.ok(stale.status?.heldDriftDigest && stale.status.heldDriftDigest !== seen, 'the new difference has its own digest');
    assert.deepEqual(await labels.get(externalName), { team: 'qa', env: 'dev' }, 'an approval of another difference is not applied');
    assert.equal(writesOf(object).length, writesBefore, 'nothing written, nothing on record');

    const approved = await world.approve('Bucket', object);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /spec\.labels\.team: the spec has "media", the cloud has "qa"/);
    assert.doesNotMatch(approved.stdout, /spec\.labels\.env/, 'only the held drift is approved');
    await waitFor(`${object}: the approved drift repaired`, async () => ((await labels.get(externalName)).team === 'media' ? true : undefined), WAIT_MS);
    const after = await world.until<Bucket>('Bucket', object, 'only the reported drift left', (b) => synced(b)?.reason === 'DriftReported');
    assert.deepEqual(after.status?.drift?.map((d) => [d.field, d.mode]), [['spec.labels.env', 'Report']]);
    assert.equal(after.status?.heldDriftDigest, undefined);
    assert.equal(after.metadata.annotations?.[Annotations.approveDrift], undefined, 'the approval is used up');
    assert.equal((await labels.get(externalName)).env, 'dev', 'the reported drift is never written');
    const [event] = await eventsOf(object, 'RepairedApprovedDrift');
    assert.equal(event?.message, `Repaired approved drift in Bucket "${externalName}": spec.labels.team: "qa" -> "media".`);
    assert.deepEqual(
      writesOf(object).slice(writesBefore).map((w) => [w.reason, w.changes]),
      [['RepairedApprovedDrift', [{ field: 'spec.labels.team', from: 'qa', to: 'media' }]]],
      'one write, of the approved field only',
    );
    assert.equal((await eventsOf(object, 'RepairedDrift')).length, 0);
  }

  describe('AWS (S3 SDK against the S3 fake)', () => {
    let s3: S3Client;
    const tagsOf = async (bucket: string) =>
      Object.fromEntries(((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
    // User tags only; the owner tags are kept when the user's change is made, as a console edit would.
    const labels: CloudLabels = {
      get: async (bucket) => Object.fromEntries(Object.entries(await tagsOf(bucket)).filter(([k]) => !k.startsWith('k8or.io/'))),
      change: async (bucket, user) => {
        const owner = Object.entries(await tagsOf(bucket)).filter(([k]) => k.startsWith('k8or.io/'));
        await s3.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: [...owner, ...Object.entries(user)].map(([Key, Value]) => ({ Key, Value })) } }));
      },
    };
    before(() => {
      s3 = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: AWS_CREDENTIALS });
    });
    after(() => s3?.destroy());
    it('Repair', async () => await repairs('aws', 'local-aws', labels));
    it('Report and Hold', async () => await reportsAndHolds('aws', 'local-aws', labels));
  });

  describe('GCP (Cloud Storage SDK against the GCS fake)', () => {
    const storage = () => new Storage({ apiEndpoint: gcs.endpoint, projectId: PROJECT });
    const user = (all: Record<string, string> | undefined) => Object.fromEntries(Object.entries(all ?? {}).filter(([k]) => k === 'team' || k === 'env'));
    const labels: CloudLabels = {
      get: async (bucket) => user((await storage().bucket(bucket).getMetadata())[0].labels as Record<string, string> | undefined),
      // GCS merges labels on a patch: a label not named stays.
      change: async (bucket, changed) => {
        await storage().bucket(bucket).setMetadata({ labels: changed });
      },
    };
    it('Repair', async () => await repairs('gcp', 'local-gcp', labels));
    it('Report and Hold', async () => await reportsAndHolds('gcp', 'local-gcp', labels));
  });

  describe('Azure (Blob SDK against Azurite)', () => {
    const blobs = () => BlobServiceClient.fromConnectionString(azurite.connectionString);
    const user = (metadata: Record<string, string> | undefined) => Object.fromEntries(Object.entries(metadata ?? {}).filter(([k]) => k === 'team' || k === 'env'));
    const labels: CloudLabels = {
      get: async (container) => user((await blobs().getContainerClient(container).getProperties()).metadata),
      change: async (container, changed) => {
        const client = blobs().getContainerClient(container);
        await client.setMetadata({ ...(await client.getProperties()).metadata, ...changed });
      },
    };
    it('Repair', async () => await repairs('azure', 'local-azure', labels));
    it('Report and Hold', async () => await reportsAndHolds('azure', 'local-azure', labels));
  });
});
