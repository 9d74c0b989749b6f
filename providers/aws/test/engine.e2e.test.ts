import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CreateBucketCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { AwsWorld, KEYS, OTHER_ACCOUNT, SECRET_KEY, conditionOf, isReady, waitFor } from './e2e-world.ts';

describe('AWS provider through the engine: Kubernetes objects in, S3 and DynamoDB state out', () => {
  let world: AwsWorld;
  let s3: S3Client;
  let dynamodb: DynamoDBClient;
  const credentials = { accessKeyId: KEYS.ours, secretAccessKey: SECRET_KEY };

  before(async () => {
    world = await AwsWorld.start();
    s3 = new S3Client({ region: 'us-east-1', endpoint: world.s3.endpoint, forcePathStyle: true, followRegionRedirects: true, credentials });
    dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint: world.dynamodb.endpoint, credentials });
    await world.startEngine();
  });
  after(async () => {
    s3?.destroy();
    dynamodb?.destroy();
    await world?.stop();
  });

  /** True once some Event of `reason` on the object mentions every one of `words`. */
  const eventMentions = async (objectName: string, reason: string, words: string[]): Promise<boolean> =>
    (await world.events(objectName)).some((e) => e.reason === reason && words.every((w) => e.message.includes(w)));

  it('creates (in its region), updates, repairs drift in and force-deletes a Bucket', async () => {
    const Bucket = 'e2e-photos';
    await world.createBucket(
      'photos',
      { name: Bucket, location: 'eu-west-1', versioning: true, labels: { team: 'a' }, lifecycle: [{ id: 'tmp', prefix: 'tmp/', expirationDays: 7 }] },
      { 'k8or.io/resync-period': '1s' },
    );
    const ready = await world.waitForBucket('photos', 'Ready', isReady);
    assert.deepEqual(ready.status?.atProvider?.id, 'arn:aws:s3:::e2e-photos');
    assert.equal(ready.status?.atProvider?.location, 'eu-west-1');
    assert.equal((await s3.send(new GetBucketLocationCommand({ Bucket }))).LocationConstraint, 'eu-west-1');
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status, 'Enabled');
    const tags = (await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? [];
    assert.deepEqual(tags.find((t) => t.Key === 'team'), { Key: 'team', Value: 'a' });
    assert.deepEqual(tags.find((t) => t.Key === 'k8or.io/name'), { Key: 'k8or.io/name', Value: 'photos' });
    assert.equal((await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket }))).Rules?.[0]?.ID, 'tmp');

    // The user changes the spec: the cloud follows.
    const patched = await world.patchBucket('photos', { spec: { labels: { team: 'b' }, lifecycle: null } });
    await world.waitForBucket('photos', 'the new generation synced', (b) => isReady(b) && b.status?.observedGeneration === patched.metadata.generation);
    assert.deepEqual(((await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? []).find((t) => t.Key === 'team'), { Key: 'team', Value: 'b' });
    await assert.rejects(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket })), { name: 'NoSuchLifecycleConfiguration' });

    // Someone suspends versioning and removes a tag behind k8or's back: the next resync puts them back.
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Suspended' } }));
    const current = (await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? [];
    await s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: current.filter((t) => t.Key !== 'team') } }));
    await waitFor('versioning re-enabled', async () => (await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status === 'Enabled');
    await waitFor('tag team restored', async () => ((await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? []).some((t) => t.Key === 'team' && t.Value === 'b'));
    await waitFor('a RepairedDrift event naming spec.versioning', () => eventMentions('photos', 'RepairedDrift', ['spec.versioning']));
    await waitFor('a RepairedDrift event naming spec.labels.team', () => eventMentions('photos', 'RepairedDrift', ['spec.labels.team']));

    // A bucket with data is not deleted without forceDelete...
    await s3.send(new PutObjectCommand({ Bucket, Key: 'album/1.jpg', Body: 'jpeg' }));
    await world.deleteBucket('photos');
    const blocked = await world.waitForBucket('photos', 'DeletionBlocked', (b) => conditionOf(b, 'Synced')?.reason === 'DeletionBlocked');
    assert.match(conditionOf(blocked, 'Synced')?.message ?? '', /BucketNotEmpty/);
    await s3.send(new HeadBucketCommand({ Bucket }));
    // ...and is, with every version, once the user sets it.
    await world.patchBucket('photos', { spec: { forceDelete: true } });
    await waitFor('the Bucket object gone', async () => (await world.bucket('photos')) === undefined);
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket })), { name: 'NotFound' });
  });

  it('creates, updates, repairs drift in and deletes a Table', async () => {
    const TableName = 'e2e-orders';
    await world.createTable(
      'orders',
      { name: TableName, sortKey: { name: 'at', type: 'number' }, billing: { mode: 'provisioned', readCapacity: 2, writeCapacity: 2 }, ttlAttribute: 'expiresAt' },
      { 'k8or.io/resync-period': '1s' },
    );
    const ready = await world.waitForTable('orders', 'Ready', isReady);
    const described = (await dynamodb.send(new DescribeTableCommand({ TableName }))).Table;
    assert.equal(ready.status?.atProvider?.id, described?.TableArn);
    assert.equal(ready.status?.atProvider?.state, 'ACTIVE');
    assert.deepEqual(described?.KeySchema?.map((k) => k.KeyType), ['HASH', 'RANGE']);
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName }));
    assert.deepEqual(ttl.TimeToLiveDescription, { TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });

    const patched = await world.patchTable('orders', { spec: { billing: { mode: 'provisioned', readCapacity: 5, writeCapacity: 3 } } });
    await world.waitForTable('orders', 'the new generation synced', (t) => isReady(t) && t.status?.observedGeneration === patched.metadata.generation);
    assert.equal((await dynamodb.send(new DescribeTableCommand({ TableName }))).Table?.ProvisionedThroughput?.ReadCapacityUnits, 5);

    await dynamodb.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: false } }));
    await waitFor('TTL re-enabled', async () => (await dynamodb.send(new DescribeTimeToLiveCommand({ TableName }))).TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED');
    await waitFor('a RepairedDrift event naming spec.ttlAttribute', () => eventMentions('orders', 'RepairedDrift', ['spec.ttlAttribute']));

    await world.deleteTable('orders');
    await waitFor('the Table object gone', async () => (await world.table('orders')) === undefined);
    await assert.rejects(dynamodb.send(new DescribeTableCommand({ TableName })), { name: 'ResourceNotFoundException' });
  });

  it('never says Synced for a Table whose point-in-time recovery and labels DynamoDB Local cannot apply: SettingsNotApplied names both fields', async () => {
    await world.createTable('recoverable', { name: 'e2e-recoverable', pointInTimeRecovery: true, labels: { team: 'a' } });
    const reported = await world.waitForTable('recoverable', 'Synced False with SettingsNotApplied', (t) => conditionOf(t, 'Synced')?.reason === 'SettingsNotApplied');
    const synced = conditionOf(reported, 'Synced');
    assert.equal(synced?.status, 'False');
    assert.match(synced?.message ?? '', /spec\.pointInTimeRecovery/);
    assert.match(synced?.message ?? '', /spec\.labels/);
    assert.equal(synced?.message?.split('spec.pointInTimeRecovery').length, 2, 'each field named once');
    assert.notEqual(synced?.message, 'The cloud resource matches the spec.');
    // kubectl wait --for=condition=Ready has a condition to read: it never hangs on a missing one.
    assert.ok(conditionOf(reported, 'Ready')?.reason);
    assert.equal((await dynamodb.send(new DescribeTableCommand({ TableName: 'e2e-recoverable' }))).Table?.TableStatus, 'ACTIVE');
  });

  it('ends in NotOwned when another account owns the name, and never deletes it', async () => {
    const someoneElse = new S3Client({ region: 'us-east-1', endpoint: world.s3.endpoint, forcePathStyle: true, credentials: OTHER_ACCOUNT });
    await someoneElse.send(new CreateBucketCommand({ Bucket: 'e2e-taken' }));
    await world.createBucket('taken', { name: 'e2e-taken' });
    const stopped = await world.waitForBucket('taken', 'a terminal condition', (b) => conditionOf(b, 'Synced')?.status === 'False');
    assert.equal(conditionOf(stopped, 'Synced')?.reason, 'NotOwned');
    assert.match(conditionOf(stopped, 'Synced')?.message ?? '', /another AWS account owns the name/);
    await world.deleteBucket('taken');
    // k8or never managed it (no finalizer, no create marker): the object goes, the bucket stays.
    await waitFor('the Bucket object gone', async () => (await world.bucket('taken')) === undefined);
    await someoneElse.send(new HeadBucketCommand({ Bucket: 'e2e-taken' }));
    assert.equal(world.s3.requests.filter((r) => r.bucket === 'e2e-taken' && r.method === 'DELETE').length, 0);
    someoneElse.destroy();
  });

  it('keeps the finalizer and the bucket when the credentials are denied after create, and deletes once they work again', async () => {
    const Bucket = 'e2e-revoked';
    // A terminal error waits for the next resync: make it come soon.
    await world.createBucket('revoked', { name: Bucket, providerConfigRef: { name: 'revocable' } }, { 'k8or.io/resync-period': '1s' });
    await world.waitForBucket('revoked', 'Ready', isReady);
    world.s3.denyAccessKey(KEYS.revocable);
    await world.deleteBucket('revoked');
    const stuck = await world.waitForBucket('revoked', 'a condition carrying AccessDenied', (b) => /AccessDenied/.test(conditionOf(b, 'Synced')?.message ?? ''));
    assert.equal(conditionOf(stuck, 'Synced')?.status, 'False');
    assert.ok(stuck.metadata.finalizers?.length, 'the finalizer stays while the cloud cannot be asked');
    await s3.send(new HeadBucketCommand({ Bucket }));

    world.s3.allowAccessKey(KEYS.revocable);
    await waitFor('the Bucket object gone', async () => (await world.bucket('revoked')) === undefined);
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket })), { name: 'NotFound' });
  });

  it('makes no cloud write and no RepairedDrift event on no-op resyncs of a bucket with lifecycle rules, whatever their key order', async () => {
    const Bucket = 'e2e-steady';
    // Keys as kubectl and Go servers send them: sorted.
    const lifecycle = [
      { enabled: true, expirationDays: 365, id: 'logs', prefix: 'logs/', transitions: [{ days: 30, tier: 'InfrequentAccess' as const }, { days: 90, tier: 'Archive' as const }] },
      { abortIncompleteUploadDays: 7, id: 'uploads', noncurrentVersionExpirationDays: 30 },
    ];
    await world.createBucket('steady', { name: Bucket, versioning: true, labels: { team: 'a' }, lifecycle }, { 'k8or.io/resync-period': '200ms' });
    await world.waitForBucket('steady', 'Ready', isReady);
    const requestsOf = (method: string, subresource?: string) =>
      world.s3.requests.filter((r) => r.bucket === Bucket && r.method === method && (subresource === undefined || r.subresource === subresource)).length;
    const writes = () => requestsOf('PUT') + requestsOf('DELETE') + requestsOf('POST');
    const writesWhenReady = writes();
    const observed = requestsOf('GET', 'location');
    await waitFor('ten more resyncs', () => requestsOf('GET', 'location') >= observed + 10);
    assert.equal(writes(), writesWhenReady, 'cloud writes during no-op resyncs');
    assert.equal((await world.events('steady')).filter((e) => e.reason === 'RepairedDrift').length, 0);
  });

  it('ends in a terminal condition carrying AccessDenied when the credentials may not act', async () => {
    await world.createBucket('forbidden', { name: 'e2e-forbidden', providerConfigRef: { name: 'denied' } });
    const stopped = await world.waitForBucket('forbidden', 'a terminal condition', (b) => conditionOf(b, 'Synced')?.status === 'False');
    assert.match(conditionOf(stopped, 'Synced')?.message ?? '', /AccessDenied/);
    assert.notEqual(conditionOf(stopped, 'Ready')?.status, 'True');
  });

  it('ends in a terminal condition carrying InvalidLocationConstraint for a location S3 does not know', async () => {
    await world.createBucket('nowhere', { name: 'e2e-nowhere', location: 'moon-base-1' });
    const stopped = await world.waitForBucket('nowhere', 'a terminal condition', (b) => conditionOf(b, 'Synced')?.status === 'False');
    assert.equal(conditionOf(stopped, 'Synced')?.reason, 'CannotCreateExternalResource');
    assert.match(conditionOf(stopped, 'Synced')?.message ?? '', /InvalidLocationConstraint/);
  });

  it('retries through S3 throttling (SlowDown) until the bucket is made', async () => {
    world.s3.slowDown(4, KEYS.throttled);
    await world.createBucket('throttled', { name: 'e2e-throttled', providerConfigRef: { name: 'throttled' } });
    await world.waitForBucket('throttled', 'Ready', isReady);
    await waitFor('a warning Event carrying SlowDown', () => eventMentions('throttled', 'CannotObserveExternalResource', ['SlowDown']));
    const throttledAnswers = world.s3.requests.filter((r) => r.accessKeyId === KEYS.throttled && r.code === 'SlowDown');
    assert.equal(throttledAnswers.length, 4);
    const throttledClient = new S3Client({ region: 'us-east-1', endpoint: world.s3.endpoint, forcePathStyle: true, credentials: { accessKeyId: KEYS.throttled, secretAccessKey: SECRET_KEY } });
    assert.equal((await throttledClient.send(new HeadBucketCommand({ Bucket: 'e2e-throttled' }))).BucketRegion, 'us-east-1');
    throttledClient.destroy();
  });

  it('leaves a bucket of our own account that k8or did not create alone (NotOwned), and takes it over with k8or.io/adopt', async () => {
    const Bucket = 'e2e-preexisting';
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [{ Key: 'owner', Value: 'legacy-terraform' }] } }));
    await world.createBucket('preexisting', { name: Bucket, versioning: true });
    const stopped = await world.waitForBucket('preexisting', 'NotOwned', (b) => conditionOf(b, 'Synced')?.reason === 'NotOwned');
    assert.match(conditionOf(stopped, 'Synced')?.message ?? '', /k8or\.io\/adopt/);
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status, undefined);

    await world.patchBucket('preexisting', { metadata: { annotations: { 'k8or.io/adopt': 'true' } } });
    await world.waitForBucket('preexisting', 'Ready after adoption', isReady);
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status, 'Enabled');
    const tags = (await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? [];
    assert.deepEqual(tags.find((t) => t.Key === 'k8or.io/name'), { Key: 'k8or.io/name', Value: 'preexisting' });
    // The spec owns the tag set: the legacy tag is gone once k8or manages the bucket.
    assert.equal(tags.find((t) => t.Key === 'owner'), undefined);
  });
});
