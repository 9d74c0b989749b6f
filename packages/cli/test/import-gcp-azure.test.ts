import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BlobServiceClient } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { API_VERSION, type Bucket, type ProviderConfig } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { installCrds } from '@k8or/core';
import { startAzurite, startGcsFake, type Azurite, type GcsFake } from '@k8or/local-clouds';
import { bucketConnector, destroyStorageClients } from '@k8or/provider-gcp';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { k8or } from './support.ts';

const run = promisify(execFile);
const PROJECT = 'import-test-project';
const CLUSTER_ID = 'import-test-cluster';

interface Imported {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

/**
 * `k8or import` on GCP and Azure: settings made directly in the cloud come out in the portable
 * spec's shape (the diff's `actual`), so the manifests pass the webhook's rules and the CRD schema.
 */
describe('k8or import on GCP and Azure: manifests in the portable shape, k8or-managed buckets skipped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-import-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const env = { ...process.env, KUBECONFIG: kubeconfigPath, K8OR_CLUSTER_ID: CLUSTER_ID };
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let gcs: GcsFake;
  let azurite: Azurite;

  /** Creates the ProviderConfig in the cluster and keeps a copy in a file, for `k8or validate`. */
  const providerConfig = async (name: string, spec: ProviderConfig['spec']) => {
    const body = { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name }, spec };
    writeFileSync(join(dir, `${name}-providerconfig.yaml`), JSON.stringify(body));
    await kubeConfig.makeApiClient(CustomObjectsApi).createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body });
  };

  /** Imports, then checks the output as a user would: `k8or validate`, and a server-side dry-run apply against the CRD schema. */
  async function importAndCheck(config: string, namespace: string): Promise<{ objects: Imported[]; stderr: string }> {
    const result = await k8or(['import', '--provider-config', config, '--namespace', namespace, '--kinds', 'Bucket'], { env });
    assert.equal(result.code, 0, result.stderr);
    const file = join(dir, `${config}.yaml`);
    writeFileSync(file, result.stdout);
    const validated = await k8or(['validate', '-f', join(dir, `${config}-providerconfig.yaml`), '-f', file, '--cluster-id', CLUSTER_ID], { env });
    assert.equal(validated.code, 0, `k8or validate rejected the import:\n${validated.stdout}${validated.stderr}\n${result.stdout}`);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    await run('kubectl', ['apply', '--dry-run=server', '-f', file], { env, timeout: 120_000 }).catch((error: { stderr?: string }) => {
      assert.fail(`the API server rejected the import: ${error.stderr ?? String(error)}\n${result.stdout}`);
    });
    return { objects: parseAllDocuments(result.stdout).map((d) => d.toJS() as Imported), stderr: result.stderr };
  }

  before(async () => {
    sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn' });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    gcs = await startGcsFake();
    azurite = await startAzurite();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'k8or-system' } } });
    await core.createNamespacedSecret({ namespace: 'k8or-system', body: { metadata: { name: 'azure-creds' }, stringData: { accountKey: azurite.accountKey } } });
    await providerConfig('local-gcp', { provider: 'gcp', project: PROJECT, endpoints: { bucket: gcs.endpoint } });
    await providerConfig('local-azure', {
      provider: 'azure',
      storageAccount: azurite.accountName,
      endpoints: { bucket: azurite.blobEndpoint },
      credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'azure-creds' } },
    });
  });

  after(async () => {
    await destroyStorageClients();
    await azurite.stop();
    await gcs.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GCP: lifecycle, versioning and public access made in Cloud Storage come out as portable spec values; a k8or-made bucket is skipped', async () => {
    const storage = new Storage({ apiEndpoint: gcs.endpoint, projectId: PROJECT });
    await storage.createBucket('legacy-media', {
      location: 'EUROPE-WEST1',
      versioning: { enabled: true },
      iamConfiguration: { uniformBucketLevelAccess: { enabled: true }, publicAccessPrevention: 'inherited' },
      lifecycle: {
        rule: [
          { action: { type: 'Delete' }, condition: { age: 30, isLive: true, matchesPrefix: ['logs/'] } },
          { action: { type: 'SetStorageClass', storageClass: 'NEARLINE' }, condition: { age: 7, matchesPrefix: ['logs/'] } },
          { action: { type: 'Delete' }, condition: { daysSinceNoncurrentTime: 14, isLive: false } },
        ],
      },
    });
    await storage.createBucket('legacy-private', { location: 'US-CENTRAL1', iamConfiguration: { uniformBucketLevelAccess: { enabled: true }, publicAccessPrevention: 'enforced' } });
    // A bucket k8or made for default/owned (its owner labels written in the create, as the engine does).
    const owned: Bucket = { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: 'owned', namespace: 'default' }, spec: { name: 'k8or-owned-media', location: 'us-central1' } };
    const ownerTags = { 'k8or.io/managed-by': 'k8or', 'k8or.io/cluster': CLUSTER_ID, 'k8or.io/namespace': 'default', 'k8or.io/name': 'owned', 'k8or.io/kind': 'Bucket' };
    const pc: ProviderConfig = { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'local-gcp' }, spec: { provider: 'gcp', project: PROJECT, endpoints: { bucket: gcs.endpoint } } };
    const client = await bucketConnector.connect(owned, { providerConfig: pc, credentials: undefined, externalName: 'k8or-owned-media', ownerTags, recordCall: (_op, call) => call() });
    await client.create(owned, { signal: AbortSignal.timeout(60_000) });

    const { objects, stderr } = await importAndCheck('local-gcp', 'imported-gcp');
    const media = objects.find((o) => o.spec.name === 'legacy-media');
    assert.ok(media, JSON.stringify(objects));
    assert.equal(media.spec.versioning, true);
    assert.equal(media.spec.publicAccess, 'Allowed');
    assert.equal(media.spec.location, 'europe-west1');
    assert.deepEqual(
      new Set((media.spec.lifecycle as { id: string }[]).map(({ id: _id, ...rule }) => JSON.stringify(rule))),
      new Set([JSON.stringify({ prefix: 'logs/', expirationDays: 30, transitions: [{ days: 7, tier: 'InfrequentAccess' }] }), JSON.stringify({ noncurrentVersionExpirationDays: 14 })]),
    );
    const priv = objects.find((o) => o.spec.name === 'legacy-private');
    assert.ok(priv);
    assert.notEqual(priv.spec.publicAccess, 'Allowed');
    assert.equal(priv.spec.lifecycle, undefined);
    assert.ok(!objects.some((o) => o.spec.name === 'k8or-owned-media'), 'a bucket k8or manages is not imported');
    assert.match(stderr, /Bucket "k8or-owned-media" is already managed by k8or \(default\/owned in cluster import-test-cluster, this cluster\); skipped/);
  });

  it('Azure: containers at the container and blob access levels come out as publicAccess Allowed, private ones as Blocked', async () => {
    const blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
    await blobs.getContainerClient('listed-share').create({ access: 'container' });
    await blobs.getContainerClient('open-share').create({ access: 'blob' });
    await blobs.getContainerClient('closed-share').create({ metadata: { team: 'data' } });

    const { objects } = await importAndCheck('local-azure', 'imported-azure');
    const access = Object.fromEntries(objects.filter((o) => o.kind === 'Bucket').map((o) => [String(o.spec.name), o.spec.publicAccess ?? 'Blocked']));
    assert.deepEqual(access, { 'listed-share': 'Allowed', 'open-share': 'Allowed', 'closed-share': 'Blocked' });
  });
});
