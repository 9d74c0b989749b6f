// The S3 fake driven by a client this project did not write: the AWS CLI (Debian `awscli`). It must
// not be able to tell the fake from S3 for objects and for signatures.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';

const ACCESS_KEY = 'AKIACLITEST000000001';
const SECRET = 'the-cli-secret-access-key';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Whether `aws` runs here, and why not. */
const awsCliMissing: Promise<string | undefined> = new Promise((resolve) =>
  execFile('aws', ['--version'], (error) => resolve(error ? `the AWS CLI is not installed (apt-get install awscli): ${error.message}` : undefined)),
);
const missing = await awsCliMissing;

describe('S3 fake, driven by the AWS CLI', { skip: missing ?? false }, () => {
  let fake: S3Fake;
  const dir = mkdtempSync(join(tmpdir(), 'k8or-s3-cli-'));
  // SigV4 for presigned URLs too (the CLI presigns with Signature Version 2 unless told).
  const config = join(dir, 'config');
  writeFileSync(config, '[default]\nregion = us-east-1\ns3 =\n    signature_version = s3v4\n');

  /** `aws --endpoint-url FAKE ...args` signed with these keys; never throws, answers exit code and output. */
  const aws = (args: readonly string[], keys: { accessKeyId: string; secretAccessKey: string } = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }): Promise<CliResult> =>
    new Promise((resolve) => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        AWS_ACCESS_KEY_ID: keys.accessKeyId,
        AWS_SECRET_ACCESS_KEY: keys.secretAccessKey,
        AWS_CONFIG_FILE: config,
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
        AWS_MAX_ATTEMPTS: '1',
      };
      delete env['AWS_SESSION_TOKEN'];
      delete env['AWS_PROFILE'];
      execFile('aws', ['--endpoint-url', fake.endpoint, ...args], { env, timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
  const ok = async (args: readonly string[]): Promise<string> => {
    const result = await aws(args);
    assert.equal(result.code, 0, `aws ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  };

  before(async () => {
    fake = await startS3Fake({ credentials: { [ACCESS_KEY]: SECRET } });
    await ok(['s3', 'mb', 's3://cli-bucket']);
  });
  after(async () => {
    await fake?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies a file up and back down with `aws s3 cp`, and lists it with `aws s3 ls`', async () => {
    const original = join(dir, 'report.csv');
    const copy = join(dir, 'report-copy.csv');
    writeFileSync(original, 'id,total\n1,42\n2,7\n');
    await ok(['s3', 'cp', original, 's3://cli-bucket/reports/2026 q1+final.csv']);
    await ok(['s3', 'cp', 's3://cli-bucket/reports/2026 q1+final.csv', copy]);
    assert.equal(readFileSync(copy, 'utf8'), 'id,total\n1,42\n2,7\n');
    assert.match(await ok(['s3', 'ls', 's3://cli-bucket/reports/']), /\s18 2026 q1\+final\.csv\n/);
  });

  it('copies a file above the multipart threshold up and down with `aws s3 cp` (a multipart upload, ranged downloads)', async () => {
    const original = join(dir, 'large.bin');
    const copy = join(dir, 'large-copy.bin');
    // 9 MiB of varied bytes: above the CLI's 8 MiB threshold, so two parts up and ranged GETs down.
    const bytes = Buffer.alloc(9 * 1024 * 1024);
    for (let offset = 0; offset < bytes.length; offset += 32) createHash('sha256').update(String(offset)).digest().copy(bytes, offset);
    writeFileSync(original, bytes);
    await ok(['s3', 'cp', original, 's3://cli-bucket/large.bin']);
    await ok(['s3', 'cp', 's3://cli-bucket/large.bin', copy]);
    assert.equal(createHash('sha256').update(readFileSync(copy)).digest('hex'), createHash('sha256').update(bytes).digest('hex'));
    const head = JSON.parse(await ok(['s3api', 'head-object', '--bucket', 'cli-bucket', '--key', 'large.bin'])) as Record<string, unknown>;
    assert.equal(head['ContentLength'], bytes.length);
    assert.match(String(head['ETag']), /^"[0-9a-f]{32}-2"$/);
    assert.ok(fake.requests.some((r) => r.key === 'large.bin' && r.method === 'POST' && r.subresource === 'uploads'), 'a multipart upload was made');
  });

  it('answers head-object and get-object (whole and a byte range) as S3 does', async () => {
    const body = join(dir, 'greeting.txt');
    writeFileSync(body, 'hello, sandbox');
    await ok(['s3api', 'put-object', '--bucket', 'cli-bucket', '--key', 'greeting.txt', '--body', body, '--content-type', 'text/plain', '--metadata', 'team=shop']);

    const head = JSON.parse(await ok(['s3api', 'head-object', '--bucket', 'cli-bucket', '--key', 'greeting.txt'])) as Record<string, unknown>;
    assert.equal(head['ContentLength'], 14);
    assert.equal(head['ContentType'], 'text/plain');
    assert.deepEqual(head['Metadata'], { team: 'shop' });
    assert.equal(head['ETag'], `"${createHash('md5').update('hello, sandbox').digest('hex')}"`);

    const whole = join(dir, 'whole.txt');
    const got = JSON.parse(await ok(['s3api', 'get-object', '--bucket', 'cli-bucket', '--key', 'greeting.txt', whole])) as Record<string, unknown>;
    assert.equal(readFileSync(whole, 'utf8'), 'hello, sandbox');
    assert.equal(got['ContentLength'], 14);

    const part = join(dir, 'part.txt');
    const ranged = JSON.parse(await ok(['s3api', 'get-object', '--bucket', 'cli-bucket', '--key', 'greeting.txt', '--range', 'bytes=7-13', part])) as Record<string, unknown>;
    assert.equal(readFileSync(part, 'utf8'), 'sandbox');
    assert.equal(ranged['ContentRange'], 'bytes 7-13/14');

    const beyond = await aws(['s3api', 'get-object', '--bucket', 'cli-bucket', '--key', 'greeting.txt', '--range', 'bytes=100-200', join(dir, 'none.txt')]);
    assert.notEqual(beyond.code, 0);
    assert.match(beyond.stderr, /InvalidRange/);

    const absent = await aws(['s3api', 'get-object', '--bucket', 'cli-bucket', '--key', 'no-such-key', join(dir, 'none.txt')]);
    assert.notEqual(absent.code, 0);
    assert.match(absent.stderr, /NoSuchKey/);
  });

  it('refuses a wrong secret with SignatureDoesNotMatch and an unknown key with InvalidAccessKeyId', async () => {
    const wrongSecret = await aws(['s3api', 'list-objects-v2', '--bucket', 'cli-bucket'], { accessKeyId: ACCESS_KEY, secretAccessKey: 'not-the-secret' });
    assert.notEqual(wrongSecret.code, 0);
    assert.match(wrongSecret.stderr, /\(SignatureDoesNotMatch\)/);
    const wrongGet = await aws(['s3', 'cp', 's3://cli-bucket/greeting.txt', join(dir, 'denied.txt')], { accessKeyId: ACCESS_KEY, secretAccessKey: 'not-the-secret' });
    assert.notEqual(wrongGet.code, 0);
    assert.match(wrongGet.stderr, /403/);
    const unknownKey = await aws(['s3api', 'list-buckets'], { accessKeyId: 'AKIANOBODY0000000001', secretAccessKey: SECRET });
    assert.notEqual(unknownKey.code, 0);
    assert.match(unknownKey.stderr, /\(InvalidAccessKeyId\)/);
  });

  it('serves a presigned URL from `aws s3 presign`, refuses it tampered with, and once it has expired', async () => {
    const url = (await ok(['s3', 'presign', 's3://cli-bucket/greeting.txt', '--expires-in', '600'])).trim();
    assert.match(url, /X-Amz-Signature=/);
    const fetched = await fetch(url);
    assert.equal(fetched.status, 200);
    assert.equal(await fetched.text(), 'hello, sandbox');

    const tampered = await fetch(url.replace('greeting.txt', 'reports/2026%20q1%2Bfinal.csv'));
    assert.equal(tampered.status, 403);
    assert.match(await tampered.text(), /<Code>SignatureDoesNotMatch<\/Code>/);

    const shortLived = (await ok(['s3', 'presign', 's3://cli-bucket/greeting.txt', '--expires-in', '1'])).trim();
    const deadline = Date.now() + 30_000;
    let answer: { status: number; text: string } = { status: 200, text: '' };
    while (answer.status === 200 && Date.now() < deadline) {
      const response = await fetch(shortLived);
      answer = { status: response.status, text: await response.text() };
      if (answer.status === 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(answer.status, 403);
    assert.match(answer.text, /<Code>AccessDenied<\/Code><Message>Request has expired<\/Message>/);
  });
});
