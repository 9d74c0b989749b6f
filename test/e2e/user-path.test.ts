import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GetBucketVersioningCommand, HeadBucketCommand, ListBucketsCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { waitFor } from '@k8or/core/testing';
import { issueServingCertificate, serviceDnsNames } from '@k8or/webhook';
import { applyProviderConfigs, SANDBOX_CREDENTIALS, startBackends, type Backends } from '../support/backends.ts';
import { runChartDeployment, type ChartDeployment } from '../support/chart-deployment.ts';
import { EXTERNAL_KUBECONFIG, RUNNER, externalSettingsProblem, openCluster, type E2ECluster } from '../support/cluster.ts';
import { freePort, k8orBinary } from '../support/operator-process.ts';
import { run, runOk } from '../support/run.ts';
import { startServiceProxy, type ServiceProxy } from '../support/service-proxy.ts';
import { CHART_DIR, EXAMPLES_DIR, tools, type Tools } from '../support/tools.ts';

// A platform team's and a user's whole path, with real helm and kubectl: helm-install the chart;
// the operator and its webhook run as the Deployment's two replicas: processes outside the API server
// with a token of the chart's ServiceAccount, so the API server authorizes every call they make with
// the chart's own RBAC (or, on a real cluster with K8OR_E2E_KUBECONFIG, the chart's Pods). The
// user applies every example of examples/sandbox, sees each Ready and in its backend, edits one,
// watches drift repaired, meets the webhook's denial, deletes (Delete and Retain), and the team
// uninstalls without touching a cloud resource. The chart's grants must all be used, and no call refused.

const NS = 'k8or-system';
const RELEASE = 'k8or';
const binary = k8orBinary();
const SKIP = externalSettingsProblem() ?? (RUNNER === 'process' && 'missing' in binary ? binary.missing : false);
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

describe('the user path: helm install, kubectl apply, edit, drift, denial, delete, helm uninstall', { skip: SKIP, timeout: EXTERNAL_KUBECONFIG ? 900_000 : 300_000 }, () => {
  let home: string;
  let cluster: E2ECluster;
  let backends: Backends;
  let t: Tools;
  let deployment: ChartDeployment | undefined;
  /** `process` mode: each replica's webhook port here, and the webhook Service in front of them (each connection to one replica, in turn, or to the one a test routes to). */
  const replicaPorts: number[] = [];
  let service: ServiceProxy | undefined;
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
  /** A server-side dry run of a Bucket, admitted (defaulted and validated) by the webhook. */
  const admit = async (through: string): Promise<void> => {
    const bucket = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'admitted', namespace: 'default' }, spec: {} };
    const result = await run(t.kubectl, ['create', '--dry-run=server', '-f', '-', '-o', 'json'], JSON.stringify(bucket));
    assert.equal(result.code, 0, `the API server's call to ${through}: ${result.stderr}`);
    assert.ok((JSON.parse(result.stdout) as Resource).spec['name'], 'defaulted by the mutating webhook');
  };
  /**
   * The API server's admission calls reach every replica. Here: each replica alone, through the
   * Service routed to it. On a cluster's Pods, where kube-proxy picks: several calls, all admitted.
   */
  const admitThroughEveryReplica = async (): Promise<void> => {
    if (!service) {
      for (let call = 0; call < 3 * REPLICAS; call++) await admit(`the webhook Service (call ${call})`);
      return;
    }
    for (const i of replicaPorts.keys()) {
      service.route(i);
      try {
        await admit(`replica ${i}`);
      } finally {
        service.route(undefined);
      }
    }
  };
  /**
   * An external cluster is left as the suite found it: the release, the examples (their finalizers
   * released once no operator is left to do it), the ProviderConfigs, the Secrets and the namespace.
   */
  const leaveAsFound = async (): Promise<void> => {
    await run(t.helm, ['uninstall', RELEASE, '--namespace', NS, '--wait']);
    for (const example of examples) {
      const ref = [`${example.kind.toLowerCase()}/${example.metadata.name}`, '-n', example.metadata.namespace ?? 'default'];
      await run(t.kubectl, ['patch', ...ref, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
      await run(t.kubectl, ['delete', ...ref, '--ignore-not-found', '--wait=false']);
    }
    await run(t.kubectl, ['delete', 'providerconfig', 'default', 'local-gcp', '--ignore-not-found']);
    await run(t.kubectl, ['delete', 'namespace', NS, '--ignore-not-found', '--wait=false']);
  };
  const operatorLogs = async (): Promise<string> => (await deployment?.logs().catch((error: unknown) => String(error))) ?? '';
  const bucketVersioning = async (bucket: string): Promise<string | undefined> => (await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-e2e-'));
    if (RUNNER === 'process') {
      for (let i = 0; i < REPLICAS; i++) replicaPorts.push(await freePort());
      // on an external cluster without kubelets, its API server sends the Service's calls to this port
      service = await startServiceProxy(replicaPorts, EXTERNAL_KUBECONFIG ? Number(process.env['K8OR_E2E_WEBHOOK_SERVICE_PORT']) : 0);
    }
    cluster = await openCluster(home, {
      recordRequests: true,
      // the chart's webhook Service, as kube-proxy would route it: to the replicas' processes
      serviceResolver: (namespace, name) => (namespace === NS && name === 'k8or-webhook' && service ? service.url : `https://${name}.${namespace}.svc`),
    });
    t = await tools(home, cluster.kubeconfigPath);
    backends = await startBackends();
    const credentials = SANDBOX_CREDENTIALS;
    s3 = new S3Client({ endpoint: backends.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    dynamodb = new DynamoDBClient({ endpoint: backends.dynamodb, region: 'us-east-1', credentials });

    // the platform team: helm install with the providers the examples use
    // (the replicas re-read their shared certificate every second, for the renewal below)
    await runOk(t.helm, ['install', RELEASE, CHART_DIR, '--namespace', NS, '--create-namespace', '--set', 'providers.aws.enabled=true', '--set', 'providers.gcp.enabled=true', '--set', 'webhook.selfSigned.checkInterval=1s', ...cluster.helmImageArgs]);
    deployment = await runChartDeployment({ cluster, tools: t, home, namespace: NS, release: RELEASE, bin: 'path' in binary ? binary.path : undefined, webhookPorts: replicaPorts });
    assert.equal(deployment.replicas, REPLICAS);

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
    await deployment?.stop();
    if (cluster?.external && t) await leaveAsFound();
    await cluster?.stop();
    await service?.close();
    await backends?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('both replicas serve the one certificate of the shared Secret, and the API server calls each', async () => {
    await admitThroughEveryReplica();
    const { cert } = await certificateSecret();
    // (a cluster's Pods have no address here to read their certificate from)
    for (const [i, port] of replicaPorts.entries()) assert.ok(new X509Certificate(cert).raw.equals(await servedCertificate(port)), `replica ${i} serves the Secret's certificate`);
  });

  it('renews the shared certificate before its end, by one writer, and both replicas serve the renewed one', async () => {
    // a year on: the serving certificate has less than a third of its lifetime left
    const stored = await certificateSecret();
    const hosts = ['localhost', '127.0.0.1', ...serviceDnsNames({ name: 'k8or-webhook', namespace: NS })];
    const ending = issueServingCertificate({ certPem: stored.caBundle, keyPem: stored.caKey }, { hosts, validityDays: 0.001 });
    const from = cluster.sandbox?.requestLog.length ?? 0;
    const renewalsBefore = (await operatorLogs()).split('webhook certificate renewed in its shared Secret').length;
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
    if (cluster.sandbox) {
      const writes = cluster.sandbox.requestLog.slice(from).filter((r) => r.verb === 'update' && r.resource === 'secrets' && r.name === CERT_SECRET && r.status === 200);
      assert.equal(writes.length, 1, 'one writer renewed it');
    }
    assert.equal((await operatorLogs()).split('webhook certificate renewed in its shared Secret').length - renewalsBefore, 1, 'one replica says it renewed it');
    await admitThroughEveryReplica();
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

  it('holds a protection raised in the cloud, and repairs drift made behind its back', async () => {
    await runOk(t.kubectl, ['annotate', 'bucket', 'photos', '-n', 'default', 'k8or.io/resync-period=10s', '--overwrite']);
    const photos = await externalName('bucket', 'photos');
    const synced = async (): Promise<{ status?: string; reason?: string } | undefined> => {
      const bucket = JSON.parse(await runOk(t.kubectl, ['get', 'bucket', 'photos', '-n', 'default', '-o', 'json'])) as { status?: { conditions?: { type: string; status: string; reason?: string }[] } };
      return bucket.status?.conditions?.find((c) => c.type === 'Synced');
    };
    // someone turns versioning on in the cloud: a protection above the spec is reported and never lowered by a resync
    await s3.send(new PutBucketVersioningCommand({ Bucket: photos, VersioningConfiguration: { Status: 'Enabled' } }));
    await waitFor('the raised protection held and reported', async () => (await synced())?.reason === 'ProtectionHeld', 90_000);
    assert.equal(await bucketVersioning(photos), 'Enabled');
    // the user agrees (a new generation), then someone suspends it behind k8or's back: that drift is repaired
    await runOk(t.kubectl, ['patch', 'bucket', 'photos', '-n', 'default', '--type=merge', '-p', '{"spec":{"versioning":true}}']);
    await waitFor('Synced again', async () => (await synced())?.status === 'True', 60_000);
    await s3.send(new PutBucketVersioningCommand({ Bucket: photos, VersioningConfiguration: { Status: 'Suspended' } }));
    await waitFor('the drift repaired', async () => (await bucketVersioning(photos)) === 'Enabled', 90_000);
    // again, and the outputs ConfigMap edited by hand too: both come back, the repeated event is counted
    const outputs = async (): Promise<Record<string, string>> =>
      (JSON.parse(await runOk(t.kubectl, ['get', 'configmap', 'photos-bucket', '-n', 'default', '-o', 'json'])) as { data: Record<string, string> }).data;
    const published = await outputs();
    assert.equal(published['externalName'], photos);
    await runOk(t.kubectl, ['patch', 'configmap', 'photos-bucket', '-n', 'default', '--type=merge', '-p', '{"data":{"externalName":"edited-by-hand"}}']);
    await s3.send(new PutBucketVersioningCommand({ Bucket: photos, VersioningConfiguration: { Status: 'Suspended' } }));
    await waitFor('the drift repaired again', async () => (await bucketVersioning(photos)) === 'Enabled' && (await outputs())['externalName'] === photos, 90_000);
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
      assert.equal(gone.code, 0, `${kind} stayed: ${(await run(t.kubectl, ['get', kind, '-n', 'default', '-o', 'json'])).stdout}\noperator:\n${(await operatorLogs()).slice(-12_000)}\ndenied: ${cluster.sandbox?.accessOf(NS, RELEASE).denied.join('\n') ?? '(an external cluster: not known here)'}`);
    }
    await assert.rejects(s3.send(new HeadBucketCommand({ Bucket: photos })), (error: { name?: string }) => error.name === 'NotFound');
    assert.equal((await dynamodb.send(new DescribeTableCommand({ TableName: orders }))).Table?.TableName, orders);
  });

  /**
   * Grants the operator needs on paths this run may not take: it reads its objects from the informer
   * cache, and GETs one live only after a 409 or while its own last write is not in the cache yet.
   */
  const RARELY_USED_GRANTS = [': get k8or.io/buckets', ': get k8or.io/tables'];

  it("used every grant of the chart's RBAC, and was refused nothing", (test) => {
    // the embedded API server counts what each grant allowed; a cluster's audit log would, but is not ours to read
    if (!cluster.sandbox) return test.skip('needs the embedded API server\'s RBAC accounting (an external cluster)');
    const access = cluster.sandbox.accessOf(NS, RELEASE);
    const chartBindings = new Set([`ClusterRoleBinding ${RELEASE}`, `RoleBinding ${NS}/${RELEASE}`]);
    const unused = access.grants
      .filter((g) => chartBindings.has(g.grant.binding) && g.uses === 0)
      .map((g) => g.key)
      .filter((key) => !RARELY_USED_GRANTS.some((suffix) => key.endsWith(suffix)));
    assert.deepEqual(access.denied, [], `calls the chart does not grant:\n${access.denied.join('\n')}`);
    assert.deepEqual(unused, [], `grants of the chart no call used:\n${unused.join('\n')}`);
  });

  it('helm uninstall touches no cloud resource', async () => {
    const before = {
      buckets: (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name).sort(),
      tables: (await dynamodb.send(new ListTablesCommand({}))).TableNames?.sort(),
    };
    // the Deployment's Pods go with the release
    await deployment?.stop();
    await runOk(t.helm, ['uninstall', RELEASE, '--namespace', NS]);
    assert.equal((await run(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS])).code, 1);
    const afterUninstall = {
      buckets: (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name).sort(),
      tables: (await dynamodb.send(new ListTablesCommand({}))).TableNames?.sort(),
    };
    assert.deepEqual(afterUninstall, before);
  });
});
