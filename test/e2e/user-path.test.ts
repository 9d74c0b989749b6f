import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GetBucketVersioningCommand, HeadBucketCommand, ListBucketsCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { waitFor } from '@k8or/core/testing';
import { issueServingCertificate, serviceDnsNames } from '@k8or/webhook';
import { applyProviderConfigs, SANDBOX_CREDENTIALS, startBackends, type Backends } from '../support/backends.ts';
import { freePort, k8orBinary, startOperatorProcess, type OperatorProcess } from '../support/operator-process.ts';
import { run, runOk } from '../support/run.ts';
import { startServiceProxy, type ServiceProxy } from '../support/service-proxy.ts';
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
/** The Secret the replicas share their self-signed CA and certificate through (the chart's default without cert-manager). */
const CERT_SECRET = 'k8or-webhook-cert';
/** The chart's replicaCount. */
const REPLICAS = 2;
const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** The certificate a replica's webhook presents, as the API server would see it. */
async function servedCertificate(port: number): Promise<Buffer> {
  return await new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: `k8or-webhook.${NS}.svc`, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(raw);
    });
    socket.once('error', reject);
  });
}

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
  /** The Deployment's replicas, each its own process with its own webhook port. */
  const replicas: OperatorProcess[] = [];
  const replicaPorts: number[] = [];
  /** The webhook Service: each connection to one replica, in turn (or to the one a test routes to). */
  let service: ServiceProxy;
  let s3: S3Client;
  let dynamodb: DynamoDBClient;
  const examples: Manifest[] = [];

  const get = async (kind: string, name: string): Promise<Resource> => JSON.parse(await runOk(t.kubectl, ['get', kind, name, '-n', 'default', '-o', 'json'])) as Resource;
  const externalName = async (kind: string, name: string): Promise<string> => String((await get(kind, name)).spec['name']);
  const certificateSecret = async (): Promise<{ cert: string; caBundle: string; caKey: string }> => {
    const data = (JSON.parse(await runOk(t.kubectl, ['get', 'secret', CERT_SECRET, '-n', NS, '-o', 'json'])) as { data: Record<string, string> }).data;
    const text = (key: string): string => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
    return { cert: text('tls.crt'), caBundle: text('ca.crt'), caKey: text('ca.key') };
  };
  /** A server-side dry run of a Bucket, admitted (defaulted and validated) by replica `i` alone. */
  const admitThrough = async (i: number): Promise<void> => {
    service.route(i);
    try {
      const bucket = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: `through-replica-${i}`, namespace: 'default' }, spec: {} };
      const result = await run(t.kubectl, ['create', '--dry-run=server', '-f', '-', '-o', 'json'], JSON.stringify(bucket));
      assert.equal(result.code, 0, `the API server's call to replica ${i}: ${result.stderr}`);
      assert.ok((JSON.parse(result.stdout) as Resource).spec['name'], 'defaulted by the mutating webhook');
    } finally {
      service.route(undefined);
    }
  };
  const bucketVersioning = async (bucket: string): Promise<string | undefined> => (await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-e2e-'));
    for (let i = 0; i < REPLICAS; i++) replicaPorts.push(await freePort());
    service = await startServiceProxy(replicaPorts);
    sandbox = await startSandbox({
      kubeconfigPath: join(home, 'admin.kubeconfig'),
      recordRequests: true,
      // the chart's webhook Service, as kube-proxy would route it: to the replicas' processes
      serviceResolver: (namespace, name) => (namespace === NS && name === 'k8or-webhook' ? service.url : `https://${name}.${namespace}.svc`),
    });
    t = await tools(home, join(home, 'admin.kubeconfig'));
    backends = await startBackends();
    const credentials = SANDBOX_CREDENTIALS;
    s3 = new S3Client({ endpoint: backends.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    dynamodb = new DynamoDBClient({ endpoint: backends.dynamodb, region: 'us-east-1', credentials });

    // the platform team: helm install with the providers the examples use
    // (the replicas re-read their shared certificate every second, for the renewal below)
    await runOk(t.helm, ['install', RELEASE, CHART_DIR, '--namespace', NS, '--create-namespace', '--set', 'providers.aws.enabled=true', '--set', 'providers.gcp.enabled=true', '--set', 'webhook.selfSigned.checkInterval=1s']);

    // the Pod the Deployment would start: the chart's env, the ServiceAccount's token
    const deployment = JSON.parse(await runOk(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS, '-o', 'json'])) as {
      spec: { replicas: number; template: { spec: { serviceAccountName: string; containers: Array<{ args: string[]; env: Array<{ name: string; value?: string }> }> } } };
    };
    const pod = deployment.spec.template.spec;
    assert.deepEqual(pod.containers[0]!.args, ['operator', '--webhook']);
    const env = Object.fromEntries(pod.containers[0]!.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
    const token = (await runOk(t.kubectl, ['create', 'token', pod.serviceAccountName, '-n', NS, '--duration=2h'])).trim();
    await writeFile(join(home, 'operator.kubeconfig'), sandbox.kubeconfig.replace(sandbox.token, token));
    assert.equal(deployment.spec.replicas, REPLICAS);
    // started together, as a rollout does: they race to create the shared certificate
    replicas.push(
      ...(await Promise.all(
        replicaPorts.map((webhookPort) => startOperatorProcess({ bin: (binary as { path: string }).path, kubeconfigPath: join(home, 'operator.kubeconfig'), env, webhookPort })),
      )),
    );
    try {
      for (const replica of replicas) await waitFor('the replica ready', async () => (await fetch(`${replica.probes}/readyz`).catch(() => undefined))?.ok === true, 60_000);
    } catch (error) {
      throw new Error(`${String(error)}\n${replicas.map((r) => r.output()).join('\n')}`);
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
    for (const replica of replicas) await replica.stop();
    await sandbox?.stop();
    await service?.close();
    await backends?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('both replicas serve the one certificate of the shared Secret, and the API server calls each', async () => {
    for (const i of replicaPorts.keys()) await admitThrough(i);
    const { cert } = await certificateSecret();
    for (const [i, port] of replicaPorts.entries()) assert.ok(new X509Certificate(cert).raw.equals(await servedCertificate(port)), `replica ${i} serves the Secret's certificate`);
  });

  it('renews the shared certificate before its end, by one writer, and both replicas serve the renewed one', async () => {
    // a year on: the serving certificate has less than a third of its lifetime left
    const stored = await certificateSecret();
    const hosts = ['localhost', '127.0.0.1', ...serviceDnsNames({ name: 'k8or-webhook', namespace: NS })];
    const ending = issueServingCertificate({ certPem: stored.caBundle, keyPem: stored.caKey }, { hosts, validityDays: 0.001 });
    const from = sandbox.requestLog.length;
    await runOk(t.kubectl, ['patch', 'secret', CERT_SECRET, '-n', NS, '--type=merge', '-p', JSON.stringify({ data: { 'tls.crt': b64(ending.certPem), 'tls.key': b64(ending.keyPem) } })]);
    const renewed = await waitFor('the certificate renewed and served by every replica', async () => {
      const now = await certificateSecret();
      if (now.cert === ending.certPem) return undefined;
      const raw = new X509Certificate(now.cert).raw;
      for (const port of replicaPorts) if (!raw.equals(await servedCertificate(port))) return undefined;
      return now;
    }, 60_000, 250);
    assert.ok(new Date(new X509Certificate(renewed.cert).validTo).getTime() > Date.now() + 300 * 86_400_000, 'a year ahead');
    assert.equal(renewed.caBundle, stored.caBundle, 'the CA stays: the caBundle the API server trusts is unchanged');
    const writes = sandbox.requestLog.slice(from).filter((r) => r.verb === 'update' && r.resource === 'secrets' && r.name === CERT_SECRET && r.status === 200);
    assert.equal(writes.length, 1, 'one writer renewed it');
    for (const i of replicaPorts.keys()) await admitThrough(i);
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
      assert.equal(gone.code, 0, `${kind} stayed: ${(await run(t.kubectl, ['get', kind, '-n', 'default', '-o', 'json'])).stdout}\noperator:\n${replicas.map((r) => r.output().slice(-6000)).join('\n')}\ndenied: ${sandbox.accessOf(NS, RELEASE).denied.join('\n')}`);
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
    for (const replica of replicas) await replica.stop();
    await runOk(t.helm, ['uninstall', RELEASE, '--namespace', NS]);
    assert.equal((await run(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS])).code, 1);
    const afterUninstall = {
      buckets: (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name).sort(),
      tables: (await dynamodb.send(new ListTablesCommand({}))).TableNames?.sort(),
    };
    assert.deepEqual(afterUninstall, before);
  });
});
