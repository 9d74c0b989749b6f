// The GCS fake, judged by a client the project does not use: the Google Cloud SDK's `gcloud storage`
// (JSON API over HTTP and HTTPS) and `gsutil` (JSON API over HTTPS only). Skipped, saying why, where
// the SDK is missing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Storage, type ApiError } from '@google-cloud/storage';
import { createCertificateAuthority, createServingCertificate } from '@k8or/apiserver';
import { startGcsFake, type GcsFake } from '@k8or/local-clouds';
import { freshCloudSdkConfig, missingTool, runTool, serviceAccount, tempFile, type ToolResult } from '../google-cloud-sdk.ts';

const PROJECT = 'k8or-sdk-project';
const OPERATOR = 'operator@k8or-sdk-project.iam.gserviceaccount.com';
const gcloudMissing = missingTool('gcloud');
const gsutilMissing = gcloudMissing ?? missingTool('gsutil');

const succeeded = (result: ToolResult, what: string): ToolResult => {
  assert.equal(result.code, 0, `${what} failed:\n${result.stderr}`);
  return result;
};

describe('GCS fake, driven by the Google Cloud SDK (gcloud storage, gsutil)', () => {
  const operator = serviceAccount(OPERATOR);
  const ca = createCertificateAuthority('k8or-test-ca');
  const caFile = tempFile('ca.pem', ca.certPem);
  let fake: GcsFake;
  let storage: Storage;

  before(async () => {
    fake = await startGcsFake({ serviceAccounts: { [OPERATOR]: { project: PROJECT, publicKeyPem: operator.publicKeyPem } }, tls: createServingCertificate(ca) });
    storage = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT });
  });
  after(() => fake?.stop());

  /** gcloud, pointed at the fake's `endpoint`, authenticated with `token` (an access token file, as `--access-token-file` takes it). */
  const gcloud = (args: string[], options: { endpoint?: string; token?: string; input?: Buffer } = {}): Promise<ToolResult> =>
    runTool('gcloud', [...args, '--quiet'], {
      CLOUDSDK_CONFIG: freshCloudSdkConfig(),
      CLOUDSDK_CORE_PROJECT: PROJECT,
      CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE: `${options.endpoint ?? fake.endpoint}/storage/v1/`,
      CLOUDSDK_AUTH_ACCESS_TOKEN_FILE: tempFile('token', options.token ?? operator.token()),
      CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE: caFile,
      // Small thresholds, so a few MiB take the resumable path, in chunks.
      CLOUDSDK_STORAGE_RESUMABLE_THRESHOLD: '1MiB',
      CLOUDSDK_STORAGE_UPLOAD_CHUNK_SIZE: '1MiB',
    }, options.input ? { input: options.input } : {});

  it('takes gcloud storage uploads (multipart with a quoted boundary, resumable in chunks), lists every version and deletes them all', { skip: gcloudMissing ?? false }, async () => {
    succeeded(await gcloud(['storage', 'buckets', 'create', 'gs://gcloud-uploads']), 'buckets create');
    succeeded(await gcloud(['storage', 'buckets', 'update', 'gs://gcloud-uploads', '--versioning']), 'buckets update --versioning');
    const small = tempFile('notes.txt', 'first\n');
    succeeded(await gcloud(['storage', 'cp', small, 'gs://gcloud-uploads/notes.txt']), 'cp (multipart)');
    succeeded(await gcloud(['storage', 'cp', tempFile('notes.txt', 'second\n'), 'gs://gcloud-uploads/notes.txt']), 'cp again (multipart)');
    const big = randomBytes(3 * 1024 * 1024 + 17);
    succeeded(await gcloud(['storage', 'cp', tempFile('big.bin', big), 'gs://gcloud-uploads/big.bin']), 'cp (resumable)');
    succeeded(await gcloud(['storage', 'cp', '-', 'gs://gcloud-uploads/streamed.bin'], { input: big }), 'cp from stdin (resumable, in chunks)');
    assert.ok(fake.requests.some((r) => r.status === 308), 'a chunk was answered 308 Resume Incomplete');

    const versions = succeeded(await gcloud(['storage', 'ls', '--all-versions', 'gs://gcloud-uploads']), 'ls --all-versions').stdout.trim().split('\n');
    assert.equal(versions.filter((line) => /^gs:\/\/gcloud-uploads\/notes\.txt#\d+$/.test(line)).length, 2, versions.join('\n'));
    const live = succeeded(await gcloud(['storage', 'ls', 'gs://gcloud-uploads']), 'ls').stdout.trim().split('\n');
    assert.deepEqual(live.sort(), ['gs://gcloud-uploads/big.bin', 'gs://gcloud-uploads/notes.txt', 'gs://gcloud-uploads/streamed.bin']);
    assert.equal(succeeded(await gcloud(['storage', 'cat', 'gs://gcloud-uploads/notes.txt']), 'cat').stdout, 'second\n');
    const [streamed] = await storage.bucket('gcloud-uploads').file('streamed.bin').download();
    assert.ok(streamed.equals(big), 'the streamed upload holds every chunk, in order');
    assert.equal(readFileSync(small, 'utf8'), 'first\n');

    // rm -r finds the noncurrent versions through versions=True, deletes them, then the bucket.
    succeeded(await gcloud(['storage', 'rm', '--recursive', 'gs://gcloud-uploads']), 'rm --recursive');
    await assert.rejects(storage.bucket('gcloud-uploads').getMetadata(), (error: ApiError) => error.code === 404);
  });

  it('answers gcloud 401 Invalid Credentials for a token signed with a key it did not issue', { skip: gcloudMissing ?? false }, async () => {
    const refused = await gcloud(['storage', 'ls'], { token: operator.token('other-key') });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /401: Invalid Credentials/);
    const stranger = await gcloud(['storage', 'ls'], { token: serviceAccount('stranger@elsewhere.iam.gserviceaccount.com').token() });
    assert.match(stranger.stderr, /401: Invalid Credentials/);
  });

  it('lets gcloud log in with a service-account key whose token_uri is the fake\'s, and not with a key it did not issue', { skip: gcloudMissing ?? false }, async () => {
    const config = freshCloudSdkConfig();
    const environment = { CLOUDSDK_CONFIG: config, CLOUDSDK_CORE_PROJECT: PROJECT, CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE: `${fake.endpoint}/storage/v1/` };
    succeeded(await runTool('gcloud', ['auth', 'activate-service-account', `--key-file=${operator.keyFile(fake.tokenUri)}`, '--quiet'], environment), 'auth activate-service-account');
    succeeded(await runTool('gcloud', ['storage', 'buckets', 'create', 'gs://logged-in-bucket', '--quiet'], environment), 'buckets create, logged in');
    assert.ok(fake.requests.some((r) => r.path === '/storage/v1/b' && r.method === 'POST' && r.principal === OPERATOR && r.status === 200));

    // gcloud asks for a token as it activates a key: a key the fake did not issue is refused there.
    const refused = await runTool('gcloud', ['auth', 'activate-service-account', `--key-file=${operator.keyFile(fake.tokenUri, 'other-key')}`, '--quiet'], { ...environment, CLOUDSDK_CONFIG: freshCloudSdkConfig() });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /invalid_grant: Invalid JWT Signature/);
  });

  it('serves gcloud over HTTPS with a certificate of the given CA', { skip: gcloudMissing ?? false }, async () => {
    assert.match(String(fake.httpsEndpoint), /^https:\/\/127\.0\.0\.1:\d+$/);
    succeeded(await gcloud(['storage', 'buckets', 'create', 'gs://gcloud-over-https'], { endpoint: fake.httpsEndpoint ?? '' }), 'buckets create over HTTPS');
    const listed = succeeded(await gcloud(['storage', 'ls'], { endpoint: fake.httpsEndpoint ?? '' }), 'ls over HTTPS').stdout;
    assert.match(listed, /^gs:\/\/gcloud-over-https\/$/m);
  });

  it('serves gsutil, which speaks the JSON API over HTTPS only', { skip: gsutilMissing ?? false }, async () => {
    const port = new URL(fake.httpsEndpoint ?? '').port;
    const boto = tempFile(
      'boto.cfg',
      [
        '[Credentials]',
        'gs_json_host = 127.0.0.1',
        `gs_json_port = ${port}`,
        '[Boto]',
        'https_validate_certificates = True',
        'num_retries = 1',
        'max_retry_delay = 1',
        '[GSUtil]',
        `default_project_id = ${PROJECT}`,
        'prefer_api = json',
        'resumable_threshold = 1048576',
        '',
      ].join('\n'),
    );
    const gsutil = (args: string[]): Promise<ToolResult> =>
      runTool('gsutil', args, {
        CLOUDSDK_CONFIG: freshCloudSdkConfig(),
        BOTO_CONFIG: boto,
        // The gcloud wrapper hands gsutil this CA file (Boto:ca_certificates_file); gsutil calls anonymously.
        CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE: caFile,
        CLOUDSDK_CORE_PASS_CREDENTIALS_TO_GSUTIL: 'false',
      });
    succeeded(await gsutil(['mb', 'gs://gsutil-bucket']), 'gsutil mb');
    succeeded(await gsutil(['versioning', 'set', 'on', 'gs://gsutil-bucket']), 'gsutil versioning set on');
    succeeded(await gsutil(['cp', tempFile('a.txt', 'one\n'), 'gs://gsutil-bucket/a.txt']), 'gsutil cp');
    succeeded(await gsutil(['cp', tempFile('a.txt', 'two\n'), 'gs://gsutil-bucket/a.txt']), 'gsutil cp again');
    const big = randomBytes(2 * 1024 * 1024 + 5);
    succeeded(await gsutil(['cp', tempFile('big.bin', big), 'gs://gsutil-bucket/big.bin']), 'gsutil cp (resumable)');
    assert.ok(fake.requests.some((r) => r.path === '/resumable/upload/storage/v1/b/gsutil-bucket/o' && r.status === 200), 'gsutil started a resumable session');
    const listed = succeeded(await gsutil(['ls', '-a', 'gs://gsutil-bucket']), 'gsutil ls -a').stdout.trim().split('\n');
    assert.equal(listed.filter((line) => /^gs:\/\/gsutil-bucket\/a\.txt#\d+$/.test(line)).length, 2, listed.join('\n'));
    assert.equal(succeeded(await gsutil(['cat', 'gs://gsutil-bucket/a.txt']), 'gsutil cat').stdout, 'two\n');
    const [content] = await storage.bucket('gsutil-bucket').file('big.bin').download();
    assert.ok(content.equals(big));
  });
});
