import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HeadBucketCommand, GetBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Storage } from '@google-cloud/storage';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { LocalStackEndpoints } from '@k8or/cli';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/k8or.js', import.meta.url));
const examples = fileURLToPath(new URL('../../../examples/sandbox/', import.meta.url));
const gcpExamples = fileURLToPath(new URL('../../../examples/sandbox/gcp/', import.meta.url));
const azureExamples = fileURLToPath(new URL('../../../examples/sandbox/azure/', import.meta.url));
/** Azurite's published development account. */
const azurite = { name: 'devstoreaccount1', key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==' };
const credentials = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one' };

describe('k8or sandbox: a newcomer runs it and uses kubectl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-cli-'));
  const kubeconfig = join(dir, 'kubeconfig');
  let child: ChildProcess;
  let output = '';
  let endpoints: LocalStackEndpoints;
  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout, stderr } = await run('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 120_000 });
    return stdout + stderr;
  };

  /** `kubectl apply -f -` with the manifest on stdin: its exit code and output, as `CODE OUTPUT`. */
  const applyFromStdin = (manifest: string): Promise<string> =>
    new Promise<string>((resolve) => {
      const p = spawn('kubectl', ['apply', '-f', '-'], { env: { ...process.env, KUBECONFIG: kubeconfig } });
      let text = '';
      p.stdout.on('data', (c: Buffer) => (text += c.toString()));
      p.stderr.on('data', (c: Buffer) => (text += c.toString()));
      p.on('close', (code) => resolve(`${code} ${text}`));
      p.stdin.end(manifest);
    });

  before(async () => {
    child = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--log-file', join(dir, 'sandbox.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 120_000;
    while (!output.includes('k8or sandbox is ready.')) {
      if (child.exitCode !== null) throw new Error(`k8or sandbox exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`k8or sandbox did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    endpoints = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints;
  });

  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints where everything is and writes a kubeconfig', () => {
    assert.ok(existsSync(kubeconfig));
    assert.match(output, /API server\s+https:\/\/127\.0\.0\.1:\d+/);
    assert.match(output, new RegExp(`export KUBECONFIG=${kubeconfig}`));
    // Progress while starting: each part, when it is ready and how long it took.
    assert.match(output, /starting API server\.\.\.\n/);
    assert.match(output, /ready {4}API server \(\d+\.\d s\)/);
    assert.match(output, /ready {4}webhook and operator \(providers aws, azure, gcp\) \(\d+\.\d s\)/);
    assert.match(output, /all started in \d+\.\d s/);
  });

  it('serves the k8or kinds and the default ProviderConfig', async () => {
    const resources = await kubectl('api-resources', '--api-group=k8or.io');
    for (const kind of ['Bucket', 'Table', 'ProviderConfig']) assert.match(resources, new RegExp(kind));
    const configs = await kubectl('get', 'providerconfigs');
    assert.match(configs, /default\s+aws\s+us-east-1/);
  });

  it("lists the installed providers' settings, so kubectl explain shows them", async () => {
    const explained = await kubectl('explain', 'providerconfig.spec.settings');
    assert.match(explained, /^\s+storageClass\s+<string>/m, `gcp's storageClass is listed:\n${explained}`);
    assert.match(explained, /^\s+endpointSuffix\s+<string>/m, `azure's endpointSuffix is listed:\n${explained}`);
    assert.match(explained, /\(gcp\) Storage class of new Cloud Storage buckets/);
  });

  it('makes the example Bucket and Table real in the local backends', async () => {
    await kubectl('apply', '-f', examples);
    await kubectl('wait', '--for=condition=Ready', 'bucket/photos', 'table/orders', '--timeout=90s');
    const bucketName = (await kubectl('get', 'bucket', 'photos', '-o', 'jsonpath={.spec.name}')).trim();
    const tableName = (await kubectl('get', 'table', 'orders', '-o', 'jsonpath={.spec.name}')).trim();

    const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    await s3.send(new HeadBucketCommand({ Bucket: bucketName }));
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket: bucketName }))).Status, 'Enabled');
    assert.ok(endpoints.dynamodb, 'DynamoDB Local runs');
    const dynamodb = new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials });
    const table = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    assert.deepEqual(table.Table?.KeySchema?.map((k) => k.AttributeName), ['customerId', 'orderedAt']);
    s3.destroy();
    dynamodb.destroy();

    const outputs = await kubectl('get', 'configmap', 'photos-bucket', '-o', 'jsonpath={.data.externalName}');
    assert.equal(outputs.trim(), bucketName);

    // The CRD schema's own defaults hold: the CRDs were installed whole.
    assert.equal((await kubectl('get', 'bucket', 'photos', '-o', 'jsonpath={.spec.publicAccess}')).trim(), 'Blocked');
  });

  it('rejects at apply time what the cloud would reject', async () => {
    const manifest = `apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: bad\n  namespace: default\nspec:\n  name: Not_A_Valid_Bucket\n`;
    const failure = await applyFromStdin(manifest);
    assert.match(failure, /^1 /);
    assert.match(failure, /spec\.name/);
    assert.match(failure, /s3\.characters/);

    const immutable = await new Promise<string>((resolve) => {
      const p = spawn('kubectl', ['patch', 'bucket', 'photos', '--type=merge', '-p', '{"spec":{"name":"renamed-photos"}}'], { env: { ...process.env, KUBECONFIG: kubeconfig } });
      let text = '';
      p.stderr.on('data', (c: Buffer) => (text += c.toString()));
      p.on('close', (code) => resolve(`${code} ${text}`));
    });
    assert.match(immutable, /^1 /);
    assert.match(immutable, /spec\.name/);
    assert.match(immutable, /immutable/);
  });

  it('serves Azure too: an Azure Bucket and Table reach Ready in Azurite, and a bad container name is refused at apply time', async () => {
    assert.match(await kubectl('get', 'providerconfigs'), /local-azure\s+azure/);
    await kubectl('apply', '-f', azureExamples);
    await kubectl('wait', '--for=condition=Ready', 'bucket/media', 'table/sessions', '--timeout=90s');
    const containerName = (await kubectl('get', 'bucket', 'media', '-o', 'jsonpath={.spec.name}')).trim();
    const tableName = (await kubectl('get', 'table', 'sessions', '-o', 'jsonpath={.spec.name}')).trim();
    const blobs = new BlobServiceClient(endpoints.azurite.blob, new StorageSharedKeyCredential(azurite.name, azurite.key));
    const properties = await blobs.getContainerClient(containerName).getProperties();
    assert.equal(properties.metadata?.['team'], 'media');
    assert.equal(properties.metadata?.['k8or_name'], 'media');
    const tables = new TableServiceClient(endpoints.azurite.table, new AzureNamedKeyCredential(azurite.name, azurite.key), { allowInsecureConnection: true });
    const names: string[] = [];
    for await (const table of tables.listTables()) names.push(table.name ?? '');
    assert.ok(names.includes(tableName), `${tableName} in ${names.join(', ')}`);

    const manifest = `apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: bad-azure\n  namespace: default\nspec:\n  providerConfigRef:\n    name: local-azure\n  name: my--photos\n`;
    const failure = await applyFromStdin(manifest);
    assert.match(failure, /^1 /);
    assert.match(failure, /spec\.name/);
    assert.match(failure, /azure-container\.consecutive-hyphens/);

    await kubectl('delete', '-f', azureExamples, '--wait=true', '--timeout=90s');
    assert.equal(await blobs.getContainerClient(containerName).exists(), false);
  });

  it('serves GCP through local-gcp: the example Bucket and Table reach Ready, and a bad GCS name is refused at apply time', async () => {
    assert.match(await kubectl('get', 'providerconfigs'), /local-gcp\s+gcp/);
    const withTable = endpoints.gcp.bigtable !== undefined;
    assert.match(output, withTable ? /Bigtable\s+127\.0\.0\.1:\d+ \(the Bigtable emulator keeps no state/ : /Bigtable\s+- \(not running, so the sandbox has no GCP Tables/);
    await kubectl('apply', '-f', withTable ? gcpExamples : join(gcpExamples, 'bucket.yaml'));
    await kubectl('wait', '--for=condition=Ready', 'bucket/gcp-photos', ...(withTable ? ['table/gcp-orders'] : []), '--timeout=90s');
    const bucketName = (await kubectl('get', 'bucket', 'gcp-photos', '-o', 'jsonpath={.spec.name}')).trim();
    const [metadata] = await new Storage({ apiEndpoint: endpoints.gcp.gcs, projectId: 'k8or-sandbox' }).bucket(bucketName).getMetadata();
    assert.deepEqual(metadata.versioning, { enabled: true });

    const manifest = `apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: bad-gcs\n  namespace: default\nspec:\n  providerConfigRef:\n    name: local-gcp\n  name: goog-photos\n`;
    const failure = await applyFromStdin(manifest);
    assert.match(failure, /^1 /);
    assert.match(failure, /spec\.name/);
    assert.match(failure, /gcs\.goog-prefix/);
    await kubectl('delete', '-f', withTable ? gcpExamples : join(gcpExamples, 'bucket.yaml'), '--wait=true', '--timeout=90s');
  });

  it('deletes the cloud resources with the objects, then stops cleanly on SIGTERM', async () => {
    const bucketName = (await kubectl('get', 'bucket', 'photos', '-o', 'jsonpath={.spec.name}')).trim();
    await kubectl('delete', '-f', examples, '--wait=true', '--timeout=90s');
    const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket: bucketName })), (error: Error) => error.name === 'NotFound');
    s3.destroy();

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.match(output, /stopped\./);
  });
});
