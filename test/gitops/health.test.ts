// GitOps health, read off objects in every state the operator leaves them in: the embedded API
// server with k8or's CRDs, the operator's engine with the real AWS provider over the local S3
// backend (as `k8or sandbox` runs them), a user's client driving each object into its state. Each
// object, as the API server returns it, goes through k8or's Argo CD health check in a real Lua VM
// (wasmoon) and through kstatus's rules (what Flux's wait and healthChecks read).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GetBucketTaggingCommand, CreateBucketCommand, PutBucketTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { API_VERSION, Annotations, type Bucket, type ProviderConfig, type Table } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { Engine, KubeRest, corePath, installCrds, k8orPath } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startDynamoDbLocal, startDynamoDbProxy, startS3Fake, type DynamoDbLocal, type DynamoDbProxy, type S3Fake } from '@k8or/local-clouds';
import { awsProvider } from '@k8or/provider-aws';
import { KubeConfig } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import { healthScript, lua51Problems, runHealthCheck, SCRIPT_FOR_KIND, HEALTH_DIR, type Health } from './argocd-health.ts';
import { kstatusOf, type KstatusStatus } from './kstatus.ts';

const credentials = { accessKeyId: 'AKIAHEALTHTESTEXAMPL', secretAccessKey: 'health-test-secret-access-key' };
const NS = 'media';
const managed = healthScript('Bucket');
const providerConfigScript = healthScript('ProviderConfig');

describe('the Argo CD health check is Lua 5.1, and the docs paste exactly it', () => {
  it('no construct of Lua 5.2+ in the script (gopher-lua speaks 5.1)', () => {
    for (const file of new Set(Object.values(SCRIPT_FOR_KIND))) {
      assert.deepEqual(lua51Problems(readFileSync(`${HEALTH_DIR}${file}`, 'utf8')), [], file);
    }
  });

  it('the 5.1 check finds what 5.4 alone would accept, and not what sits in comments or strings', () => {
    const found = lua51Problems(['local a = 7 // 2', 'goto done', '::done::', 'local b = 1 << 2', 'local n = utf8.len("é")', 'local c = 3 & 1', 'local d <const> = 1'].join('\n'));
    assert.equal(found.length, 7, found.join('; '));
    assert.deepEqual(lua51Problems('-- a // b and goto\nlocal s = "x // y | z" -- utf8.len\nlocal ok = a ~= b'), []);
  });

  it('docs/install.md holds, for each kind, the script the tests run', () => {
    const page = readFileSync(fileURLToPath(new URL('../../docs/install.md', import.meta.url)), 'utf8');
    const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const configMap = blocks.map((b) => parseDocument(b).toJS() as { kind?: string; metadata?: { name?: string }; data?: Record<string, string> }).find((d) => d?.kind === 'ConfigMap' && d.metadata?.name === 'argocd-cm');
    assert.ok(configMap?.data, 'an argocd-cm ConfigMap in docs/install.md');
    for (const [kind, file] of Object.entries(SCRIPT_FOR_KIND)) {
      assert.equal(configMap.data[`resource.customizations.health.k8or.io_${kind}`], readFileSync(`${HEALTH_DIR}${file}`, 'utf8'), kind);
    }
  });
});

describe('health of objects captured from the sandbox: Argo CD (Lua) and kstatus (Flux)', () => {
  let sandbox: Sandbox;
  let user: KubeRest;
  let s3Fake: S3Fake;
  let s3: S3Client;
  let engine: Engine | undefined;
  const engines: Engine[] = [];
  let dynamoDbLocal: DynamoDbLocal | undefined;
  let dynamoDbProxy: DynamoDbProxy | undefined;

  const startEngine = async (): Promise<void> => {
    engine = new Engine({
      kubeConfig: kubeConfigOf(sandbox),
      providers: new Map([[awsProvider.provider, awsProvider]]),
      clusterId: 'health-test-cluster',
      secretsNamespace: 'k8or-system',
      operatorNamespace: 'k8or-system',
      pollIntervalMs: 500,
      resyncPeriodMs: 3_600_000,
    });
    engines.push(engine);
    await engine.start();
  };
  const stopEngine = async (): Promise<void> => {
    await engine?.stop();
    engine = undefined;
  };
  const bucket = async (name: string): Promise<Bucket | undefined> => await user.get<Bucket>(k8orPath('Bucket', NS, name));
  const waitForBucket = async (name: string, what: string, check: (b: Bucket) => boolean): Promise<Bucket> =>
    await waitFor(`bucket ${name}: ${what}`, async () => ((b) => (b && check(b) ? b : undefined))(await bucket(name)), 120_000);
  const condition = (b: Bucket, type: string) => b.status?.conditions?.find((c) => c.type === type);
  const settled = (b: Bucket) => condition(b, 'Ready')?.status === 'True' && condition(b, 'Synced')?.status === 'True' && b.status?.observedGeneration === b.metadata.generation;
  const createBucket = async (name: string, spec: Bucket['spec'] = {}, annotations: Record<string, string> = {}): Promise<void> => {
    await user.create(k8orPath('Bucket', NS), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: NS, annotations }, spec: { deletionPolicy: 'Delete', ...spec } });
  };
  const check = async (object: unknown, script: string, expected: { argo: string; message?: RegExp; kstatus: KstatusStatus }): Promise<Health> => {
    const health = await runHealthCheck(script, object);
    assert.equal(health.status, expected.argo, `Argo CD health: ${health.status} (${health.message})`);
    if (expected.message) assert.match(health.message, expected.message);
    assert.equal(kstatusOf(object as Parameters<typeof kstatusOf>[0]).status, expected.kstatus, 'kstatus');
    return health;
  };

  before(async () => {
    sandbox = await startSandbox({ port: 0, logLevel: 'warn' });
    await installCrds(kubeConfigOf(sandbox));
    user = new KubeRest(kubeConfigOf(sandbox), { userAgent: 'k8or-health-test' });
    await waitFor('CRDs served', async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined, 60_000);
    s3Fake = await startS3Fake();
    s3 = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    for (const name of ['k8or-system', NS]) await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await user.create(corePath('secrets', 'k8or-system'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials' }, stringData: credentials });
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig('default', { bucket: s3Fake.endpoint }));
    // Nothing listens there: every call fails with a network error, which the engine retries.
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig('unreachable', { bucket: 'http://127.0.0.1:9' }));
  });

  const providerConfig = (name: string, endpoints: { bucket?: string; table?: string }): ProviderConfig => ({
    apiVersion: API_VERSION,
    kind: 'ProviderConfig',
    metadata: { name },
    spec: { provider: 'aws', region: 'us-east-1', endpoints, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-credentials' } } },
  });

  after(async () => {
    await Promise.all(engines.map((e) => e.stop()));
    await dynamoDbProxy?.stop();
    await dynamoDbLocal?.stop();
    user?.close();
    s3?.destroy();
    await s3Fake?.stop();
    await sandbox?.stop();
  });

  it('each state reads as it should, in Argo CD and in kstatus', async () => {
    // Progressing while creating: applied, the operator has not written status yet.
    await createBucket('photos', { name: 'health-photos', labels: { team: 'media' } });
    const unreconciled = await bucket('photos');
    await check(unreconciled, managed, { argo: 'Progressing', message: /Waiting for the k8or operator/, kstatus: 'Current' });

    await startEngine();
    const healthy = await waitForBucket('photos', 'Ready and Synced', settled);
    await check(healthy, managed, { argo: 'Healthy', message: /^Available/, kstatus: 'Current' });

    // Progressing while creating: the cloud cannot be reached yet, the engine keeps trying.
    await createBucket('far', { providerConfigRef: { name: 'unreachable' } });
    const retrying = await waitForBucket('far', 'Reconciling', (b) => condition(b, 'Reconciling')?.status === 'True');
    assert.equal(condition(retrying, 'Ready')?.status, 'False');
    await check(retrying, managed, { argo: 'Progressing', message: /^CannotObserveExternalResource/, kstatus: 'InProgress' });

    // Progressing while creating: its ProviderConfig is not there yet (GitOps applies in any order).
    await createBucket('early', { providerConfigRef: { name: 'not-yet' } });
    const waiting = await waitForBucket('early', 'Reconciling', (b) => condition(b, 'Reconciling')?.reason === 'ProviderConfigNotFound');
    await check(waiting, managed, { argo: 'Progressing', message: /ProviderConfig "not-yet" not found/, kstatus: 'InProgress' });

    // Degraded: a bucket under the name exists and is someone else's.
    await s3.send(new CreateBucketCommand({ Bucket: 'health-foreign' }));
    await createBucket('taken', { name: 'health-foreign' });
    const notOwned = await waitForBucket('taken', 'Stalled', (b) => condition(b, 'Stalled')?.status === 'True');
    await check(notOwned, managed, { argo: 'Degraded', message: /^NotOwned: .*k8or\.io\/adopt/, kstatus: 'Failed' });

    // Suspended: held drift awaiting `k8or approve`.
    await createBucket('held', { name: 'health-held', labels: { team: 'media' }, driftPolicy: { default: 'Hold' } });
    await waitForBucket('held', 'Ready and Synced', settled);
    const tags = ((await s3.send(new GetBucketTaggingCommand({ Bucket: 'health-held' }))).TagSet ?? []).map((t) => (t.Key === 'team' ? { ...t, Value: 'ops' } : t));
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'health-held', Tagging: { TagSet: tags } }));
    await user.patch(k8orPath('Bucket', NS, 'held'), { metadata: { annotations: { [Annotations.reconcileRequestedAt]: new Date().toISOString() } } });
    const heldDrift = await waitForBucket('held', 'DriftHeld', (b) => condition(b, 'Synced')?.reason === 'DriftHeld');
    await check(heldDrift, managed, { argo: 'Suspended', message: /k8or approve bucket\/held/, kstatus: 'Current' });

    // Suspended: paused.
    await createBucket('quiet', { name: 'health-quiet' });
    await waitForBucket('quiet', 'Ready and Synced', settled);
    await user.patch(k8orPath('Bucket', NS, 'quiet'), { metadata: { annotations: { [Annotations.paused]: 'true' } } });
    const paused = await waitForBucket('quiet', 'Paused', (b) => condition(b, 'Synced')?.reason === 'Paused');
    await check(paused, managed, { argo: 'Suspended', message: /k8or\.io\/paused/, kstatus: 'Current' });

    // With the operator away: a new generation not yet applied, and a delete not yet done.
    await stopEngine();
    await user.patch(k8orPath('Bucket', NS, 'photos'), { spec: { labels: { team: 'media', tier: 'gold' } } });
    const newGeneration = await bucket('photos');
    assert.ok(newGeneration && newGeneration.metadata.generation !== newGeneration.status?.observedGeneration);
    await check(newGeneration, managed, { argo: 'Progressing', message: /Applying generation 2/, kstatus: 'InProgress' });
    await user.delete(k8orPath('Bucket', NS, 'held'));
    const deleting = await bucket('held');
    assert.ok(deleting?.metadata.deletionTimestamp && deleting.metadata.finalizers?.length, 'held by its finalizer');
    await check(deleting, managed, { argo: 'Progressing', message: /^Deleting/, kstatus: 'Terminating' });

    await startEngine();
    const applied = await waitForBucket('photos', 'generation 2 applied', settled);
    await check(applied, managed, { argo: 'Healthy', kstatus: 'Current' });
    await waitFor('bucket held deleted', async () => (await bucket('held')) === undefined, 120_000);

    // The ProviderConfig: settings, healthy as the webhook admitted them.
    const defaultConfig = await user.get<ProviderConfig>(k8orPath('ProviderConfig', undefined, 'default'));
    await check(defaultConfig, providerConfigScript, { argo: 'Healthy', message: /ProviderConfig for aws/, kstatus: 'Current' });
  });
  it('a Table reads the same: Healthy once created, Degraded under a name someone else holds (DynamoDB Local)', async (t) => {
    // As `k8or sandbox` runs it: DynamoDB Local behind the proxy that adds tagging and SigV4 checks.
    dynamoDbLocal = await startDynamoDbLocal().catch(() => undefined);
    if (!dynamoDbLocal) {
      t.skip('DynamoDB Local did not start (Java 17 is needed)');
      return;
    }
    dynamoDbProxy = await startDynamoDbProxy({ target: dynamoDbLocal.endpoint, credentials: { [credentials.accessKeyId]: credentials.secretAccessKey } });
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig('dynamodb', { table: dynamoDbProxy.endpoint }));
    if (!engine) await startEngine();
    const tableObject = async (name: string) => await user.get<Table>(k8orPath('Table', NS, name));
    const createTable = async (name: string, externalName: string) =>
      await user.create(k8orPath('Table', NS), {
        apiVersion: API_VERSION,
        kind: 'Table',
        metadata: { name, namespace: NS },
        spec: { name: externalName, providerConfigRef: { name: 'dynamodb' }, partitionKey: { name: 'id', type: 'string' }, deletionPolicy: 'Delete' },
      });
    const conditionOf = (object: Table, type: string) => object.status?.conditions?.find((c) => c.type === type);

    await createTable('orders', 'health-orders');
    const ready = await waitFor('table orders Ready and Synced', async () => {
      const found = await tableObject('orders');
      return found && conditionOf(found, 'Ready')?.status === 'True' && conditionOf(found, 'Synced')?.status === 'True' && found.status?.observedGeneration === found.metadata.generation ? found : undefined;
    }, 180_000);
    await check(ready, healthScript('Table'), { argo: 'Healthy', kstatus: 'Current' });

    const dynamodb = new DynamoDBClient({ endpoint: dynamoDbProxy.endpoint, region: 'us-east-1', credentials });
    try {
      await dynamodb.send(new CreateTableCommand({ TableName: 'health-theirs', AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], BillingMode: 'PAY_PER_REQUEST' }));
    } finally {
      dynamodb.destroy();
    }
    await createTable('theirs', 'health-theirs');
    const stalled = await waitFor('table theirs Stalled', async () => ((found) => (found && conditionOf(found, 'Stalled')?.status === 'True' ? found : undefined))(await tableObject('theirs')), 180_000);
    await check(stalled, healthScript('Table'), { argo: 'Degraded', message: /^NotOwned/, kstatus: 'Failed' });
  });
});

function kubeConfigOf(sandbox: Sandbox): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sandbox.kubeconfig);
  return kubeConfig;
}
