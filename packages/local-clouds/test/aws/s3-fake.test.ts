import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteBucketEncryptionCommand,
  DeleteBucketLifecycleCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  DeletePublicAccessBlockCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  GetPublicAccessBlockCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListPartsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  S3Client,
  UploadPartCommand,
  type BucketLocationConstraint,
} from '@aws-sdk/client-s3';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';

/** Matches an SDK error by its S3 code and HTTP status. */
const s3Error =
  (name: string, status: number) =>
  (error: unknown): boolean =>
    error instanceof Error && error.name === name && (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === status;

describe('S3 fake, driven by the real @aws-sdk/client-s3', () => {
  let fake: S3Fake;
  const clients: S3Client[] = [];
  const client = (region = 'us-east-1', accessKeyId = 'AKIAALICE00000000001'): S3Client => {
    const s3 = new S3Client({ region, endpoint: fake.endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey: 'secret' }, maxAttempts: 1 });
    clients.push(s3);
    return s3;
  };

  before(async () => {
    fake = await startS3Fake({ accounts: { AKIAALICE00000000001: 'alice', AKIAALICE00000000002: 'alice', AKIABOB0000000000001: 'bob' } });
  });
  after(async () => {
    for (const s3 of clients) s3.destroy();
    await fake.stop();
  });

  describe('CreateBucket and its LocationConstraint rules', () => {
    it('creates in us-east-1 without a constraint, and rejects us-east-1 given explicitly', async () => {
      const s3 = client();
      await s3.send(new CreateBucketCommand({ Bucket: 'alice-default' }));
      assert.equal((await s3.send(new GetBucketLocationCommand({ Bucket: 'alice-default' }))).LocationConstraint, undefined);
      assert.equal((await s3.send(new HeadBucketCommand({ Bucket: 'alice-default' }))).BucketRegion, 'us-east-1');
      await assert.rejects(
        s3.send(new CreateBucketCommand({ Bucket: 'alice-explicit', CreateBucketConfiguration: { LocationConstraint: 'us-east-1' as BucketLocationConstraint } })),
        s3Error('InvalidLocationConstraint', 400),
      );
    });

    it('creates in another region from that region\'s endpoint, and refuses a mismatched one', async () => {
      const eu = client('eu-west-1');
      await eu.send(new CreateBucketCommand({ Bucket: 'alice-eu', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
      assert.equal((await eu.send(new GetBucketLocationCommand({ Bucket: 'alice-eu' }))).LocationConstraint, 'eu-west-1');
      await assert.rejects(
        eu.send(new CreateBucketCommand({ Bucket: 'alice-eu-2', CreateBucketConfiguration: { LocationConstraint: 'ap-south-1' } })),
        { name: 'IllegalLocationConstraintException' },
      );
    });

    it('answers BucketAlreadyOwnedByYou to the owner (200 in us-east-1) and BucketAlreadyExists to another account', async () => {
      const eu = client('eu-west-1');
      await assert.rejects(
        eu.send(new CreateBucketCommand({ Bucket: 'alice-eu', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } })),
        s3Error('BucketAlreadyOwnedByYou', 409),
      );
      await client('us-east-1', 'AKIAALICE00000000002').send(new CreateBucketCommand({ Bucket: 'alice-default' }));
      await assert.rejects(client('us-east-1', 'AKIABOB0000000000001').send(new CreateBucketCommand({ Bucket: 'alice-default' })), s3Error('BucketAlreadyExists', 409));
      await assert.rejects(client('us-east-1', 'AKIABOB0000000000001').send(new GetBucketVersioningCommand({ Bucket: 'alice-default' })), { name: 'AccessDenied' });
    });

    it('stores the tags of CreateBucketConfiguration with the bucket, and creates nothing when a tag is refused', async () => {
      const eu = client('eu-west-1');
      const Tags = [{ Key: 'k8or.io/managed-by', Value: 'k8or' }, { Key: 'team', Value: 'a' }];
      await eu.send(new CreateBucketCommand({ Bucket: 'alice-tagged', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1', Tags } }));
      assert.deepEqual((await eu.send(new GetBucketTaggingCommand({ Bucket: 'alice-tagged' }))).TagSet, Tags);
      await client().send(new CreateBucketCommand({ Bucket: 'alice-tagged-us', CreateBucketConfiguration: { Tags } }));
      assert.deepEqual((await client().send(new GetBucketTaggingCommand({ Bucket: 'alice-tagged-us' }))).TagSet, Tags);

      for (const refused of [[{ Key: 'aws:owner', Value: 'x' }], [{ Key: 'a', Value: '1' }, { Key: 'a', Value: '2' }], [{ Key: 'v', Value: 'x'.repeat(257) }]]) {
        await assert.rejects(eu.send(new CreateBucketCommand({ Bucket: 'alice-refused', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1', Tags: refused } })), s3Error('InvalidTag', 400));
      }
      await assert.rejects(eu.send(new HeadBucketCommand({ Bucket: 'alice-refused' })), { name: 'NotFound' });
    });

    it('leaves an existing bucket\'s tags alone when it is created again (200 in us-east-1)', async () => {
      await client().send(new CreateBucketCommand({ Bucket: 'alice-tagged-us', CreateBucketConfiguration: { Tags: [{ Key: 'team', Value: 'b' }] } }));
      const tags = (await client().send(new GetBucketTaggingCommand({ Bucket: 'alice-tagged-us' }))).TagSet;
      assert.deepEqual(tags?.find((t) => t.Key === 'team'), { Key: 'team', Value: 'a' });
    });

    it('redirects requests signed for another region (301 with x-amz-bucket-region), which the SDK can follow', async () => {
      await assert.rejects(client('us-east-1').send(new GetBucketVersioningCommand({ Bucket: 'alice-eu' })), (error: unknown) => {
        const response = (error as { $response?: { headers?: Record<string, string> } }).$response;
        return s3Error('PermanentRedirect', 301)(error) && response?.headers?.['x-amz-bucket-region'] === 'eu-west-1';
      });
      assert.equal((await client('us-east-1').send(new GetBucketLocationCommand({ Bucket: 'alice-eu' }))).LocationConstraint, 'eu-west-1');
      const following = new S3Client({
        region: 'us-east-1',
        endpoint: fake.endpoint,
        forcePathStyle: true,
        followRegionRedirects: true,
        credentials: { accessKeyId: 'AKIAALICE00000000001', secretAccessKey: 'secret' },
      });
      clients.push(following);
      assert.equal((await following.send(new GetBucketVersioningCommand({ Bucket: 'alice-eu' }))).Status, undefined);
    });

    it('rejects names S3 rejects with InvalidBucketName', async () => {
      await assert.rejects(client().send(new CreateBucketCommand({ Bucket: 'Upper_Case' })), { name: 'InvalidBucketName' });
      await assert.rejects(client().send(new CreateBucketCommand({ Bucket: '192.168.1.1' })), { name: 'InvalidBucketName' });
    });

    it('lists only the caller\'s buckets, those starting with a prefix when given', async () => {
      const names = (await client().send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name);
      assert.deepEqual(names, ['alice-default', 'alice-eu', 'alice-tagged', 'alice-tagged-us']);
      assert.deepEqual((await client().send(new ListBucketsCommand({ Prefix: 'alice-tagged' }))).Buckets?.map((b) => b.Name), ['alice-tagged', 'alice-tagged-us']);
      assert.deepEqual((await client('us-east-1', 'AKIABOB0000000000001').send(new ListBucketsCommand({}))).Buckets ?? [], []);
    });
  });

  describe('bucket configuration subresources', () => {
    const Bucket = 'alice-config';
    before(async () => {
      await client().send(new CreateBucketCommand({ Bucket }));
    });

    it('starts with the 2023 defaults: SSE-S3 and all Block Public Access settings on, no tags, no lifecycle, no versioning status', async () => {
      const s3 = client();
      assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status, undefined);
      const encryption = await s3.send(new GetBucketEncryptionCommand({ Bucket }));
      assert.equal(encryption.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm, 'AES256');
      const block = (await s3.send(new GetPublicAccessBlockCommand({ Bucket }))).PublicAccessBlockConfiguration;
      assert.deepEqual(block, { BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true, RestrictPublicBuckets: true });
      await assert.rejects(s3.send(new GetBucketTaggingCommand({ Bucket })), s3Error('NoSuchTagSet', 404));
      await assert.rejects(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket })), { name: 'NoSuchLifecycleConfiguration' });
    });

    it('stores and removes tags, refusing duplicate keys and aws: keys', async () => {
      const s3 = client();
      await s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [{ Key: 'team', Value: 'a' }, { Key: 'env', Value: '' }] } }));
      assert.deepEqual((await s3.send(new GetBucketTaggingCommand({ Bucket }))).TagSet, [{ Key: 'team', Value: 'a' }, { Key: 'env', Value: '' }]);
      await assert.rejects(s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [{ Key: 'a', Value: '1' }, { Key: 'a', Value: '2' }] } })), { name: 'InvalidTag' });
      await assert.rejects(s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet: [{ Key: 'aws:x', Value: '1' }] } })), { name: 'InvalidTag' });
      await s3.send(new DeleteBucketTaggingCommand({ Bucket }));
      await assert.rejects(s3.send(new GetBucketTaggingCommand({ Bucket })), { name: 'NoSuchTagSet' });
    });

    it('stores SSE-KMS with a key, refuses a key with AES256, and falls back to SSE-S3 on delete', async () => {
      const s3 = client();
      const kms = { SSEAlgorithm: 'aws:kms' as const, KMSMasterKeyID: 'alias/data' };
      await s3.send(new PutBucketEncryptionCommand({ Bucket, ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: kms, BucketKeyEnabled: true }] } }));
      const rule = (await s3.send(new GetBucketEncryptionCommand({ Bucket }))).ServerSideEncryptionConfiguration?.Rules?.[0];
      assert.deepEqual(rule, { ApplyServerSideEncryptionByDefault: kms, BucketKeyEnabled: true });
      await assert.rejects(
        s3.send(new PutBucketEncryptionCommand({ Bucket, ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256', KMSMasterKeyID: 'k' } }] } })),
        { name: 'InvalidArgument' },
      );
      await s3.send(new DeleteBucketEncryptionCommand({ Bucket }));
      const fallback = (await s3.send(new GetBucketEncryptionCommand({ Bucket }))).ServerSideEncryptionConfiguration?.Rules?.[0];
      assert.equal(fallback?.ApplyServerSideEncryptionByDefault?.SSEAlgorithm, 'AES256');
    });

    it('stores, deletes and reports missing public access blocks', async () => {
      const s3 = client();
      await s3.send(new DeletePublicAccessBlockCommand({ Bucket }));
      await assert.rejects(s3.send(new GetPublicAccessBlockCommand({ Bucket })), { name: 'NoSuchPublicAccessBlockConfiguration' });
      await s3.send(new PutPublicAccessBlockCommand({ Bucket, PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true } }));
      const block = (await s3.send(new GetPublicAccessBlockCommand({ Bucket }))).PublicAccessBlockConfiguration;
      assert.deepEqual(block, { BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: false, RestrictPublicBuckets: true });
    });

    it('round-trips lifecycle rules and enforces S3\'s transition rules', async () => {
      const s3 = client();
      const Rules = [
        {
          ID: 'logs',
          Status: 'Enabled' as const,
          Filter: { Prefix: 'logs/' },
          Expiration: { Days: 365 },
          Transitions: [{ Days: 30, StorageClass: 'STANDARD_IA' as const }, { Days: 90, StorageClass: 'GLACIER' as const }],
          NoncurrentVersionExpiration: { NoncurrentDays: 10 },
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 3 },
        },
      ];
      await s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket, LifecycleConfiguration: { Rules } }));
      assert.deepEqual((await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket }))).Rules, Rules);
      await assert.rejects(
        s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket, LifecycleConfiguration: { Rules: [{ ID: 'r', Status: 'Enabled', Filter: {}, Transitions: [{ Days: 1, StorageClass: 'STANDARD_IA' }] }] } })),
        (error: Error) => error.name === 'InvalidArgument' && /greater than or equal to 30/.test(error.message),
      );
      await assert.rejects(
        s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket, LifecycleConfiguration: { Rules: [{ ID: 'r', Status: 'Enabled', Filter: {} }] } })),
        { name: 'InvalidRequest' },
      );
      await s3.send(new DeleteBucketLifecycleCommand({ Bucket }));
      await assert.rejects(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket })), { name: 'NoSuchLifecycleConfiguration' });
    });
  });

  describe('objects, versions and delete markers', () => {
    it('keeps one object per key without versioning, and listing pages through keys', async () => {
      const s3 = client();
      const Bucket = 'alice-plain';
      await s3.send(new CreateBucketCommand({ Bucket }));
      for (const key of ['a/1', 'a/2', 'b/1', 'c']) await s3.send(new PutObjectCommand({ Bucket, Key: key, Body: key }));
      await s3.send(new PutObjectCommand({ Bucket, Key: 'c', Body: 'again' }));
      const page1 = await s3.send(new ListObjectsV2Command({ Bucket, MaxKeys: 3 }));
      assert.deepEqual(page1.Contents?.map((o) => o.Key), ['a/1', 'a/2', 'b/1']);
      assert.equal(page1.IsTruncated, true);
      const page2 = await s3.send(new ListObjectsV2Command({ Bucket, MaxKeys: 3, ContinuationToken: page1.NextContinuationToken }));
      assert.deepEqual(page2.Contents?.map((o) => [o.Key, o.Size]), [['c', 5]]);
      const grouped = await s3.send(new ListObjectsV2Command({ Bucket, Delimiter: '/' }));
      assert.deepEqual(grouped.CommonPrefixes?.map((p) => p.Prefix), ['a/', 'b/']);
      assert.deepEqual(grouped.Contents?.map((o) => o.Key), ['c']);
      const versions = await s3.send(new ListObjectVersionsCommand({ Bucket }));
      assert.deepEqual(versions.Versions?.map((v) => v.VersionId), ['null', 'null', 'null', 'null']);

      await assert.rejects(s3.send(new DeleteBucketCommand({ Bucket })), s3Error('BucketNotEmpty', 409));
      const deleted = await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: ['a/1', 'a/2', 'b/1', 'c'].map((Key) => ({ Key })) } }));
      assert.equal(deleted.Deleted?.length, 4);
      await s3.send(new DeleteBucketCommand({ Bucket }));
      await assert.rejects(s3.send(new HeadBucketCommand({ Bucket })), { name: 'NotFound' });
      await assert.rejects(s3.send(new GetBucketVersioningCommand({ Bucket })), { name: 'NoSuchBucket' });
    });

    it('makes versions and delete markers with versioning, and the bucket is empty only when all are gone', async () => {
      const s3 = client();
      const Bucket = 'alice-versioned';
      await s3.send(new CreateBucketCommand({ Bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      const v1 = await s3.send(new PutObjectCommand({ Bucket, Key: 'doc', Body: 'one' }));
      const v2 = await s3.send(new PutObjectCommand({ Bucket, Key: 'doc', Body: 'two' }));
      assert.notEqual(v1.VersionId, v2.VersionId);
      const marker = await s3.send(new DeleteObjectCommand({ Bucket, Key: 'doc' }));
      assert.equal(marker.DeleteMarker, true);

      assert.equal((await s3.send(new ListObjectsV2Command({ Bucket }))).KeyCount, 0);
      const listing = await s3.send(new ListObjectVersionsCommand({ Bucket }));
      assert.deepEqual(listing.Versions?.map((v) => [v.VersionId, v.IsLatest]), [[v2.VersionId, false], [v1.VersionId, false]]);
      assert.deepEqual(listing.DeleteMarkers?.map((m) => [m.VersionId, m.IsLatest]), [[marker.VersionId, true]]);
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket, MaxKeys: 2 }));
      assert.equal(page.IsTruncated, true);
      const rest = await s3.send(new ListObjectVersionsCommand({ Bucket, KeyMarker: page.NextKeyMarker, VersionIdMarker: page.NextVersionIdMarker }));
      assert.deepEqual(rest.Versions?.map((v) => v.VersionId), [v1.VersionId]);

      await assert.rejects(s3.send(new DeleteBucketCommand({ Bucket })), { name: 'BucketNotEmpty' });
      const everything = [v1.VersionId, v2.VersionId, marker.VersionId].map((VersionId) => ({ Key: 'doc', VersionId }));
      await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: everything, Quiet: true } }));
      await s3.send(new DeleteBucketCommand({ Bucket }));
    });

    it('overwrites the null version while versioning is suspended', async () => {
      const s3 = client();
      const Bucket = 'alice-suspended';
      await s3.send(new CreateBucketCommand({ Bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: '1' }));
      await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Suspended' } }));
      assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket }))).Status, 'Suspended');
      await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: '2' }));
      await s3.send(new PutObjectCommand({ Bucket, Key: 'k', Body: '3' }));
      const ids = (await s3.send(new ListObjectVersionsCommand({ Bucket }))).Versions?.map((v) => v.VersionId);
      assert.equal(ids?.length, 2);
      assert.equal(ids?.[0], 'null');
    });

    it('reads objects back as S3 does: GetObject and HeadObject by version, ranges, conditions, delete markers', async () => {
      const s3 = client();
      const Bucket = 'alice-reads';
      await s3.send(new CreateBucketCommand({ Bucket }));
      await s3.send(new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: 'Enabled' } }));
      const v1 = await s3.send(new PutObjectCommand({ Bucket, Key: 'notes.txt', Body: 'first draft', ContentType: 'text/plain', CacheControl: 'no-cache' }));
      const v2 = await s3.send(new PutObjectCommand({ Bucket, Key: 'notes.txt', Body: 'second draft', ContentType: 'text/plain', Metadata: { author: 'alice' } }));

      const latest = await s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt' }));
      assert.equal(await latest.Body?.transformToString(), 'second draft');
      assert.equal(latest.VersionId, v2.VersionId);
      assert.equal(latest.ETag, v2.ETag);
      assert.deepEqual(latest.Metadata, { author: 'alice' });
      assert.equal(latest.ServerSideEncryption, 'AES256');
      const first = await s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', VersionId: v1.VersionId }));
      assert.equal(await first.Body?.transformToString(), 'first draft');
      assert.equal(first.CacheControl, 'no-cache');
      const head = await s3.send(new HeadObjectCommand({ Bucket, Key: 'notes.txt' }));
      assert.equal(head.ContentLength, 12);
      assert.equal(head.ContentType, 'text/plain');

      const ranged = await s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', Range: 'bytes=-5' }));
      assert.equal(await ranged.Body?.transformToString(), 'draft');
      assert.equal(ranged.ContentRange, 'bytes 7-11/12');
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', Range: 'bytes=50-' })), s3Error('InvalidRange', 416));
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', IfMatch: v1.ETag })), s3Error('PreconditionFailed', 412));
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', IfNoneMatch: v2.ETag })), (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 304);

      await s3.send(new DeleteObjectCommand({ Bucket, Key: 'notes.txt' }));
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt' })), s3Error('NoSuchKey', 404));
      await assert.rejects(s3.send(new HeadObjectCommand({ Bucket, Key: 'notes.txt' })), { name: 'NotFound' });
      assert.equal(await (await s3.send(new GetObjectCommand({ Bucket, Key: 'notes.txt', VersionId: v2.VersionId }))).Body?.transformToString(), 'second draft');
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'never-written' })), s3Error('NoSuchKey', 404));
    });
  });

  describe('multipart uploads', () => {
    it('assembles the listed parts into one object with S3\'s multipart ETag, and refuses what S3 refuses', async () => {
      const s3 = client();
      const Bucket = 'alice-multipart';
      await s3.send(new CreateBucketCommand({ Bucket }));
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'video.bin', ContentType: 'video/mp4' }));
      const first = Buffer.alloc(5 * 1024 * 1024, 'a');
      const part1 = await s3.send(new UploadPartCommand({ Bucket, Key: 'video.bin', UploadId, PartNumber: 1, Body: first }));
      const part2 = await s3.send(new UploadPartCommand({ Bucket, Key: 'video.bin', UploadId, PartNumber: 2, Body: 'tail' }));
      assert.deepEqual((await s3.send(new ListPartsCommand({ Bucket, Key: 'video.bin', UploadId }))).Parts?.map((p) => [p.PartNumber, p.Size]), [[1, first.length], [2, 4]]);
      await assert.rejects(
        s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'video.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 2, ETag: part2.ETag }, { PartNumber: 1, ETag: part1.ETag }] } })),
        s3Error('InvalidPartOrder', 400),
      );
      await assert.rejects(
        s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'video.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"0"' }] } })),
        s3Error('InvalidPart', 400),
      );
      const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'video.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part1.ETag }, { PartNumber: 2, ETag: part2.ETag }] } }));
      assert.match(done.ETag ?? '', /^"[0-9a-f]{32}-2"$/);
      const object = await s3.send(new GetObjectCommand({ Bucket, Key: 'video.bin', Range: `bytes=${first.length - 1}-` }));
      assert.equal(await object.Body?.transformToString(), 'atail');
      assert.equal(object.ContentType, 'video/mp4');
      await assert.rejects(s3.send(new ListPartsCommand({ Bucket, Key: 'video.bin', UploadId })), s3Error('NoSuchUpload', 404));

      const small = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: 'small.bin' }));
      const a = await s3.send(new UploadPartCommand({ Bucket, Key: 'small.bin', UploadId: small.UploadId, PartNumber: 1, Body: 'a' }));
      const b = await s3.send(new UploadPartCommand({ Bucket, Key: 'small.bin', UploadId: small.UploadId, PartNumber: 2, Body: 'b' }));
      await assert.rejects(
        s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: 'small.bin', UploadId: small.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: a.ETag }, { PartNumber: 2, ETag: b.ETag }] } })),
        s3Error('EntityTooSmall', 400),
      );
      await s3.send(new AbortMultipartUploadCommand({ Bucket, Key: 'small.bin', UploadId: small.UploadId }));
      await assert.rejects(s3.send(new GetObjectCommand({ Bucket, Key: 'small.bin' })), s3Error('NoSuchKey', 404));
    });
  });

  describe('failure injection', () => {
    it('denies every request of a denied access key with AccessDenied', async () => {
      fake.denyAccessKey('AKIAALICE00000000002');
      await assert.rejects(client('us-east-1', 'AKIAALICE00000000002').send(new ListBucketsCommand({})), s3Error('AccessDenied', 403));
      fake.allowAccessKey('AKIAALICE00000000002');
      await client('us-east-1', 'AKIAALICE00000000002').send(new ListBucketsCommand({}));
    });

    it('answers SlowDown (503) to the next requests, which the SDK retries', async () => {
      fake.slowDown(1);
      await assert.rejects(client().send(new ListBucketsCommand({})), s3Error('SlowDown', 503));
      fake.slowDown(2);
      const retrying = new S3Client({ region: 'us-east-1', endpoint: fake.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'AKIAALICE00000000001', secretAccessKey: 's' }, maxAttempts: 3 });
      clients.push(retrying);
      const result = await retrying.send(new ListBucketsCommand({}));
      assert.equal(result.$metadata.attempts, 3);
      const recent = fake.requests.slice(-3).map((r) => r.code ?? String(r.status));
      assert.deepEqual(recent, ['SlowDown', 'SlowDown', '200']);
    });
  });

  describe('options', () => {
    it('can start without default encryption, like S3-compatible stores, answering ServerSideEncryptionConfigurationNotFoundError', async () => {
      const bare = await startS3Fake({ defaultEncryption: false });
      const s3 = new S3Client({ region: 'us-east-1', endpoint: bare.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'AKIA1', secretAccessKey: 's' } });
      try {
        await s3.send(new CreateBucketCommand({ Bucket: 'no-default-encryption' }));
        await assert.rejects(s3.send(new GetBucketEncryptionCommand({ Bucket: 'no-default-encryption' })), s3Error('ServerSideEncryptionConfigurationNotFoundError', 404));
      } finally {
        s3.destroy();
        await bare.stop();
      }
    });
  });

  describe('request integrity, as S3 checks it', () => {
    const authorization = 'AWS4-HMAC-SHA256 Credential=AKIAALICE00000000001/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0';
    const deleteBody = '<Delete><Object><Key>a</Key></Object></Delete>';
    const post = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${fake.endpoint}/alice-default?delete`, { method: 'POST', body: deleteBody, headers: { authorization, ...headers } });
    const codeOf = async (response: Response): Promise<string | undefined> => /<Code>([^<]+)<\/Code>/.exec(await response.text())?.[1];

    it('refuses DeleteObjects without Content-MD5 or a checksum header', async () => {
      const response = await post({});
      assert.equal(response.status, 400);
      assert.equal(await codeOf(response), 'InvalidRequest');
    });

    it('refuses a body that does not match its Content-MD5 or its payload hash', async () => {
      assert.equal(await codeOf(await post({ 'content-md5': Buffer.alloc(16).toString('base64') })), 'BadDigest');
      assert.equal(await codeOf(await post({ 'content-md5': 'not-a-digest' })), 'InvalidDigest');
      assert.equal(await codeOf(await post({ 'content-md5': 'x', 'x-amz-content-sha256': '0'.repeat(64) })), 'XAmzContentSHA256Mismatch');
    });

    it('accepts a correct Content-MD5', async () => {
      const { createHash } = await import('node:crypto');
      const response = await post({ 'content-md5': createHash('md5').update(deleteBody).digest('base64') });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    });
  });

  describe('signature verification (opt-in)', () => {
    it('verifies Signature V4 when given the secrets: InvalidAccessKeyId and SignatureDoesNotMatch as on S3', async () => {
      const strict = await startS3Fake({ credentials: { AKIASTRICT0000000001: 'the-right-secret' } });
      const signedWith = (accessKeyId: string, secretAccessKey: string): S3Client =>
        new S3Client({ region: 'eu-west-1', endpoint: strict.endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
      const good = signedWith('AKIASTRICT0000000001', 'the-right-secret');
      const wrongSecret = signedWith('AKIASTRICT0000000001', 'a-wrong-secret');
      const unknownKey = signedWith('AKIAUNKNOWN000000001', 'the-right-secret');
      try {
        await good.send(new CreateBucketCommand({ Bucket: 'strict-bucket', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
        await good.send(new PutObjectCommand({ Bucket: 'strict-bucket', Key: 'dir/a b+c (1)*!~.txt', Body: 'x' }));
        const listed = await good.send(new ListObjectsV2Command({ Bucket: 'strict-bucket', Prefix: 'dir/a b' }));
        assert.deepEqual(listed.Contents?.map((o) => o.Key), ['dir/a b+c (1)*!~.txt']);
        await assert.rejects(wrongSecret.send(new ListBucketsCommand({})), s3Error('SignatureDoesNotMatch', 403));
        await assert.rejects(unknownKey.send(new ListBucketsCommand({})), s3Error('InvalidAccessKeyId', 403));
      } finally {
        for (const s3 of [good, wrongSecret, unknownKey]) s3.destroy();
        await strict.stop();
      }
    });

    it('refuses a request dated more than 15 minutes off with RequestTimeTooSkewed, whose ServerTime the SDK corrects its clock by', async () => {
      const strict = await startS3Fake({ credentials: { AKIASTRICT0000000001: 'the-right-secret' } });
      const skewed = new S3Client({
        region: 'us-east-1',
        endpoint: strict.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 'AKIASTRICT0000000001', secretAccessKey: 'the-right-secret' },
        maxAttempts: 1,
        systemClockOffset: -3_600_000,
      });
      try {
        await assert.rejects(skewed.send(new ListBucketsCommand({})), s3Error('RequestTimeTooSkewed', 403));
        assert.deepEqual((await skewed.send(new ListBucketsCommand({}))).Buckets, []);
      } finally {
        skewed.destroy();
        await strict.stop();
      }
    });
  });
});
