import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GetBucketVersioningCommand, HeadBucketCommand, ListBucketsCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { waitFor } from '@k8or/core/testing';
import { applyProviderConfigs, SANDBOX_CREDENTIALS, startBackends, type Backends } from '../support/backends.ts';
import { freePort, k8orBinary, startOperatorProcess, type OperatorProcess } from '../support/operator-process.ts';
import { run, runOk } from '../support/run.ts';
import { CHART_DIR, EXAMPLES_DIR, tools, type Tools } from '../support/tools.ts';

// A platform team's and a user's whole path, with real helm and kubectl: helm-install the chart;
// the operator and its webhook run as a process outside the API server with a token of the chart's
// ServiceAccount, so the API server authorizes every call they make with the chart's own RBAC. The
// user applies every example of examples/sandbox, sees each Ready and in its backend, edits one,
// watches drift repaired, meets the webhook's denial, deletes (Delete and Retain), and the team
// uninstalls without touching a cloud resource. The chart's grants must all be used, and no call refused.

const NS = 'k8or-system';
const RELEASE = 'k8or';
const binary = k8orBinary();

interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }
type Resource = Manifest & { spec: Record<string, unknown>; status?: { conditions?: Array<{ type: string; status: string; message?: string }> } };

async function exampleFiles(): Promise<string[]> {
  const dir = join(EXAMPLES_DIR, 'sandbox');
  const top = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f));
  const gcp = (await readdir(join(dir, 'gcp'))).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, 'gcp', f));
  return [...top, ...gcp].sort();
}

describe('the user path: helm install, kubectl apply, edit, drift, denial, delete, helm uninstall', { skip: 'missing' in binary ? binary.missing : false, timeout: 300_000 }, () => {
  let home: string;
  let sandbox: Sandbox;
  let backends: Backends;
  let t: Tools;
  let operator: OperatorProcess | undefined;
  let s3: S3Client;
  let dynamodb: DynamoDBClient;
  const examples: Manifest[] = [];

  const get = async (kind: string, name: string): Promise<Resource> => JSON.parse(await runOk(t.kubectl, ['get', kind, name, '-n', 'default', '-o', 'json'])) as Resource;
  const externalName = async (kind: string, name: string): Promise<string> => String((await get(kind, name)).spec['name']);
  const bucketVersioning = async (bucket: string): Promise<string | undefined> => (await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-e2e-'));
    const webhookPort = await freePort();
    sandbox = await startSandbox({
      kubeconfigPath: join(home, 'admin.kubeconfig'),
      // the chart's webhook Service, as kube-proxy would route it: to the operator process
      serviceResolver: (namespace, name) => (namespace === NS && name === 'k8or-webhook' ? `https://127.0.0.1:${webhookPort}` : `https://${name}.${namespace}.svc`),
    });
    t = await tools(home, join(home, 'admin.kubeconfig'));
    backends = await startBackends();
    const credentials = SANDBOX_CREDENTIALS;
    s3 = new S3Client({ endpoint: backends.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    dynamodb = new DynamoDBClient({ endpoint: backends.dynamodb, region: 'us-east-1', credentials });

    // the platform team: helm install with the providers the examples use
    await runOk(t.helm, ['install', RELEASE, CHART_DIR, '--namespace', NS, '--create-namespace', '--set', 'providers.aws.enabled=true', '--set', 'providers.gcp.enabled=true']);

    // the Pod the Deployment would start: the chart's env, the ServiceAccount's token
    const deployment = JSON.parse(await runOk(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS, '-o', 'json'])) as {
      spec: { template: { spec: { serviceAccountName: string; containers: Array<{ args: string[]; env: Array<{ name: string; value?: string }> }> } } };
    };
    const pod = deployment.spec.template.spec;
    assert.deepEqual(pod.containers[0]!.args, ['operator', '--webhook']);
    const env = Object.fromEntries(pod.containers[0]!.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
    const token = (await runOk(t.kubectl, ['create', 'token', pod.serviceAccountName, '-n', NS, '--duration=2h'])).trim();
    await writeFile(join(home, 'operator.kubeconfig'), sandbox.kubeconfig.replace(sandbox.token, token));
    operator = await startOperatorProcess({ bin: (binary as { path: string }).path, kubeconfigPath: join(home, 'operator.kubeconfig'), env, webhookPort });
    try {
      await waitFor('the operator ready', async () => (await fetch(`${operator!.probes}/readyz`).catch(() => undefined))?.ok === true, 60_000);
    } catch (error) {
      throw new Error(`${String(error)}\n${operator.output()}`);
    }
    // self-signed mode: the operator wrote its CA into the chart's webhook configurations
    // (the webhook fails closed: ProviderConfigs go in once it serves, as on a cluster)
    await waitFor('caBundle in the webhook configuration', async () => (await runOk(t.kubectl, ['get', 'validatingwebhookconfiguration', 'k8or-validating-webhook', '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}'])).length > 0, 30_000);
    await applyProviderConfigs(t.kubectl, NS, backends);

    for (const file of await exampleFiles()) {
      for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
        const manifest = doc.toJSON() as Manifest | null;
        if (manifest) examples.push(manifest);
      }
    }
  });

  after(async () => {
    await operator?.stop();
    await sandbox?.stop();
    await backends?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('applies every example of examples/sandbox and each becomes Ready, in its backend', async () => {
    const files = await exampleFiles();
    await runOk(t.kubectl, ['apply', ...files.flatMap((f) => ['-f', f])]);
    for (const example of examples) {
      if (example.kind === 'Table' && example.metadata.name === 'gcp-orders' && !backends.bigtable) continue;
      await runOk(t.kubectl, ['wait', '--for=condition=Ready', `${example.kind.toLowerCase()}/${example.metadata.name}`, '-n', example.metadata.namespace ?? 'default', '--timeout=90s'], undefined, 120_000);
    }
    const photos = await externalName('bucket', 'photos');
    await s3.send(new HeadBucketCommand({ Bucket: photos }));
    assert.equal(await bucketVersioning(photos), 'Enabled');
    const orders = await externalName('table', 'orders');
    const table = await dynamodb.send(new DescribeTableCommand({ TableName: orders }));
    assert.deepEqual(table.Table?.KeySchema?.map((k) => k.AttributeName), ['customerId', 'orderedAt']);
    const gcpBucket = examples.find((e) => e.kind === 'Bucket' && e.metadata.name !== 'photos');
    if (gcpBucket) {
      const name = await externalName('bucket', gcpBucket.metadata.name);
      const response = await fetch(`${backends.gcs}/storage/v1/b/${encodeURIComponent(name)}`);
      assert.equal(response.status, 200, `GCS bucket ${name}`);
    }
  });

  it('applies an edited spec to the cloud', async () => {
    await runOk(t.kubectl, ['patch', 'bucket', 'photos', '-n', 'default', '--type=merge', '-p', '{"spec":{"versioning":false}}']);
    const photos = await externalName('bucket', 'photos');
    await waitFor('versioning Suspended in S3', async () => (await bucketVersioning(photos)) === 'Suspended', 60_000);
  });

  it('repairs drift made in the cloud behind its back', async () => {
    await runOk(t.kubectl, ['annotate', 'bucket', 'photos', '-n', 'default', 'k8or.io/resync-period=10s', '--overwrite']);
    const photos = await externalName('bucket', 'photos');
    await s3.send(new PutBucketVersioningCommand({ Bucket: photos, VersioningConfiguration: { Status: 'Enabled' } }));
    await waitFor('the drift repaired', async () => (await bucketVersioning(photos)) === 'Suspended', 90_000);
    // again, and the outputs ConfigMap edited by hand too: both come back, the repeated event is counted
    const outputs = async (): Promise<Record<string, string>> =>
      (JSON.parse(await runOk(t.kubectl, ['get', 'configmap', 'photos-bucket', '-n', 'default', '-o', 'json'])) as { data: Record<string, string> }).data;
    const published = await outputs();
    assert.equal(published['externalName'], photos);
    await runOk(t.kubectl, ['patch', 'configmap', 'photos-bucket', '-n', 'default', '--type=merge', '-p', '{"data":{"externalName":"edited-by-hand"}}']);
    await s3.send(new PutBucketVersioningCommand({ Bucket: photos, VersioningConfiguration: { Status: 'Enabled' } }));
    await waitFor('the drift repaired again', async () => (await bucketVersioning(photos)) === 'Suspended' && (await outputs())['externalName'] === photos, 90_000);
  });

  it("refuses an invalid resource with the webhook's reason", async () => {
    const bad = await run(t.kubectl, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'bad', namespace: 'default' }, spec: { name: 'Not_A_Valid_Bucket' } }));
    assert.notEqual(bad.code, 0);
    // the API server's schema knows nothing of S3's naming rules: the refusal is the webhook's, naming the field and rule
    assert.match(bad.stderr, /The Bucket "bad" is invalid: \n\* spec\.name: S3 bucket names may contain only lowercase letters, digits, dots \(\.\) and hyphens \(-\) \(rule s3\.characters\)/);
  });

  it('deletes the cloud resource under Delete, and keeps it under Retain', async () => {
    const photos = await externalName('bucket', 'photos');
    const orders = await externalName('table', 'orders');
    await runOk(t.kubectl, ['patch', 'table', 'orders', '-n', 'default', '--type=merge', '-p', '{"spec":{"deletionPolicy":"Retain"}}']);
    await runOk(t.kubectl, ['delete', 'bucket/photos', 'table/orders', '-n', 'default', '--wait=false']);
    for (const kind of ['bucket/photos', 'table/orders']) {
      const gone = await run(t.kubectl, ['wait', '--for=delete', kind, '-n', 'default', '--timeout=90s'], undefined, 120_000);
      assert.equal(gone.code, 0, `${kind} stayed: ${(await run(t.kubectl, ['get', kind, '-n', 'default', '-o', 'json'])).stdout}\noperator:\n${operator?.output().slice(-6000)}\ndenied: ${sandbox.accessOf(NS, RELEASE).denied.join('\n')}`);
    }
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket: photos })), (error: { name?: string }) => error.name === 'NotFound');
    assert.equal((await dynamodb.send(new DescribeTableCommand({ TableName: orders }))).Table?.TableName, orders);
  });

  it("used every grant of the chart's RBAC, and was refused nothing", () => {
    const access = sandbox.accessOf(NS, RELEASE);
    const chartBindings = new Set([`ClusterRoleBinding ${RELEASE}`, `RoleBinding ${NS}/${RELEASE}`]);
    const unused = access.grants
      .filter((g) => chartBindings.has(g.grant.binding) && g.uses === 0)
      .map((g) => g.key);
    assert.deepEqual(access.denied, [], `calls the chart does not grant:\n${access.denied.join('\n')}`);
    assert.deepEqual(unused, [], `grants of the chart no call used:\n${unused.join('\n')}`);
  });

  it('helm uninstall touches no cloud resource', async () => {
    const before = {
      buckets: (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name).sort(),
      tables: (await dynamodb.send(new ListTablesCommand({}))).TableNames?.sort(),
    };
    // the Deployment's Pods go with the release
    await operator?.stop();
    await runOk(t.helm, ['uninstall', RELEASE, '--namespace', NS]);
    assert.equal((await run(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS])).code, 1);
    const afterUninstall = {
      buckets: (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name).sort(),
      tables: (await dynamodb.send(new ListTablesCommand({}))).TableNames?.sort(),
    };
    assert.deepEqual(afterUninstall, before);
  });
});
