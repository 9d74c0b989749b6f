// The sandbox's GCP and Azure backends accept the local credentials that sandbox.json names, and
// refuse others as the clouds do (GCS 401 Invalid Credentials, Azure 403 AuthorizationFailure), which
// a user then reads in the object's status.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Storage, type ApiError } from '@google-cloud/storage';
import { BlobServiceClient, RestError, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { LocalStackEndpoints } from '@k8or/cli';
import { startK8or, type Running } from './support.ts';

const run = promisify(execFile);
const gcloudProbe = spawnSync('gcloud', ['version'], { timeout: 60_000 });
const gcloudMissing = gcloudProbe.error ? `gcloud is not installed (install the Google Cloud SDK to run this test): ${gcloudProbe.error.message}` : undefined;

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  project_id: string;
}

describe('k8or sandbox: local credentials for GCP and Azure, and nothing else', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-credentials-'));
  const kubeconfig = join(dir, 'kubeconfig');
  let sandbox: Running;
  let endpoints: LocalStackEndpoints;
  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 120_000 });
    return stdout;
  };
  const apply = async (manifest: string): Promise<void> => {
    const file = join(dir, `manifest-${Date.now()}.json`);
    writeFileSync(file, manifest);
    await kubectl('apply', '-f', file);
  };
  /** Polls the object's Synced condition until it is False with a message, and returns that message. */
  const syncedFailure = async (kind: string, name: string): Promise<string> => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const object = JSON.parse(await kubectl('get', kind, name, '-o', 'json')) as { status?: { conditions?: { type: string; status: string; message?: string }[] } };
      const synced = object.status?.conditions?.find((condition) => condition.type === 'Synced');
      if (synced?.status === 'False' && synced.message) return synced.message;
      if (Date.now() > deadline) throw new Error(`${kind}/${name} never reported Synced=False: ${JSON.stringify(object.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };

  before(async () => {
    sandbox = startK8or(['sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--log-file', join(dir, 'sandbox.log')]);
    const deadline = Date.now() + 180_000;
    while (!sandbox.output().includes('k8or sandbox is ready.')) {
      if (sandbox.child.exitCode !== null) throw new Error(`k8or sandbox exited early:\n${sandbox.output()}`);
      if (Date.now() > deadline) throw new Error(`k8or sandbox did not become ready:\n${sandbox.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    endpoints = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints;
  });

  after(async () => {
    if (sandbox.child.exitCode === null) {
      sandbox.child.kill('SIGTERM');
      await sandbox.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the GCP service-account key and the Azure account in sandbox.json, readable by the user only', async () => {
    assert.equal(statSync(join(dir, 'sandbox.json')).mode & 0o077, 0);
    const key = JSON.parse(readFileSync(endpoints.gcp.serviceAccount.keyFile, 'utf8')) as ServiceAccountKey;
    assert.equal(key.client_email, endpoints.gcp.serviceAccount.email);
    assert.equal(statSync(endpoints.gcp.serviceAccount.keyFile).mode & 0o077, 0);
    const storage = new Storage({ apiEndpoint: endpoints.gcp.gcs, projectId: endpoints.gcp.serviceAccount.project, credentials: key, useAuthWithCustomEndpoint: true });
    storage.authClient.useJWTAccessWithScope = true;
    const [bucket] = await storage.createBucket('made-with-the-sandbox-key');
    assert.equal((await bucket.getMetadata())[0].name, 'made-with-the-sandbox-key');
    assert.match(readFileSync(endpoints.gcp.caFile, 'utf8'), /BEGIN CERTIFICATE/);
    assert.match(endpoints.gcp.gcsHttps, /^https:\/\/127\.0\.0\.1:\d+$/);

    const blobs = BlobServiceClient.fromConnectionString(endpoints.azurite.connectionString);
    await blobs.getContainerClient('made-with-the-connection-string').create();
    assert.equal(endpoints.azurite.accountName, 'devstoreaccount1');
  });

  it('lets gcloud log in with the key file and list buckets over HTTPS, trusting the CA that sandbox.json names', { skip: gcloudMissing ?? false }, async () => {
    const environment = {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(CLOUDSDK_|REQUESTS_CA_BUNDLE$|CURL_CA_BUNDLE$)/.test(name))),
      CLOUDSDK_CONFIG: mkdtempSync(join(dir, 'gcloud-')),
      CLOUDSDK_CORE_PROJECT: endpoints.gcp.serviceAccount.project,
      CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE: `${endpoints.gcp.gcsHttps}/storage/v1/`,
      CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE: endpoints.gcp.caFile,
    };
    const gcloud = async (...args: string[]): Promise<string> => (await run('gcloud', [...args, '--quiet'], { env: environment, timeout: 120_000, killSignal: 'SIGKILL' })).stdout;
    await gcloud('auth', 'activate-service-account', `--key-file=${endpoints.gcp.serviceAccount.keyFile}`);
    assert.match(await gcloud('storage', 'ls'), /^gs:\/\/made-with-the-sandbox-key\/$/m);
  });

  it('refuses credentials it did not issue: GCS answers 401 and Azurite 403 AuthorizationFailure, and the objects say so in status', async () => {
    const issued = JSON.parse(readFileSync(endpoints.gcp.serviceAccount.keyFile, 'utf8')) as ServiceAccountKey;
    const forged = { ...issued, private_key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    const storage = new Storage({ apiEndpoint: endpoints.gcp.gcs, projectId: issued.project_id, credentials: forged, useAuthWithCustomEndpoint: true, retryOptions: { autoRetry: false } });
    storage.authClient.useJWTAccessWithScope = true;
    await assert.rejects(storage.getBuckets(), (error: ApiError) => error.code === 401 && /Invalid Credentials/.test(error.message));
    const wrongKey = Buffer.from('a key Azurite never issued, for this test').toString('base64');
    const blobs = new BlobServiceClient(endpoints.azurite.blob, new StorageSharedKeyCredential(endpoints.azurite.accountName, wrongKey), { retryOptions: { maxTries: 1 } });
    await assert.rejects(blobs.getContainerClient('refused').create(), (error: unknown) => error instanceof RestError && error.statusCode === 403 && error.code === 'AuthorizationFailure');

    const secret = (name: string, data: Record<string, string>): string =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'k8or-system' }, stringData: data });
    const providerConfig = (name: string, spec: Record<string, unknown>): string => JSON.stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec });
    const bucket = (name: string, providerConfigName: string): string =>
      JSON.stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: 'default' }, spec: { providerConfigRef: { name: providerConfigName } } });
    await apply(secret('forged-gcp-key', { 'credentials.json': JSON.stringify(forged) }));
    await apply(secret('wrong-azure-key', { accountKey: wrongKey }));
    await apply(
      providerConfig('forged-gcp', {
        provider: 'gcp',
        project: issued.project_id,
        region: 'us-central1',
        endpoints: { bucket: endpoints.gcp.gcs },
        credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'forged-gcp-key' } },
      }),
    );
    await apply(
      providerConfig('wrong-azure', {
        provider: 'azure',
        storageAccount: endpoints.azurite.accountName,
        endpoints: { bucket: endpoints.azurite.blob, table: endpoints.azurite.table },
        credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'wrong-azure-key' } },
      }),
    );
    await apply(bucket('forged-gcp-bucket', 'forged-gcp'));
    await apply(bucket('wrong-azure-bucket', 'wrong-azure'));
    assert.match(await syncedFailure('bucket', 'forged-gcp-bucket'), /401|Invalid Credentials|authError/);
    assert.match(await syncedFailure('bucket', 'wrong-azure-bucket'), /AuthorizationFailure/);
    await kubectl('delete', 'bucket', 'forged-gcp-bucket', 'wrong-azure-bucket', '--wait=false');
  });
});
