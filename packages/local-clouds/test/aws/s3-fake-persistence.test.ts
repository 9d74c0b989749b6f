// With dataDir, the S3 fake keeps its buckets across a restart: configuration, tags and object versions.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  CreateBucketCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';

const client = (fake: S3Fake): S3Client =>
  new S3Client({ region: 'eu-west-1', endpoint: fake.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'AKIAPERSIST000000001', secretAccessKey: 'secret' }, maxAttempts: 1 });

describe('S3 fake with dataDir', () => {
  it('serves the same buckets, configuration and object versions after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8or-s3-fake-'));
    try {
      const first = await startS3Fake({ dataDir });
      const s3 = client(first);
      await s3.send(new CreateBucketCommand({ Bucket: 'kept-bucket', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
      await s3.send(new PutBucketVersioningCommand({ Bucket: 'kept-bucket', VersioningConfiguration: { Status: 'Enabled' } }));
      await s3.send(new PutBucketTaggingCommand({ Bucket: 'kept-bucket', Tagging: { TagSet: [{ Key: 'owner', Value: 'k8or' }] } }));
      const put = await s3.send(new PutObjectCommand({ Bucket: 'kept-bucket', Key: 'photos/cat.jpg', Body: 'meow' }));
      const before = await s3.send(new ListObjectVersionsCommand({ Bucket: 'kept-bucket' }));
      s3.destroy();
      await first.stop();

      const second = await startS3Fake({ dataDir });
      const again = client(second);
      try {
        await again.send(new HeadBucketCommand({ Bucket: 'kept-bucket' }));
        assert.deepEqual((await again.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name), ['kept-bucket']);
        assert.equal((await again.send(new GetBucketVersioningCommand({ Bucket: 'kept-bucket' }))).Status, 'Enabled');
        assert.deepEqual((await again.send(new GetBucketTaggingCommand({ Bucket: 'kept-bucket' }))).TagSet, [{ Key: 'owner', Value: 'k8or' }]);
        const after = await again.send(new ListObjectVersionsCommand({ Bucket: 'kept-bucket' }));
        assert.deepEqual(
          after.Versions?.map((v) => [v.Key, v.VersionId, v.ETag, v.Size, v.LastModified?.toISOString()]),
          before.Versions?.map((v) => [v.Key, v.VersionId, v.ETag, v.Size, v.LastModified?.toISOString()]),
        );
        assert.equal(after.Versions?.[0]?.VersionId, put.VersionId);
      } finally {
        again.destroy();
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
