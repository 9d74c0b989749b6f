// With dataDir, the S3 fake keeps its buckets across a restart: configuration, tags, object versions and their bytes.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
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
import { s3BucketFile, startS3Fake, type S3Fake } from '@k8or/local-clouds';

const client = (fake: S3Fake): S3Client =>
  new S3Client({ region: 'eu-west-1', endpoint: fake.endpoint, forcePathStyle: true, credentials: { accessKeyId: 'AKIAPERSIST000000001', secretAccessKey: 'secret' }, maxAttempts: 1 });

describe('S3 fake with dataDir', () => {
  it('serves the same buckets, configuration, object versions and object bytes after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8or-s3-fake-'));
    try {
      const first = await startS3Fake({ dataDir });
      const s3 = client(first);
      await s3.send(new CreateBucketCommand({ Bucket: 'kept-bucket', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
      await s3.send(new PutBucketVersioningCommand({ Bucket: 'kept-bucket', VersioningConfiguration: { Status: 'Enabled' } }));
      await s3.send(new PutBucketTaggingCommand({ Bucket: 'kept-bucket', Tagging: { TagSet: [{ Key: 'owner', Value: 'k8or' }] } }));
      const older = await s3.send(new PutObjectCommand({ Bucket: 'kept-bucket', Key: 'photos/cat.jpg', Body: 'purr', ContentType: 'image/jpeg' }));
      const put = await s3.send(new PutObjectCommand({ Bucket: 'kept-bucket', Key: 'photos/cat.jpg', Body: 'meow', ContentType: 'image/jpeg', Metadata: { by: 'tom' } }));
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
        const latest = await again.send(new GetObjectCommand({ Bucket: 'kept-bucket', Key: 'photos/cat.jpg' }));
        assert.equal(await latest.Body?.transformToString(), 'meow');
        assert.equal(latest.ContentType, 'image/jpeg');
        assert.deepEqual(latest.Metadata, { by: 'tom' });
        const previous = await again.send(new GetObjectCommand({ Bucket: 'kept-bucket', Key: 'photos/cat.jpg', VersionId: older.VersionId }));
        assert.equal(await previous.Body?.transformToString(), 'purr');
        // A version deleted for good takes its bytes with it.
        const objects = join(dataDir, 'objects');
        assert.equal(readdirSync(objects).length, 2);
        await again.send(new DeleteObjectCommand({ Bucket: 'kept-bucket', Key: 'photos/cat.jpg', VersionId: older.VersionId }));
        assert.equal(readdirSync(objects).length, 1);
      } finally {
        again.destroy();
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  it('writes again only the file of the bucket a change names, before it answers, and removes a deleted bucket file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8or-s3-fake-'));
    const fake = await startS3Fake({ dataDir });
    const s3 = client(fake);
    try {
      for (const Bucket of ['left-alone', 'tagged', 'deleted']) await s3.send(new CreateBucketCommand({ Bucket }));
      const untouched = { text: readFileSync(s3BucketFile(dataDir, 'left-alone'), 'utf8'), mtimeMs: statSync(s3BucketFile(dataDir, 'left-alone')).mtimeMs };
      await s3.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'team', Value: 'storage' }] } }));
      // Answered, so on disk: the tag is in its bucket file already.
      assert.match(readFileSync(s3BucketFile(dataDir, 'tagged'), 'utf8'), /"storage"/);
      await s3.send(new DeleteBucketCommand({ Bucket: 'deleted' }));
      assert.equal(existsSync(s3BucketFile(dataDir, 'deleted')), false);
      assert.deepEqual({ text: readFileSync(s3BucketFile(dataDir, 'left-alone'), 'utf8'), mtimeMs: statSync(s3BucketFile(dataDir, 'left-alone')).mtimeMs }, untouched, 'a bucket no request named is not written again');
      assert.deepEqual(readdirSync(join(dataDir, 'buckets')).sort(), ['left-alone.json', 'tagged.json']);
    } finally {
      s3.destroy();
      await fake.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('moves a folder of the single-file layout (buckets.json) into one file per bucket at start, losing nothing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8or-s3-fake-'));
    try {
      const first = await startS3Fake({ dataDir });
      const s3 = client(first);
      await s3.send(new CreateBucketCommand({ Bucket: 'old-layout' }));
      await s3.send(new PutBucketTaggingCommand({ Bucket: 'old-layout', Tagging: { TagSet: [{ Key: 'kept', Value: 'yes' }] } }));
      s3.destroy();
      await first.stop();
      // The same state as the single file an older fake wrote: { $map: [[name, state], ...] }.
      const state = JSON.parse(readFileSync(s3BucketFile(dataDir, 'old-layout'), 'utf8')) as unknown;
      rmSync(join(dataDir, 'buckets'), { recursive: true });
      writeFileSync(join(dataDir, 'buckets.json'), JSON.stringify({ $map: [['old-layout', state]] }));

      const second = await startS3Fake({ dataDir });
      const again = client(second);
      try {
        assert.deepEqual((await again.send(new GetBucketTaggingCommand({ Bucket: 'old-layout' }))).TagSet, [{ Key: 'kept', Value: 'yes' }]);
        assert.equal(existsSync(join(dataDir, 'buckets.json')), false, 'the single file is gone once moved');
        assert.equal(existsSync(s3BucketFile(dataDir, 'old-layout')), true);
      } finally {
        again.destroy();
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
