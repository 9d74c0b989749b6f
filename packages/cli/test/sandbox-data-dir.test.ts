// k8or sandbox --data-dir: a restart finds the objects and the cloud state it left, starts the
// backends on the ports they had (so the ProviderConfigs point where they pointed), and re-creates nothing.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Storage } from '@google-cloud/storage';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { LocalStackEndpoints } from '@k8or/cli';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const azureExamples = fileURLToPath(new URL('../../../examples/sandbox/azure/', import.meta.url));
/** Azurite's published development account. */
const azurite = { name: 'devstoreaccount1', key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==' };

describe('k8or sandbox --data-dir: state survives a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-cli-data-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 120_000 })).stdout;
  let child: ChildProcess | undefined;

  /** Starts the sandbox on the data dir and resolves once it is ready, with what it serves. */
  const startSandbox = async (): Promise<LocalStackEndpoints> => {
    let output = '';
    const started = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--data-dir', join(dir, 'data'), '--log-file', join(dir, 'sandbox.log')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 120_000;
    while (!output.includes('k8or sandbox is ready.')) {
      if (started.exitCode !== null) throw new Error(`k8or sandbox exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`k8or sandbox did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints;
  };
  const stopSandbox = async (): Promise<void> => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<number | null>((resolve) => running.once('exit', (code) => resolve(code)));
    running.kill('SIGTERM');
    assert.equal(await exited, 0);
  };

  after(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('comes back with the Azure container and its Bucket, the GCP key it issued, and every backend on the port it had', async () => {
    const first = await startSandbox();
    const firstKeyText = readFileSync(first.gcp.serviceAccount.keyFile, 'utf8');
    await kubectl('apply', '-f', azureExamples);
    await kubectl('wait', '--for=condition=Ready', 'bucket/media', 'table/sessions', '--timeout=90s');
    const containerName = (await kubectl('get', 'bucket', 'media', '-o', 'jsonpath={.spec.name}')).trim();
    const createdAt = (await kubectl('get', 'bucket', 'media', '-o', 'jsonpath={.metadata.annotations.k8or\\.io/create-succeeded}')).trim();
    await stopSandbox();

    const second = await startSandbox();
    assert.deepEqual(
      { s3: second.s3, dynamodb: second.dynamodb, gcs: second.gcp.gcs, gcsHttps: second.gcp.gcsHttps, bigtable: second.gcp.bigtable, azurite: second.azurite },
      { s3: first.s3, dynamodb: first.dynamodb, gcs: first.gcp.gcs, gcsHttps: first.gcp.gcsHttps, bigtable: first.gcp.bigtable, azurite: first.azurite },
      'every backend listens where it listened before',
    );
    assert.equal((await kubectl('get', 'providerconfig', 'local-azure', '-o', 'jsonpath={.spec.endpoints.bucket}')).trim(), second.azurite.blob);
    assert.equal((await kubectl('get', 'providerconfig', 'default', '-o', 'jsonpath={.spec.endpoints.bucket}')).trim(), second.s3);
    // The service-account key the persisted Secret holds is still the one the GCS fake accepts.
    const firstKey = JSON.parse(firstKeyText) as { client_email: string; private_key: string; project_id: string };
    const gcs = new Storage({ apiEndpoint: second.gcp.gcs, projectId: firstKey.project_id, credentials: firstKey, useAuthWithCustomEndpoint: true });
    gcs.authClient.useJWTAccessWithScope = true;
    await gcs.createBucket('made-after-a-restart');
    const blobs = new BlobServiceClient(second.azurite.blob, new StorageSharedKeyCredential(azurite.name, azurite.key));
    assert.equal((await blobs.getContainerClient(containerName).getProperties()).metadata?.['k8or_name'], 'media', 'the container survived in Azurite\'s data');
    await kubectl('wait', '--for=condition=Ready', 'bucket/media', 'table/sessions', '--timeout=90s');
    assert.equal((await kubectl('get', 'bucket', 'media', '-o', 'jsonpath={.metadata.annotations.k8or\\.io/create-succeeded}')).trim(), createdAt, 'nothing was created again');
    await stopSandbox();
  });
});
