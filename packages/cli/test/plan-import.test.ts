import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, GetBucketVersioningCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { API_VERSION } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { Engine, installCrds } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startDynamoDbLocal, startS3Fake, type DynamoDbLocal, type S3Fake } from '@k8or/local-clouds';
import { awsProvider } from '@k8or/provider-aws';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { k8or } from './support.ts';

const run = promisify(execFile);
const credentials = { accessKeyId: 'AKIAPLANTESTEXAMPLE0', secretAccessKey: 'plan-test-secret-access-key' };
const CLUSTER_ID = 'plan-test-cluster';

interface Condition {
  type: string;
  status: string;
}
interface Stored {
  spec: { name?: string; managementPolicy?: string };
  status?: { conditions?: Condition[] };
}

/** A running engine with the AWS provider, as the operator runs it. */
function engineFor(kubeConfig: KubeConfig): Engine {
  return new Engine({ kubeConfig, providers: new Map([[awsProvider.provider, awsProvider]]), clusterId: CLUSTER_ID, secretsNamespace: 'k8or-system', resyncPeriodMs: 3_600_000 });
}

const bucket = (name: string, spec: Record<string, unknown>, providerConfig = 'local-aws'): string => `---
apiVersion: ${API_VERSION}
kind: Bucket
metadata:
  name: ${name}
  namespace: default
spec:
  providerConfigRef: { name: ${providerConfig} }
${Object.entries(spec)
  .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
  .join('\n')}
`;

describe('k8or plan and k8or import against a cluster and the cloud, writing nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-plan-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let s3Fake: S3Fake;
  let dynamoDbLocal: DynamoDbLocal | undefined;
  let s3: S3Client;
  let dynamodb: DynamoDBClient | undefined;
  const custom = () => kubeConfig.makeApiClient(CustomObjectsApi);
  const getObject = async (plural: string, name: string, namespace = 'default') =>
    (await custom().getNamespacedCustomObject({ group: 'k8or.io', version: 'v1alpha1', namespace, plural, name })) as Stored;
  const readyCondition = (o: Stored) => o.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const env = { ...process.env, KUBECONFIG: kubeconfigPath, K8OR_CLUSTER_ID: CLUSTER_ID };

  before(async () => {
    sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn', recordRequests: true });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    s3Fake = await startS3Fake();
    dynamoDbLocal = await startDynamoDbLocal().catch(() => undefined);
    s3 = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    if (dynamoDbLocal) dynamodb = new DynamoDBClient({ endpoint: dynamoDbLocal.endpoint, region: 'us-east-1', credentials });
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'k8or-system' } } });
    await core.createNamespacedSecret({ namespace: 'k8or-system', body: { metadata: { name: 'aws-credentials' }, stringData: credentials } });
    const endpoints = { bucket: s3Fake.endpoint, ...(dynamoDbLocal ? { table: dynamoDbLocal.endpoint } : {}) };
    for (const [name, secret] of [['local-aws', 'aws-credentials'], ['no-creds', 'missing-secret']] as const) {
      await custom().createClusterCustomObject({
        group: 'k8or.io',
        version: 'v1alpha1',
        plural: 'providerconfigs',
        body: { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name }, spec: { provider: 'aws', region: 'us-east-1', endpoints, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: secret } } } },
      });
    }
  });

  after(async () => {
    s3.destroy();
    dynamodb?.destroy();
    await dynamoDbLocal?.stop();
    await s3Fake.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('k8or plan: create for a new resource, the field for a drifted one, blocked for a foreign one or missing credentials; no cloud write, no API write', async () => {
    // A Bucket k8or made, then changed behind its back; and a bucket someone else made.
    const engine = engineFor(kubeConfig);
    await engine.start();
    await custom().createNamespacedCustomObject({
      group: 'k8or.io',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'buckets',
      body: { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: 'tracked' }, spec: { providerConfigRef: { name: 'local-aws' }, versioning: true } },
    });
    const tracked = await waitFor('Bucket tracked is Ready', async () => ((o) => (readyCondition(o) ? o : undefined))(await getObject('buckets', 'tracked')), 90_000);
    await engine.stop();
    const trackedName = tracked.spec.name ?? '';
    await s3.send(new PutBucketVersioningCommand({ Bucket: trackedName, VersioningConfiguration: { Status: 'Suspended' } }));
    await s3.send(new CreateBucketCommand({ Bucket: 'someone-elses-logs' }));
    await s3.send(new CreateBucketCommand({ Bucket: 'someone-elses-archive' }));

    const manifest = join(dir, 'plan.yaml');
    writeFileSync(
      manifest,
      bucket('tracked', { versioning: true }) +
        bucket('fresh', { versioning: true }) +
        bucket('foreign', { name: 'someone-elses-logs' }) +
        bucket('no-secret', {}, 'no-creds') +
        // Another bucket than foreign's: one object per cloud resource, so a second object on it is blocked.
        bucket('watched', { name: 'someone-elses-archive', managementPolicy: 'ObserveOnly' }),
    );
    sandbox.clearRequestLog();
    const s3Before = s3Fake.requests.length;

    const result = await k8or(['plan', '-f', manifest], { env });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, new RegExp(`Bucket default/tracked: update "${trackedName}" \\(ProviderConfig local-aws\\)\\n  spec\\.versioning: false -> true`));
    assert.match(result.stdout, /Bucket default\/fresh: create "[a-z0-9-]+" \(ProviderConfig local-aws\)/);
    assert.match(result.stdout, /Bucket default\/foreign: blocked \(not owned\) "someone-elses-logs" .*nothing proves it is this object's.*k8or\.io\/adopt/);
    assert.match(result.stdout, /Bucket default\/no-secret: blocked \(missing credentials\) .*Secret k8or-system\/missing-secret not found/);
    assert.match(result.stdout, /Bucket default\/watched: no change "someone-elses-archive" .*\[ObserveOnly/);
    assert.match(result.stdout, /5 resources: 1 to create, 1 to update, 1 unchanged, 2 blocked\. Nothing was written\./);

    const apiWrites = sandbox.requestLog.filter((r) => r.verb !== 'get' && r.verb !== 'list' && r.verb !== 'watch');
    assert.deepEqual(apiWrites, [], 'no API write');
    assert.ok(sandbox.requestLog.length > 0, 'it did read the cluster');
    const cloudCalls = s3Fake.requests.slice(s3Before);
    assert.ok(cloudCalls.length > 0, 'it did observe the cloud');
    assert.deepEqual(cloudCalls.filter((r) => r.method !== 'GET' && r.method !== 'HEAD'), [], 'no cloud write');
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket: trackedName }))).Status, 'Suspended', 'the drift is still there');

    const json = await k8or(['plan', '-f', manifest, '-o', 'json'], { env });
    const report = JSON.parse(json.stdout) as { resources: { name: string; plan: { action: string; reason?: string; changes?: { field: string; from: unknown; to: unknown }[] } }[] };
    assert.deepEqual(report.resources.find((r) => r.name === 'tracked')?.plan.changes, [{ field: 'spec.versioning', from: false, to: true }]);
    assert.equal(report.resources.find((r) => r.name === 'foreign')?.plan.reason, 'not owned');
  });

  it('k8or plan --provider-config FILE works without a cluster, taking the credentials Secret from the files', async () => {
    const files = join(dir, 'offline');
    writeFileSync(
      `${files}-pc.yaml`,
      `apiVersion: ${API_VERSION}\nkind: ProviderConfig\nmetadata: { name: mine }\nspec:\n  provider: aws\n  region: us-east-1\n  endpoints: { bucket: "${s3Fake.endpoint}" }\n  credentials: { source: Secret, secretRef: { namespace: k8or-system, name: creds } }\n`,
    );
    writeFileSync(
      `${files}-res.yaml`,
      `apiVersion: v1\nkind: Secret\nmetadata: { name: creds, namespace: k8or-system }\nstringData: ${JSON.stringify(credentials)}\n${bucket('brand-new', { name: 'brand-new-bucket-x1' })}`,
    );
    const { KUBECONFIG: _unused, ...noCluster } = env;
    const result = await k8or(['plan', '-f', `${files}-res.yaml`, '--provider-config', `${files}-pc.yaml`, '--cluster-id', CLUSTER_ID], { env: noCluster });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Bucket default\/brand-new: create "brand-new-bucket-x1" \(ProviderConfig mine\)/);
  });

  it('k8or plan prints the projected drift-check calls an hour per ProviderConfig, within its budget', async () => {
    const files = join(dir, 'budget');
    writeFileSync(
      `${files}-pc.yaml`,
      `apiVersion: ${API_VERSION}\nkind: ProviderConfig\nmetadata: { name: mine }\nspec:\n  provider: aws\n  region: us-east-1\n  endpoints: { bucket: "${s3Fake.endpoint}" }\n  driftCheckBudget: { callsPerHour: 100 }\n  credentials: { source: Secret, secretRef: { namespace: k8or-system, name: creds } }\n`,
    );
    // One Bucket asks for a check a minute (7 S3 calls each: 420 an hour), two for the default hour (14).
    const eager = bucket('eager', { name: 'budget-eager-x1' }).replace('  namespace: default\n', '  namespace: default\n  annotations: { k8or.io/resync-period: 1m }\n');
    writeFileSync(
      `${files}-res.yaml`,
      `apiVersion: v1\nkind: Secret\nmetadata: { name: creds, namespace: k8or-system }\nstringData: ${JSON.stringify(credentials)}\n${eager}${bucket('calm-a', { name: 'budget-calm-a-x1' })}${bucket('calm-b', { name: 'budget-calm-b-x1' })}`,
    );
    const { KUBECONFIG: _unused, ...noCluster } = env;
    const args = ['plan', '-f', `${files}-res.yaml`, '--provider-config', `${files}-pc.yaml`, '--cluster-id', CLUSTER_ID];
    const result = await k8or(args, { env: noCluster });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    // The budget leaves the calm two their hour (14 calls) and checks the eager one every 4m54s: 100 calls an hour in all.
    assert.match(result.stdout, /Drift checks \(the files' objects; 1h where no k8or\.io\/resync-period is set/);
    assert.match(result.stdout, /ProviderConfig mine: 3 resources, 100 cloud calls an hour, budget 100 \(spec\.driftCheckBudget\.callsPerHour\); 1 checked every 4m54s instead of what they ask/);
    const json = JSON.parse((await k8or([...args, '-o', 'json'], { env: noCluster })).stdout) as { driftChecks: unknown[] };
    assert.deepEqual(json.driftChecks, [
      { providerConfig: 'mine', provider: 'aws', resources: 3, projectedCallsPerHour: 100, budgetCallsPerHour: 100, budgetSource: 'callsPerHour', budgetInterval: '4m54s', lengthened: 1 },
    ]);
  });

  it('k8or plan refuses bad usage with exit 2, naming the flag', async () => {
    const missing = await k8or(['plan'], { env });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /required option '-f, --filename <FILE\|DIR\|->' not specified/);
    const badOutput = await k8or(['plan', '-f', 'x.yaml', '-o', 'yaml'], { env });
    assert.equal(badOutput.code, 2);
    assert.match(badOutput.stderr, /option '-o, --output <FORMAT>' argument 'yaml' is invalid/);
    const noConfig = await k8or(['plan', '-f', join(dir, 'plan.yaml'), '--provider-config', join(dir, 'plan.yaml')], { env });
    assert.equal(noConfig.code, 2);
    assert.match(noConfig.stderr, /--provider-config .*plan\.yaml: no ProviderConfig in the file/);
  });

  it('k8or import, then kubectl apply: existing buckets and tables come under k8or as ObserveOnly, Ready, with no cloud write', async () => {
    await s3.send(new CreateBucketCommand({ Bucket: 'legacy.assets' }));
    await s3.send(new PutBucketVersioningCommand({ Bucket: 'legacy.assets', VersioningConfiguration: { Status: 'Enabled' } }));
    if (dynamodb) {
      await dynamodb.send(
        new CreateTableCommand({
          TableName: 'LegacyOrders',
          KeySchema: [{ AttributeName: 'orderId', KeyType: 'HASH' }, { AttributeName: 'placedAt', KeyType: 'RANGE' }],
          AttributeDefinitions: [{ AttributeName: 'orderId', AttributeType: 'S' }, { AttributeName: 'placedAt', AttributeType: 'N' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    }
    const s3Before = s3Fake.requests.length;
    const result = await k8or(['import', '--provider-config', 'local-aws', '--namespace', 'imported'], { env });
    assert.equal(result.code, 0, result.stderr);
    const objects = parseAllDocuments(result.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; annotations: Record<string, string> }; spec: Record<string, unknown> });
    const byExternal = new Map(objects.map((o) => [String(o.spec.name), o]));
    const assets = byExternal.get('legacy.assets');
    assert.ok(assets, result.stdout);
    assert.equal(assets.kind, 'Bucket');
    assert.equal(assets.metadata.annotations['k8or.io/adopt'], 'true');
    assert.equal(assets.spec.managementPolicy, 'ObserveOnly');
    assert.equal(assets.spec.versioning, true, 'the cloud\'s settings are in the manifest');
    assert.ok(byExternal.has('someone-elses-logs'));
    assert.ok(!objects.some((o) => o.metadata.name === 'tracked' || String(o.spec.name).startsWith('default-tracked')), 'a bucket another k8or object manages is not imported');
    // Its object is in this cluster, so the import names it (a bucket with k8or's tags and no object here: import-gcp-azure.test.ts).
    assert.match(result.stderr, /Bucket "default-tracked-[0-9a-f]+" is already named by Bucket default\/tracked \(one object per cloud resource\); skipped/);
    if (dynamodb) {
      const orders = byExternal.get('LegacyOrders');
      assert.equal(orders?.kind, 'Table');
      assert.equal(orders?.metadata.name, objects.find((o) => o.spec.name === 'LegacyOrders')?.metadata.name);
      assert.match(orders?.metadata.name ?? '', /^legacyorders-[0-9a-f]{8}$/);
      assert.deepEqual(orders?.spec.partitionKey, { name: 'orderId', type: 'string' });
      assert.deepEqual(orders?.spec.sortKey, { name: 'placedAt', type: 'number' });
    }

    const file = join(dir, 'estate.yaml');
    writeFileSync(file, result.stdout);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'imported' } } });
    await run('kubectl', ['apply', '-f', file], { env, timeout: 120_000 });
    const engine = engineFor(kubeConfig);
    await engine.start();
    try {
      for (const o of objects) {
        const plural = o.kind === 'Bucket' ? 'buckets' : 'tables';
        const stored = await waitFor(`${o.kind} imported/${o.metadata.name} is Ready`, async () => ((s) => (readyCondition(s) ? s : undefined))(await getObject(plural, o.metadata.name, 'imported')), 90_000);
        assert.equal(stored.spec.managementPolicy, 'ObserveOnly');
      }
    } finally {
      await engine.stop();
    }
    // The engine also repairs the drift of its own Bucket "tracked" meanwhile: only the imported ones count.
    const imported = new Set(objects.filter((o) => o.kind === 'Bucket').map((o) => String(o.spec.name)));
    const writes = s3Fake.requests.slice(s3Before).filter((r) => r.bucket !== undefined && imported.has(r.bucket) && r.method !== 'GET' && r.method !== 'HEAD');
    assert.deepEqual(writes, [], 'no cloud write to the imported buckets');
    assert.equal((await s3.send(new GetBucketVersioningCommand({ Bucket: 'legacy.assets' }))).Status, 'Enabled');
    if (dynamodb) {
      // DynamoDB Local keeps no request log (and has no tagging): the table is as it was made.
      const table = await dynamodb.send(new DescribeTableCommand({ TableName: 'LegacyOrders' }));
      assert.equal(table.Table?.BillingModeSummary?.BillingMode, 'PAY_PER_REQUEST');
    }
  });

  it('k8or import fails for a ProviderConfig that does not exist (exit 1) and refuses an unknown kind (exit 2)', async () => {
    const missing = await k8or(['import', '--provider-config', 'nope'], { env });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /k8or import: ProviderConfig "nope" not found/);
    const badKind = await k8or(['import', '--provider-config', 'local-aws', '--kinds', 'Queue'], { env });
    assert.equal(badKind.code, 2);
    assert.match(badKind.stderr, /option '--kinds <LIST>' argument 'Queue' is invalid\. must be a comma-separated list of Bucket, Table/);
    const noFlag = await k8or(['import'], { env });
    assert.equal(noFlag.code, 2);
    assert.match(noFlag.stderr, /required option '--provider-config <NAME>' not specified/);
  });
});
