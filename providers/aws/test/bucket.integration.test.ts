import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  DeleteBucketTaggingCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  DeleteObjectCommand,
  CreateBucketCommand,
  DeletePublicAccessBlockCommand,
  PutPublicAccessBlockCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { DeletionBlockedError, NotOwnedError, RetryableError, TerminalError, type ExternalClient } from '@k8or/core';
import { bucketConnector, destroyS3Clients } from '@k8or/provider-aws';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';
import type { Bucket } from '@k8or/api';
import { ACCESS_KEY, awsProviderConfig, bucket, call, connectionContext, credentials } from './support.ts';

describe('Bucket -> S3, with the real S3 client against the S3 fake', () => {
  let fake: S3Fake;
  let s3: S3Client;
  const s3For = (region: string, accessKeyId = ACCESS_KEY, secretAccessKey = credentials.secretAccessKey): S3Client =>
    new S3Client({ region, endpoint: fake.endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });

  const OTHER_ACCOUNT_KEY = 'AKIASOMEONEELSE00001';
  const DENIED_KEY = 'AKIADENIED0000000001';

  before(async () => {
    // Signatures are verified: the provider must sign with the secret from the ProviderConfig's Secret.
    fake = await startS3Fake({ credentials: { [ACCESS_KEY]: credentials.secretAccessKey, [OTHER_ACCOUNT_KEY]: 'other-secret', [DENIED_KEY]: 'denied-secret' } });
    s3 = s3For('us-east-1');
  });
  after(async () => {
    s3.destroy();
    destroyS3Clients();
    await fake.stop();
  });

  async function connect(resource: Bucket, region = 'us-east-1'): Promise<ExternalClient<Bucket> & { calls: string[] }> {
    const context = connectionContext(awsProviderConfig({ bucket: fake.endpoint }, region), resource);
    const client = await bucketConnector.connect(resource, context);
    return Object.assign(client, { calls: context.calls });
  }

  it('creates a bucket with every managed setting, and observes it up to date', async () => {
    const resource = bucket('photos-team-a', {
      location: 'eu-west-1',
      versioning: true,
      publicAccess: 'Blocked',
      encryption: { type: 'CustomerManaged', keyId: 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
      lifecycle: [
        { id: 'logs', prefix: 'logs/', expirationDays: 365, transitions: [{ days: 90, tier: 'Archive' }, { days: 30, tier: 'InfrequentAccess' }] },
        { id: 'old-versions', noncurrentVersionExpirationDays: 30, abortIncompleteUploadDays: 7 },
      ],
      labels: { team: 'a', cost: 'photos' },
    });
    const client = await connect(resource);
    assert.equal((await client.observe(resource, call)).exists, false);
    await client.create(resource, call);

    const observation = await client.observe(resource, call);
    assert.deepEqual(observation.diff, []);
    assert.equal(observation.upToDate, true);
    assert.equal(observation.ready, true);
    assert.deepEqual(observation.atProvider, { id: 'arn:aws:s3:::photos-team-a', location: 'eu-west-1', url: `${fake.endpoint}/photos-team-a` });
    assert.equal(observation.ownerTags?.['k8or.io/name'], 'photos-team-a');

    const eu = s3For('eu-west-1');
    const Bucket = 'photos-team-a';
    assert.equal((await eu.send(new GetBucketLocationCommand({ Bucket }))).LocationConstraint, 'eu-west-1');
    assert.equal((await eu.send(new GetBucketVersioningCommand({ Bucket }))).Status, 'Enabled');
    const encryption = await eu.send(new GetBucketEncryptionCommand({ Bucket }));
    assert.deepEqual(encryption.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault, {
      SSEAlgorithm: 'aws:kms',
      KMSMasterKeyID: 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    });
    const lifecycle = await eu.send(new GetBucketLifecycleConfigurationCommand({ Bucket }));
    const logs = lifecycle.Rules?.find((r) => r.ID === 'logs');
    assert.deepEqual(logs?.Transitions, [{ Days: 30, StorageClass: 'STANDARD_IA' }, { Days: 90, StorageClass: 'GLACIER' }]);
    assert.deepEqual(logs?.Filter, { Prefix: 'logs/' });
    const tags = (await eu.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? [];
    assert.deepEqual(tags.find((t) => t.Key === 'team'), { Key: 'team', Value: 'a' });
    assert.deepEqual(tags.find((t) => t.Key === 'k8or.io/managed-by'), { Key: 'k8or.io/managed-by', Value: 'k8or' });
    eu.destroy();
  });

  it('creates in us-east-1 without a LocationConstraint, and create can be repeated', async () => {
    const resource = bucket('plain-us-east-1');
    const client = await connect(resource);
    await client.create(resource, call);
    await client.create(resource, call);
    assert.equal((await s3.send(new HeadBucketCommand({ Bucket: 'plain-us-east-1' }))).BucketRegion, 'us-east-1');
    const observation = await client.observe(resource, call);
    assert.deepEqual(observation.diff, []);
    assert.equal(observation.atProvider?.location, 'us-east-1');
    const pab = await s3.send(new GetPublicAccessBlockCommand({ Bucket: 'plain-us-east-1' }));
    assert.equal(pab.PublicAccessBlockConfiguration?.BlockPublicPolicy, true);
  });

  it('reports a bucket found in another region than the spec asks as an immutable difference', async () => {
    const created = bucket('moved-bucket', { location: 'eu-west-1' });
    await (await connect(created)).create(created, call);
    // The spec now names another region (spec.location is immutable; a ProviderConfig region change does this too).
    const elsewhere = bucket('moved-bucket', { location: 'us-west-2' });
    const observation = await (await connect(elsewhere)).observe(elsewhere, call);
    assert.equal(observation.exists, true);
    assert.deepEqual(observation.immutableDiff, [{ field: 'spec.location', desired: 'us-west-2', actual: 'eu-west-1' }]);
    assert.deepEqual(observation.diff, []);
    assert.equal(observation.atProvider?.location, 'eu-west-1');
  });

  it('sees drift made behind its back as a diff naming the field, and repairs it with update', async () => {
    const resource = bucket('drifting-bucket', { versioning: true, labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call);
    const Bucket = 'drifting-bucket';
    await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Suspended' } }));
    const tags = (await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet ?? [];
    await s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: tags.filter((t) => t.Key !== 'team') } }));
    await s3.send(new DeletePublicAccessBlockCommand({ Bucket }));

    const drifted = await client.observe(resource, call);
    assert.equal(drifted.upToDate, false);
    assert.deepEqual(drifted.diff?.map((d) => d.field).sort(), ['spec.labels.team', 'spec.publicAccess', 'spec.versioning']);
    assert.deepEqual(drifted.diff?.find((d) => d.field === 'spec.versioning'), { field: 'spec.versioning', desired: true, actual: false });

    client.calls.length = 0;
    await client.update(resource, drifted, call);
    assert.deepEqual(client.calls.sort(), ['PutBucketTagging', 'PutBucketVersioning', 'PutPublicAccessBlock']);
    assert.deepEqual((await client.observe(resource, call)).diff, []);
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status, 'Enabled');
  });

  it('applies a spec change: versioning off becomes Suspended, public access opens, labels and lifecycle follow', async () => {
    const resource = bucket('changing-bucket', { versioning: true, labels: { team: 'a' }, lifecycle: [{ id: 'tmp', prefix: 'tmp/', expirationDays: 1 }] });
    const client = await connect(resource);
    await client.create(resource, call);
    const changed = bucket('changing-bucket', { versioning: false, labels: { team: 'b' }, publicAccess: 'Allowed' });
    const observation = await client.observe(changed, call);
    assert.deepEqual(observation.diff?.map((d) => d.field).sort(), ['spec.labels.team', 'spec.lifecycle', 'spec.publicAccess', 'spec.versioning']);
    await client.update(changed, observation, call);
    assert.deepEqual((await client.observe(changed, call)).diff, []);
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket: 'changing-bucket' }))).Status, 'Suspended');
    await assert.rejects(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'changing-bucket' })), { name: 'NoSuchLifecycleConfiguration' });
  });

  it('leaves a protection alone when given the cloud\'s value (a protection the engine holds on a resync): versioning and the public access block stay', async () => {
    const resource = bucket('held-bucket', { versioning: true });
    const client = await connect(resource);
    await client.create(resource, call);
    const unprotected = bucket('held-bucket', { versioning: false, publicAccess: 'Allowed', labels: { team: 'b' } });
    const observation = await client.observe(unprotected, call);
    assert.deepEqual(observation.protection, [{ field: 'spec.publicAccess', enabled: true }, { field: 'spec.versioning', enabled: true }]);
    const held = bucket('held-bucket', { versioning: true, publicAccess: 'Blocked', labels: { team: 'b' } });
    client.calls.length = 0;
    await client.update(held, observation, call);
    assert.deepEqual(client.calls, ['PutBucketTagging']);
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket: 'held-bucket' }))).Status, 'Enabled');
    assert.equal((await s3.send(new GetPublicAccessBlockCommand({ Bucket: 'held-bucket' }))).PublicAccessBlockConfiguration?.BlockPublicPolicy, true);
  });

  it('never lowers a partial public access block set outside k8or (its portable value is Allowed, what the spec asks)', async () => {
    const Bucket = 'open-bucket';
    const resource = bucket(Bucket, { publicAccess: 'Allowed' });
    const client = await connect(resource);
    await client.create(resource, call);
    assert.deepEqual((await client.observe(resource, call)).diff, []);
    await s3.send(new PutPublicAccessBlockCommand({ Bucket, PublicAccessBlockConfiguration: { BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: false, RestrictPublicBuckets: false } }));
    const drifted = await client.observe(resource, call);
    assert.deepEqual(drifted.diff, [{ field: 'spec.publicAccess', desired: 'Allowed', actual: 'Allowed' }]);
    assert.deepEqual(drifted.protection?.[0], { field: 'spec.publicAccess', enabled: true });
    client.calls.length = 0;
    await client.update(resource, drifted, call);
    assert.deepEqual(client.calls, []);
    assert.equal((await s3.send(new GetPublicAccessBlockCommand({ Bucket }))).PublicAccessBlockConfiguration?.BlockPublicAcls, true);
  });

  it('reports its identity (ListBuckets CreationDate) and its protections (public access block, versioning) as facts', async () => {
    const resource = bucket('identified-bucket', { versioning: true });
    const client = await connect(resource);
    await client.create(resource, call);
    const observation = await client.observe(resource, call);
    const listed = (await s3.send(new ListBucketsCommand({}))).Buckets?.find((b) => b.Name === 'identified-bucket');
    assert.deepEqual(observation.identity, { creationDate: listed?.CreationDate?.toISOString() });
    assert.deepEqual(observation.protection, [
      { field: 'spec.publicAccess', enabled: true },
      { field: 'spec.versioning', enabled: true },
    ]);
  });

  it('releases ownership for Retain: the owner tags go, the labels and every setting stay; a missing bucket is success', async () => {
    const resource = bucket('released-bucket', { versioning: true, labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call);
    await client.release?.(resource, call);
    const tags = (await s3.send(new GetBucketTaggingCommand({ Bucket: 'released-bucket' }))).TagSet ?? [];
    assert.deepEqual(tags.map((t) => [t.Key, t.Value]), [['team', 'a']]);
    assert.deepEqual((await client.observe(resource, call)).ownerTags, {});
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket: 'released-bucket' }))).Status, 'Enabled');
    await client.release?.(resource, call);

    const bare = bucket('released-bare');
    const bareClient = await connect(bare);
    await bareClient.create(bare, call);
    await bareClient.release?.(bare, call);
    await assert.rejects(s3.send(new GetBucketTaggingCommand({ Bucket: 'released-bare' })), { name: 'NoSuchTagSet' });
    await bareClient.delete(bare, call);
    await bareClient.release?.(bare, call);
  });

  it('reports a bucket whose tags were all removed with no owner tags ({}), and the missing ones as drift', async () => {
    const resource = bucket('untagged-bucket');
    const client = await connect(resource);
    await client.create(resource, call);
    await s3.send(new DeleteBucketTaggingCommand({ Bucket: 'untagged-bucket' }));
    const observation = await client.observe(resource, call);
    assert.deepEqual(observation.ownerTags, {});
    assert.ok(observation.diff?.some((d) => d.field === 'ownerTags.k8or.io/managed-by'));
  });

  it('refuses to delete a non-empty bucket without forceDelete, with the BucketNotEmpty code', async () => {
    const resource = bucket('full-bucket');
    const client = await connect(resource);
    await client.create(resource, call);
    await s3.send(new PutObjectCommand({ Bucket: 'full-bucket', Key: 'keep.txt', Body: 'data' }));
    await assert.rejects(client.delete(resource, call), (error: unknown) => {
      assert.ok(error instanceof DeletionBlockedError);
      assert.equal(error.code, 'BucketNotEmpty');
      assert.match(error.message, /forceDelete/);
      return true;
    });
    assert.equal((await client.observe(resource, call)).exists, true);
  });

  it('empties a versioned bucket (every version and delete marker, across pages) with forceDelete', async () => {
    const resource = bucket('versioned-full', { versioning: true, forceDelete: true });
    const client = await connect(resource);
    await client.create(resource, call);
    const Bucket = 'versioned-full';
    // 1,100 versions over 600 keys: more than one 1,000-entry page.
    for (let batch = 0; batch < 22; batch++) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => batch * 50 + j).map((i) => s3.send(new PutObjectCommand({ Bucket, Key: `obj-${i % 600}`, Body: `v${i}` }))));
    }
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'obj-1' }));
    const versions = await s3.send(new ListObjectVersionsCommand({ Bucket }));
    assert.equal(versions.IsTruncated, true);
    assert.equal((versions.Versions?.length ?? 0) + (versions.DeleteMarkers?.length ?? 0), 1000);

    await client.delete(resource, call);
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket })), { name: 'NotFound' });
    assert.equal((await client.observe(resource, call)).exists, false);
    await client.delete(resource, call);
  });

  it('deletes an empty bucket, and deleting a missing bucket succeeds', async () => {
    const resource = bucket('short-lived');
    const client = await connect(resource);
    await client.create(resource, call);
    await client.delete(resource, call);
    await client.delete(resource, call);
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket: 'short-lived' })), { name: 'NotFound' });
  });

  it('fails with NotOwnedError when another account owns the name, on observe (AccessDenied, not in our ListBuckets) and on create (BucketAlreadyExists)', async () => {
    const someoneElse = s3For('us-east-1', OTHER_ACCOUNT_KEY, 'other-secret');
    await someoneElse.send(new CreateBucketCommand({ Bucket: 'taken-name' }));
    someoneElse.destroy();
    const resource = bucket('taken-name');
    const client = await connect(resource);
    await assert.rejects(client.observe(resource, call), (error: unknown) => {
      assert.ok(error instanceof NotOwnedError);
      assert.equal(error.code, 'AccessDenied');
      assert.match(error.message, /another AWS account/);
      return true;
    });
    await assert.rejects(client.create(resource, call), (error: unknown) => {
      assert.ok(error instanceof NotOwnedError);
      assert.equal(error.code, 'BucketAlreadyExists');
      assert.match(error.message, /BucketAlreadyExists/);
      return true;
    });
    await assert.rejects(client.delete(resource, call), { code: 'AccessDenied', retryable: false });
  });

  it('fails terminally with AccessDenied when the credentials may not act', async () => {
    const resource = bucket('forbidden-bucket');
    fake.denyAccessKey(DENIED_KEY);
    const context = connectionContext(awsProviderConfig({ bucket: fake.endpoint }), resource, { accessKeyId: DENIED_KEY, secretAccessKey: 'denied-secret' });
    const client = await bucketConnector.connect(resource, context);
    await assert.rejects(client.create(resource, call), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.equal(error.retryable, false);
      assert.equal(error.code, 'AccessDenied');
      return true;
    });
  });

  it('writes the owner tags and labels in the CreateBucket call itself: a crash right after it leaves a bucket that says whose it is', async () => {
    const resource = bucket('crash-after-create', { location: 'eu-west-1', labels: { team: 'a' } });
    const context = connectionContext(awsProviderConfig({ bucket: fake.endpoint }), resource);
    // The process dies as soon as CreateBucket has returned: no later call happens.
    const crashing = { ...context, recordCall: async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
      if (context.calls.includes('CreateBucket')) throw new Error('the operator process died');
      return await context.recordCall(operation, call);
    } };
    await assert.rejects((await bucketConnector.connect(resource, crashing)).create(resource, call), /process died/);
    assert.deepEqual(context.calls, ['CreateBucket']);

    const observation = await (await connect(resource)).observe(resource, call);
    assert.equal(observation.exists, true);
    assert.deepEqual(observation.ownerTags, context.ownerTags);
    const tags = (await s3For('eu-west-1').send(new GetBucketTaggingCommand({ Bucket: 'crash-after-create' }))).TagSet ?? [];
    assert.deepEqual(tags.find((t) => t.Key === 'team'), { Key: 'team', Value: 'a' });
    assert.equal(fake.requests.filter((r) => r.bucket === 'crash-after-create' && r.subresource === 'tagging' && r.method === 'PUT').length, 0);
  });

  it('reports an untagged bucket with empty owner tags (not unknown ones): S3 buckets have tags', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'bare-bucket' }));
    const resource = bucket('bare-bucket');
    const observation = await (await connect(resource)).observe(resource, call);
    assert.equal(observation.exists, true);
    assert.deepEqual(observation.ownerTags, {});
  });

  it('sees lifecycle rules written with their keys in any order as up to date, and a no-op resync writes nothing', async () => {
    // As kubectl and Go servers send them: keys sorted, the reverse of the order the provider reads them back in.
    const sortedKeys = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(sortedKeys)
        : typeof value === 'object' && value !== null ? Object.fromEntries(Object.keys(value).sort().reverse().map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]))
          : value;
    const spec = {
      versioning: true,
      encryption: { type: 'CustomerManaged' as const, keyId: 'alias/data' },
      lifecycle: [
        { id: 'logs', enabled: true, prefix: 'logs/', expirationDays: 365, transitions: [{ days: 30, tier: 'InfrequentAccess' as const }, { days: 90, tier: 'Archive' as const }] },
        { id: 'uploads', abortIncompleteUploadDays: 7, noncurrentVersionExpirationDays: 30 },
      ],
      labels: { team: 'a', cost: 'logs' },
    };
    for (const [name, ordered] of [['keys-as-written', spec], ['keys-reversed', sortedKeys(spec)]] as const) {
      const resource = bucket(name, ordered as typeof spec);
      const client = await connect(resource);
      await client.create(resource, call);
      const writesBefore = fake.requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD').length;
      // A resync: observe, and update only what the observation found different.
      for (let resync = 0; resync < 3; resync++) {
        const observation = await client.observe(resource, call);
        assert.deepEqual(observation.diff, [], name);
        assert.equal(observation.upToDate, true, name);
        if (!observation.upToDate) await client.update(resource, observation, call);
      }
      assert.equal(fake.requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD').length, writesBefore, `${name}: cloud writes during no-op resyncs`);
    }
  });

  it('never reads AccessDenied on an existing bucket as absence: observe and delete fail terminally and the bucket stays', async () => {
    const resource = bucket('denied-later');
    await (await connect(resource)).create(resource, call);
    // The credentials change (or lose their permissions) after the bucket was made.
    fake.denyAccessKey(DENIED_KEY);
    const context = connectionContext(awsProviderConfig({ bucket: fake.endpoint }), resource, { accessKeyId: DENIED_KEY, secretAccessKey: 'denied-secret' });
    const denied = await bucketConnector.connect(resource, context);
    await assert.rejects(denied.observe(resource, call), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.ok(!(error instanceof NotOwnedError));
      assert.equal(error.code, 'AccessDenied');
      assert.match(error.message, /GetBucketLocation failed with AccessDenied/);
      return true;
    });
    await assert.rejects(denied.delete(resource, call), { code: 'AccessDenied', retryable: false });
    assert.equal((await s3.send(new HeadBucketCommand({ Bucket: 'denied-later' }))).BucketRegion, 'us-east-1');
  });

  for (const region of ['eu-west-1', 'us-east-1']) {
    it(`never takes over a bucket of the same account that k8or did not create (${region}: ${region === 'us-east-1' ? '200 on re-create' : 'BucketAlreadyOwnedByYou'})`, async () => {
      const Bucket = `someone-elses-${region}`;
      const colleague = s3For(region);
      await colleague.send(new CreateBucketCommand({ Bucket, ...(region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: region as 'eu-west-1' } }) }));
      await colleague.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [{ Key: 'owner', Value: 'terraform' }] } }));
      const resource = bucket(Bucket, { location: region, versioning: true, labels: { team: 'a' } });
      const client = await connect(resource, region);
      const writesBefore = fake.requests.filter((r) => r.bucket === Bucket && r.method === 'PUT').length;
      await assert.rejects(client.create(resource, call), (error: unknown) => {
        assert.ok(error instanceof NotOwnedError, 'already there and not ours: never success');
        assert.equal(error.code, 'BucketAlreadyOwnedByYou');
        assert.match(error.message, /k8or\.io\/adopt/);
        return true;
      });
      // Only the CreateBucket call itself reached the bucket: no tags, no settings.
      assert.equal(fake.requests.filter((r) => r.bucket === Bucket && r.method === 'PUT').length, writesBefore + 1);
      assert.deepEqual((await colleague.send(new GetBucketTaggingCommand({ Bucket }))).TagSet, [{ Key: 'owner', Value: 'terraform' }]);
      assert.equal((await colleague.send(new GetBucketVersioningCommand({ Bucket }))).Status, undefined);
      const observation = await client.observe(resource, call);
      assert.deepEqual(observation.ownerTags, {});
      colleague.destroy();
    });
  }

  it('repeats its own create: the bucket carries its owner tags, so create goes on to the settings', async () => {
    const resource = bucket('repeated-create', { location: 'eu-west-1', versioning: true });
    const client = await connect(resource);
    await client.create(resource, call);
    await client.create(resource, call);
    assert.deepEqual((await client.observe(resource, call)).diff, []);
  });

  it('fails terminally with SignatureDoesNotMatch when the Secret holds a wrong secret key', async () => {
    const resource = bucket('wrong-secret-bucket');
    const context = connectionContext(awsProviderConfig({ bucket: fake.endpoint }), resource, { accessKeyId: ACCESS_KEY, secretAccessKey: 'stale-secret' });
    const client = await bucketConnector.connect(resource, context);
    await assert.rejects(client.observe(resource, call), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'SignatureDoesNotMatch');
      assert.match(error.message, /GetBucketLocation failed with SignatureDoesNotMatch/);
      return true;
    });
  });

  it('fails terminally with the S3 code for an invalid spec', async () => {
    const badName = bucket('Not_A_Valid_Bucket');
    await assert.rejects((await connect(badName)).create(badName, call), { code: 'InvalidBucketName', retryable: false });
    const badLifecycle = bucket('bad-lifecycle', { lifecycle: [{ id: 'too-soon', transitions: [{ days: 1, tier: 'InfrequentAccess' }] }] });
    await assert.rejects((await connect(badLifecycle)).create(badLifecycle, call), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'InvalidArgument');
      assert.match(error.message, /PutBucketLifecycleConfiguration failed with InvalidArgument/);
      return true;
    });
  });

  it('fails terminally with InvalidLocationConstraint for a location S3 does not know', async () => {
    const resource = bucket('nowhere-bucket', { location: 'moon-base-1' });
    const client = await connect(resource);
    await assert.rejects(client.create(resource, call), { code: 'InvalidLocationConstraint', retryable: false });
  });

  it('turns SlowDown into a retryable error once the SDK retries are spent, and succeeds when S3 recovers', async () => {
    const resource = bucket('throttled-bucket');
    const client = await connect(resource);
    fake.slowDown(100);
    await assert.rejects(client.observe(resource, call), (error: unknown) => {
      assert.ok(error instanceof RetryableError);
      assert.equal(error.code, 'SlowDown');
      return true;
    });
    fake.slowDown(0);
    fake.slowDown(1);
    assert.equal((await client.observe(resource, call)).exists, false);
  });

  describe('probe: existence and owner tags for the delete path', () => {
    it('answers with GetBucketTagging and ListBuckets (its identity) where observe makes seven: our bucket, an untagged one, a missing one', async () => {
      const resource = bucket('probed-bucket', { versioning: true, labels: { team: 'a' } });
      const client = await connect(resource);
      await client.create(resource, call);
      client.calls.length = 0;
      const observation = await client.observe(resource, call);
      const observeCalls = client.calls.splice(0);
      assert.equal(observeCalls.length, 7, observeCalls.join(', '));
      assert.ok(observation.identity?.['creationDate']);
      assert.deepEqual(await client.probe?.(resource, call), { exists: true, ownerTags: observation.ownerTags, identity: observation.identity });
      assert.deepEqual(client.calls.splice(0), ['GetBucketTagging', 'ListBuckets']);

      await s3.send(new CreateBucketCommand({ Bucket: 'probed-untagged' }));
      const untagged = bucket('probed-untagged');
      const bare = await connect(untagged);
      const presence = await bare.probe?.(untagged, call);
      assert.deepEqual({ exists: presence?.exists, ownerTags: presence?.ownerTags }, { exists: true, ownerTags: {} }, 'NoSuchTagSet: the bucket exists with no owner tags, never "gone"');
      assert.deepEqual(bare.calls, ['GetBucketTagging', 'ListBuckets']);

      await client.delete(resource, call);
      assert.deepEqual(await client.probe?.(resource, call), { exists: false });
      assert.deepEqual(client.calls.slice(-1), ['GetBucketTagging']);
    });

    it("reads a bucket in another region than the client's (the SDK follows S3's redirect)", async () => {
      const resource = bucket('probed-in-eu', { location: 'eu-west-1' });
      await (await connect(resource, 'eu-west-1')).create(resource, call);
      const client = await connect(resource, 'us-east-1');
      const presence = await client.probe?.(resource, call);
      assert.equal(presence?.exists, true);
      assert.equal(presence?.ownerTags?.['k8or.io/name'], 'probed-in-eu');
    });

    it("throws what observe throws, never absence: another account's bucket is NotOwnedError, a denial AccessDenied, throttling retryable", async () => {
      const someoneElse = s3For('us-east-1', OTHER_ACCOUNT_KEY, 'other-secret');
      await someoneElse.send(new CreateBucketCommand({ Bucket: 'probed-taken' }));
      someoneElse.destroy();
      const taken = bucket('probed-taken');
      await assert.rejects((await connect(taken)).probe?.(taken, call) ?? Promise.resolve(), (error: unknown) => error instanceof NotOwnedError && error.code === 'AccessDenied');

      const resource = bucket('probed-denied');
      await (await connect(resource)).create(resource, call);
      fake.denyAccessKey(DENIED_KEY);
      const context = connectionContext(awsProviderConfig({ bucket: fake.endpoint }), resource, { accessKeyId: DENIED_KEY, secretAccessKey: 'denied-secret' });
      const denied = await bucketConnector.connect(resource, context);
      await assert.rejects(denied.probe?.(resource, call) ?? Promise.resolve(), (error: unknown) => {
        assert.ok(error instanceof TerminalError && !(error instanceof NotOwnedError), String(error));
        assert.equal(error.code, 'AccessDenied');
        return true;
      });

      const client = await connect(resource);
      fake.slowDown(100);
      try {
        await assert.rejects(client.probe?.(resource, call) ?? Promise.resolve(), (error: unknown) => error instanceof RetryableError && error.code === 'SlowDown');
      } finally {
        fake.slowDown(0);
      }
      assert.equal((await client.probe?.(resource, call))?.exists, true, 'the bucket is still there');
    });

    it('takes a bare 404 (an endpoint that names no code) for neither absence nor "no tags": GetBucketLocation decides, as in observe', async () => {
      // An S3-compatible endpoint that answers 404 without a body: to every call, or only to the tagging read.
      const answersBare404 = (except?: { query: string; body: string }) =>
        createServer((request, response) => {
          request.resume();
          if (except && request.url?.includes(except.query)) response.writeHead(200, { 'content-type': 'application/xml' }).end(except.body);
          else response.writeHead(404).end();
        });
      const location = '<?xml version="1.0" encoding="UTF-8"?><LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-1</LocationConstraint>';
      for (const [server, expected] of [
        [answersBare404(), 'absent'],
        [answersBare404({ query: 'location', body: location }), 'an error'],
      ] as const) {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        try {
          const resource = bucket('bare-404');
          const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
          const context = connectionContext(awsProviderConfig({ bucket: endpoint }), resource);
          const client = await bucketConnector.connect(resource, context);
          if (expected === 'absent') assert.deepEqual(await client.probe?.(resource, call), { exists: false });
          else await assert.rejects(client.probe?.(resource, call) ?? Promise.resolve(), (error: unknown) => error instanceof TerminalError && error.code === 'NotFound');
          assert.deepEqual(context.calls, ['GetBucketTagging', 'GetBucketLocation'], expected);
        } finally {
          await new Promise((resolve) => server.close(resolve));
        }
      }
    });
  });
});
