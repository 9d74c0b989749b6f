// Drift policy end to end on GCP (GCS fake) and Azure (Azurite), with the operator's engine and
// the real providers and SDKs: a label changed in the cloud under Hold waits for `k8or approve`,
// one under Report is shown and never written.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobServiceClient } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { API_VERSION, type Bucket } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { Engine, installCrds } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startAzurite, startGcsFake, type Azurite, type GcsFake } from '@k8or/local-clouds';
import { azureProvider } from '@k8or/provider-azure';
import { destroyStorageClients, gcpProvider } from '@k8or/provider-gcp';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { k8or } from './support.ts';

const PROJECT = 'drift-test-project';
const NS = 'media';

/** Reads and changes a bucket's user labels in the cloud, as someone behind k8or's back would. */
interface CloudLabels {
  get(bucket: string): Promise<Record<string, string>>;
  change(bucket: string, labels: Record<string, string>): Promise<void>;
}

describe('drift policy on GCP and Azure: Hold waits for approval, Report never writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-drift-clouds-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const env = { ...process.env, KUBECONFIG: kubeconfigPath };
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let gcs: GcsFake;
  let azurite: Azurite;
  let engine: Engine;
  const custom = () => kubeConfig.makeApiClient(CustomObjectsApi);
  const getBucket = async (name: string) => (await custom().getNamespacedCustomObject({ group: 'k8or.io', version: 'v1alpha1', namespace: NS, plural: 'buckets', name })) as Bucket;
  const synced = (b: Bucket) => b.status?.conditions?.find((c) => c.type === 'Synced');

  before(async () => {
    sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn' });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    gcs = await startGcsFake();
    azurite = await startAzurite();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['k8or-system', NS]) await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedSecret({ namespace: 'k8or-system', body: { metadata: { name: 'azure-creds' }, stringData: { accountKey: azurite.accountKey } } });
    const configs: [string, Record<string, unknown>][] = [
      ['local-gcp', { provider: 'gcp', project: PROJECT, endpoints: { bucket: gcs.endpoint } }],
      [
        'local-azure',
        { provider: 'azure', storageAccount: azurite.accountName, endpoints: { bucket: azurite.blobEndpoint }, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'azure-creds' } } },
      ],
    ];
    for (const [name, spec] of configs) {
      await custom().createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body: { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name }, spec } });
    }
    engine = new Engine({
      kubeConfig,
      providers: new Map([
        [gcpProvider.provider, gcpProvider],
        [azureProvider.provider, azureProvider],
      ]),
      clusterId: 'drift-clouds-cluster',
      secretsNamespace: 'k8or-system',
      resyncPeriodMs: 3_600_000,
    });
    await engine.start();
  });

  after(async () => {
    await engine?.stop();
    await destroyStorageClients();
    await azurite?.stop();
    await gcs?.stop();
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function heldThenApproved(object: string, externalName: string, providerConfig: string, cloud: CloudLabels): Promise<void> {
    await custom().createNamespacedCustomObject({
      group: 'k8or.io',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'buckets',
      body: {
        apiVersion: API_VERSION,
        kind: 'Bucket',
        metadata: { name: object },
        spec: {
          name: externalName,
          providerConfigRef: { name: providerConfig },
          labels: { team: 'media', env: 'prod' },
          driftPolicy: { default: 'Report', fields: [{ path: 'spec.labels.team', mode: 'Hold' }] },
        },
      },
    });
    await waitFor(`${object} in sync`, async () => ((b) => (synced(b)?.status === 'True' && b.status?.observedGeneration === b.metadata.generation ? b : undefined))(await getBucket(object)), 120_000);

    await cloud.change(externalName, { team: 'ops', env: 'dev' });
    const checked = await k8or(['reconcile', `bucket/${object}`, '-n', NS, '--wait', '120'], { env });
    assert.equal(checked.code, 0, checked.stderr);
    const held = await getBucket(object);
    assert.equal(synced(held)?.reason, 'DriftHeld');
    assert.deepEqual(
      new Set(held.status?.drift?.map((d) => `${d.field}=${d.mode}`)),
      new Set(['spec.labels.team=Hold', 'spec.labels.env=Report']),
    );
    assert.equal(held.status?.driftCount, 2);
    assert.deepEqual(await cloud.get(externalName), { team: 'ops', env: 'dev' }, 'nothing written');

    const approved = await k8or(['approve', `bucket/${object}`, '-n', NS], { env });
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /spec\.labels\.team: the spec has "media", the cloud has "ops"/);
    assert.doesNotMatch(approved.stdout, /spec\.labels\.env/, 'only the held drift is approved');
    await waitFor(`${object}: the approved drift repaired`, async () => ((await cloud.get(externalName)).team === 'media' ? true : undefined), 120_000);
    const after = await waitFor(`${object}: only the reported drift left`, async () => ((b) => (synced(b)?.reason === 'DriftReported' ? b : undefined))(await getBucket(object)), 120_000);
    assert.deepEqual(after.status?.drift?.map((d) => [d.field, d.mode]), [['spec.labels.env', 'Report']]);
    assert.equal(after.status?.heldDriftDigest, undefined);
    assert.equal((await cloud.get(externalName)).env, 'dev', 'the reported drift is never written');
  }

  it('GCP (Cloud Storage SDK against the GCS fake)', async () => {
    const storage = new Storage({ apiEndpoint: gcs.endpoint, projectId: PROJECT });
    const user = (labels: Record<string, string> | undefined) => Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => k === 'team' || k === 'env'));
    await heldThenApproved('gcp-photos', 'k8or-drift-gcp-photos', 'local-gcp', {
      get: async (bucket) => user((await storage.bucket(bucket).getMetadata())[0].labels as Record<string, string> | undefined),
      change: async (bucket, labels) => {
        await storage.bucket(bucket).setMetadata({ labels });
      },
    });
  });

  it('Azure (Blob SDK against Azurite)', async () => {
    const blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
    const user = (metadata: Record<string, string> | undefined) => Object.fromEntries(Object.entries(metadata ?? {}).filter(([k]) => k === 'team' || k === 'env'));
    await heldThenApproved('azure-photos', 'k8or-drift-azure-photos', 'local-azure', {
      get: async (container) => user((await blobs.getContainerClient(container).getProperties()).metadata),
      change: async (container, labels) => {
        const client = blobs.getContainerClient(container);
        await client.setMetadata({ ...(await client.getProperties()).metadata, ...labels });
      },
    });
  });
});
