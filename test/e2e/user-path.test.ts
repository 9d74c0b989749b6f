import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GetBucketVersioningCommand, HeadBucketCommand, PutBucketVersioningCommand, type S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Storage } from '@google-cloud/storage';
import { waitFor } from '@k8or/core/testing';
import { issueServingCertificate, serviceDnsNames } from '@k8or/webhook';
import { awsClients, gcsClient } from '../support/cloud-clients.ts';
import { EXTERNAL_KUBECONFIG } from '../support/cluster.ts';
import { providerConfigNamed, settingsManifests, type ProviderSettings } from '../support/provider-settings.ts';
import { run, runOk } from '../support/run.ts';
import { openTarget, RELEASE, RELEASE_NAMESPACE, targetProblem, type E2ETarget, type InstalledChart } from '../support/target.ts';
import { EXAMPLES_DIR, type Tools } from '../support/tools.ts';

// A platform team's and a user's whole path, with real helm and kubectl, against the suite's target
// (support/target.ts): the embedded API server and the local clouds started here, or another cluster
// with its provider settings. helm-install the chart; its Deployment's two replicas run (here: as
// processes outside the API server with a token of the chart's ServiceAccount, so the API server
// authorizes every call they make with the chart's own RBAC; on a cluster with kubelets: its Pods).
// The team applies its ProviderConfigs; the user applies every example of examples/sandbox, sees each
// Ready and in its cloud (read with the real SDKs and those settings), edits one, watches drift
// repaired, meets the webhook's denial, deletes (Delete and Retain), and the team uninstalls without
// touching a cloud resource. The chart's grants must all be used, and no call refused.

const NS = RELEASE_NAMESPACE;
const SKIP = targetProblem() ?? false;
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

interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: { providerConfigRef?: { name?: string } } }
type Resource = Manifest & { spec: Record<string, unknown>; status?: { conditions?: Array<{ type: string; status: string; message?: string }> } };

async function exampleFiles(): Promise<string[]> {
  const dir = join(EXAMPLES_DIR, 'sandbox');
  const top = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f));
  const gcp = (await readdir(join(dir, 'gcp'))).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, 'gcp', f));
  return [...top, ...gcp].sort();
}

/**
 * The examples this target can make real, and why each other one is left out: its ProviderConfig
 * is not in the settings, or it is a GCP Table and the ProviderConfig names no Bigtable instance.
 */
async function examplesFor(settings: ProviderSettings): Promise<{ applied: Manifest[]; leftOut: string[] }> {
  const applied: Manifest[] = [];
  const leftOut: string[] = [];
  for (const file of await exampleFiles()) {
    for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) {
      const manifest = doc.toJSON() as Manifest | null;
      if (!manifest) continue;
      const configName = manifest.spec?.providerConfigRef?.name ?? 'default';
      const config = providerConfigNamed(settings, configName);
      const what = `${manifest.kind} ${manifest.metadata.name}`;
      if (!config) leftOut.push(`${what}: the provider settings hold no ProviderConfig ${configName}`);
      else if (manifest.kind === 'Table' && config.spec.provider === 'gcp' && !config.spec.bigtableInstance) leftOut.push(`${what}: ProviderConfig ${configName} names no bigtableInstance (no Bigtable emulator here)`);
      else applied.push(manifest);
    }
  }
  return { applied, leftOut };
}

describe('the user path: helm install, kubectl apply, edit, drift, denial, delete, helm uninstall', { skip: SKIP, timeout: EXTERNAL_KUBECONFIG ? 900_000 : 300_000 }, () => {
  let home: string;
  let target: E2ETarget;
  let t: Tools;
  let chart: InstalledChart | undefined;
  /** `process` mode: each replica's webhook port here (the cluster's Pods have no address here). */
  let replicaPorts: readonly number[] = [];
  let s3: S3Client;
  let dynamodb: DynamoDBClient;
  /** Cloud Storage, when the settings hold the ProviderConfig of the GCP examples. */
  let gcs: Storage | undefined;
  let examples: Manifest[] = [];
  let leftOut: string[] = [];
  /** Each example's cloud resource once it was Ready: `kind/ProviderConfig` by cloud name. */
  const cloudResources = new Map<string, string>();

  const get = async (kind: string, name: string): Promise<Resource> => JSON.parse(await runOk(t.kubectl, ['get', kind, name, '-n', 'default', '-o', 'json'])) as Resource;
  const externalName = async (kind: string, name: string): Promise<string> => String((await get(kind, name)).spec['name']);
  /** The Secret the replicas share their certificate through (the tests that read it skip without it). */
  const certificateSecretName = (): string => chart?.certificateSecret ?? assert.fail('no shared certificate Secret: the release uses cert-manager');
  const certificateSecret = async (): Promise<{ cert: string; caBundle: string; caKey: string }> => {
    const data = (JSON.parse(await runOk(t.kubectl, ['get', 'secret', certificateSecretName(), '-n', NS, '-o', 'json'])) as { data: Record<string, string> }).data;
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
    const processes = chart!.processes;
    if (!processes) {
      for (let call = 0; call < 3 * chart!.webhookReplicas; call++) await admit(`the webhook Service (call ${call})`);
      return;
    }
    for (const i of processes.webhookPorts.keys()) {
      processes.routeServiceTo(i);
      try {
        await admit(`replica ${i}`);
      } finally {
        processes.routeServiceTo(undefined);
      }
    }
  };
  /**
   * Another cluster is left as the suite found it: the release, the examples (their finalizers
   * released once no operator is left to do it), the ProviderConfigs and Secrets it applied.
   */
  const leaveAsFound = async (): Promise<void> => {
    await target.uninstall().catch(() => undefined);
    for (const example of examples) {
      const ref = [`${example.kind.toLowerCase()}/${example.metadata.name}`, '-n', example.metadata.namespace ?? 'default'];
      await run(t.kubectl, ['patch', ...ref, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
      await run(t.kubectl, ['delete', ...ref, '--ignore-not-found', '--wait=false']);
    }
    await run(t.kubectl, ['delete', '-f', '-', '--ignore-not-found'], settingsManifests(target.settings));
  };
  const operatorLogs = async (): Promise<string> => (await chart?.logs().catch((error: unknown) => String(error))) ?? '';
  const bucketVersioning = async (bucket: string): Promise<string | undefined> => (await s3.send(new GetBucketVersioningCommand({ Bucket: bucket }))).Status;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-e2e-'));
    target = await openTarget(home, { recordRequests: true });
    t = target.tools;
    const aws = providerConfigNamed(target.settings, 'default');
    assert.equal(aws?.spec.provider, 'aws', 'the provider settings need the ProviderConfig default for aws: the examples photos (Bucket) and orders (Table) use it');
    ({ s3, dynamodb } = awsClients(target.settings, aws!));
    const gcp = providerConfigNamed(target.settings, 'local-gcp');
    gcs = gcp ? gcsClient(target.settings, gcp) : undefined;
    ({ applied: examples, leftOut } = await examplesFor(target.settings));

    // the platform team: helm install with the providers its settings use
    // (the replicas re-read their shared certificate every second, for the renewal below)
    chart = await target.install({ 'webhook.selfSigned.checkInterval': '1s' });
    replicaPorts = chart.processes?.webhookPorts ?? [];
    // then its ProviderConfigs and their Secrets (the webhook validates them)
    await runOk(t.kubectl, ['apply', '-f', '-'], settingsManifests(target.settings));
  });

  after(async () => {
    if (target?.cluster.external) await leaveAsFound();
    await target?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('both replicas serve the one certificate of the shared Secret, and the API server calls each', async (test) => {
    if (!chart?.certificateSecret) return test.skip('the release serves cert-manager\'s certificate (webhook.certManager.enabled)');
    await admitThroughEveryReplica();
    const { cert } = await certificateSecret();
    // (a cluster's Pods have no address here to read their certificate from)
    for (const [i, port] of replicaPorts.entries()) assert.ok(new X509Certificate(cert).raw.equals(await servedCertificate(port)), `replica ${i} serves the Secret's certificate`);
  });

  it('renews the shared certificate before its end, by one writer, and both replicas serve the renewed one', async (test) => {
    if (!chart?.certificateSecret) return test.skip('the release serves cert-manager\'s certificate (webhook.certManager.enabled)');
    // a year on: the serving certificate has less than a third of its lifetime left
    const stored = await certificateSecret();
    const hosts = ['localhost', '127.0.0.1', ...serviceDnsNames({ name: 'k8or-webhook', namespace: NS })];
    const ending = issueServingCertificate({ certPem: stored.caBundle, keyPem: stored.caKey }, { hosts, validityDays: 0.001 });
    const from = target.cluster.sandbox?.requestLog.length ?? 0;
    const renewalsBefore = (await operatorLogs()).split('webhook certificate renewed in its shared Secret').length;
    await runOk(t.kubectl, ['patch', 'secret', certificateSecretName(), '-n', NS, '--type=merge', '-p', JSON.stringify({ data: { 'tls.crt': b64(ending.certPem), 'tls.key': b64(ending.keyPem) } })]);
    const renewed = await waitFor('the certificate renewed and served by every replica', async () => {
      const now = await certificateSecret();
      if (now.cert === ending.certPem) return undefined;
      const raw = new X509Certificate(now.cert).raw;
      for (const port of replicaPorts) if (!raw.equals(await servedCertificate(port))) return undefined;
      return now;
    }, 60_000, 250);
    assert.ok(new Date(new X509Certificate(renewed.cert).validTo).getTime() > Date.now() + 300 * 86_400_000, 'a year ahead');
    assert.equal(renewed.caBundle, stored.caBundle, 'the CA stays: the caBundle the API server trusts is unchanged');
    if (target.cluster.sandbox) {
      const writes = target.cluster.sandbox.requestLog.slice(from).filter((r) => r.verb === 'update' && r.resource === 'secrets' && r.name === certificateSecretName() && r.status === 200);
      assert.equal(writes.length, 1, 'one writer renewed it');
    }
    assert.equal((await operatorLogs()).split('webhook certificate renewed in its shared Secret').length - renewalsBefore, 1, 'one replica says it renewed it');
    await admitThroughEveryReplica();
  });

  it('applies every example of examples/sandbox and each becomes Ready, in its cloud', async (test) => {
    for (const reason of leftOut) test.diagnostic(`left out: ${reason}`);
    await runOk(t.kubectl, ['apply', '-f', '-'], examples.map((m) => JSON.stringify(m)).join('\n'));
    for (const example of examples) {
      await runOk(t.kubectl, ['wait', '--for=condition=Ready', `${example.kind.toLowerCase()}/${example.metadata.name}`, '-n', example.metadata.namespace ?? 'default', '--timeout=90s'], undefined, 120_000);
      cloudResources.set(await externalName(example.kind.toLowerCase(), example.metadata.name), `${example.kind}/${example.spec?.providerConfigRef?.name ?? 'default'}`);
    }
    const photos = await externalName('bucket', 'photos');
    await s3.send(new HeadBucketCommand({ Bucket: photos }));
    assert.equal(await bucketVersioning(photos), 'Enabled');
    const orders = await externalName('table', 'orders');
    const table = await dynamodb.send(new DescribeTableCommand({ TableName: orders }));
    assert.deepEqual(table.Table?.KeySchema?.map((k) => k.AttributeName), ['customerId', 'orderedAt']);
    const gcpBucket = examples.find((e) => e.kind === 'Bucket' && e.spec?.providerConfigRef?.name === 'local-gcp');
    if (gcpBucket) {
      const name = await externalName('bucket', gcpBucket.metadata.name);
      const [metadata] = await gcs!.bucket(name).getMetadata();
      assert.equal(metadata.versioning?.enabled, true, `GCS bucket ${name} versioned, as its spec says`);
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
      assert.equal(gone.code, 0, `${kind} stayed: ${(await run(t.kubectl, ['get', kind, '-n', 'default', '-o', 'json'])).stdout}\noperator:\n${(await operatorLogs()).slice(-12_000)}\ndenied: ${target.cluster.sandbox?.accessOf(NS, RELEASE).denied.join('\n') ?? '(an external cluster: not known here)'}`);
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
    if (!target.cluster.sandbox) return test.skip('needs the embedded API server\'s RBAC accounting (an external cluster)');
    const access = target.cluster.sandbox.accessOf(NS, RELEASE);
    const chartBindings = new Set([`ClusterRoleBinding ${RELEASE}`, `RoleBinding ${NS}/${RELEASE}`]);
    const unused = access.grants
      .filter((g) => chartBindings.has(g.grant.binding) && g.uses === 0)
      .map((g) => g.key)
      .filter((key) => !RARELY_USED_GRANTS.some((suffix) => key.endsWith(suffix)));
    assert.deepEqual(access.denied, [], `calls the chart does not grant:\n${access.denied.join('\n')}`);
    assert.deepEqual(unused, [], `grants of the chart no call used:\n${unused.join('\n')}`);
  });

  it('helm uninstall touches no cloud resource', async (test) => {
    // every resource the examples made (photos went with its Delete above; orders was retained);
    // only a definite not-found counts as gone
    const exists = async (name: string, where: string): Promise<boolean> => {
      if (where === 'Bucket/default') return await s3.send(new HeadBucketCommand({ Bucket: name })).then(() => true, (error: { name?: string }) => (error.name === 'NotFound' ? false : Promise.reject(error)));
      if (where === 'Table/default') return await dynamodb.send(new DescribeTableCommand({ TableName: name })).then(() => true, (error: { name?: string }) => (error.name === 'ResourceNotFoundException' ? false : Promise.reject(error)));
      if (where === 'Bucket/local-gcp') return (await gcs!.bucket(name).exists())[0];
      return true; // a Bigtable table: its Ready condition was the check
    };
    const inventory = async (): Promise<Record<string, boolean>> =>
      Object.fromEntries(await Promise.all([...cloudResources].map(async ([name, where]) => [`${where} ${name}`, await exists(name, where)] as const)));
    const before = await inventory();
    // the Deployment's Pods go with the release
    await target.uninstall();
    assert.equal((await run(t.kubectl, ['get', 'deployment', RELEASE, '-n', NS])).code, 1);
    const after = await inventory();
    assert.deepEqual(after, before);
    // another cluster's clouds keep them: the retained Table, and what was there at uninstall
    if (target.cluster.external) test.diagnostic(`left in the cloud: ${Object.keys(after).filter((key) => after[key]).join(', ') || 'nothing'}`);
  });
});
