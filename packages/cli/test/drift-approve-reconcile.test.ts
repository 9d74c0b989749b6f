// `k8or reconcile` and `k8or approve` against the embedded API server, with the operator's engine
// and the real AWS provider over the local S3 backend: drift made in the cloud with the S3 SDK is
// held under driftPolicy Hold, shown, approved by digest and then repaired.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetBucketTaggingCommand, PutBucketTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { API_VERSION, Annotations, type Bucket } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { Engine, installCrds } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';
import { awsProvider } from '@k8or/provider-aws';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { k8or } from './support.ts';

const run = promisify(execFile);
const credentials = { accessKeyId: 'AKIADRIFTTESTEXAMPLE', secretAccessKey: 'drift-test-secret-access-key' };
const CLUSTER_ID = 'drift-test-cluster';
const NS = 'media';

describe('k8or reconcile and k8or approve: drift held under Hold is repaired only once approved (AWS, S3 backend)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-drift-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const env = { ...process.env, KUBECONFIG: kubeconfigPath };
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let s3Fake: S3Fake;
  let s3: S3Client;
  let engine: Engine;
  const custom = () => kubeConfig.makeApiClient(CustomObjectsApi);
  const getBucket = async (name: string) => (await custom().getNamespacedCustomObject({ group: 'k8or.io', version: 'v1alpha1', namespace: NS, plural: 'buckets', name })) as Bucket;
  const synced = (b: Bucket) => b.status?.conditions?.find((c) => c.type === 'Synced');
  const tagsOf = async (bucket: string) =>
    Object.fromEntries(((await s3.send(new GetBucketTaggingCommand({ Bucket: bucket }))).TagSet ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));

  before(async () => {
    sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn' });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    s3Fake = await startS3Fake();
    s3 = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['k8or-system', NS]) await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedSecret({ namespace: 'k8or-system', body: { metadata: { name: 'aws-credentials' }, stringData: credentials } });
    await custom().createClusterCustomObject({
      group: 'k8or.io',
      version: 'v1alpha1',
      plural: 'providerconfigs',
      body: {
        apiVersion: API_VERSION,
        kind: 'ProviderConfig',
        metadata: { name: 'default' },
        spec: { provider: 'aws', region: 'us-east-1', endpoints: { bucket: s3Fake.endpoint }, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-credentials' } } },
      },
    });
    // A resync far away: every look in this test is one a user asked for.
    engine = new Engine({ kubeConfig, providers: new Map([[awsProvider.provider, awsProvider]]), clusterId: CLUSTER_ID, secretsNamespace: 'k8or-system', resyncPeriodMs: 3_600_000 });
    await engine.start();
  });

  after(async () => {
    await engine?.stop();
    s3?.destroy();
    await s3Fake?.stop();
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl explain bucket.spec.driftPolicy describes the modes and the approval', async (t) => {
    const explained = await run('kubectl', ['explain', 'bucket.spec.driftPolicy'], { env, timeout: 60_000 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!explained) {
      t.skip('kubectl is not installed');
      return;
    }
    assert.match(explained.stdout, /FIELD:\s+driftPolicy/);
    assert.match(explained.stdout.replace(/\s+/g, ' '), /Report shows the difference/);
    assert.match(explained.stdout.replace(/\s+/g, ' '), /reason RepairedDrift\) naming each field, the value found and the value written/);
    assert.match(explained.stdout, /k8or\.io\/approve-drift/);
    assert.match(explained.stdout, /fields\s+<\[\]Object>/);
  });

  it('reconcile shows the held drift at once; approve prints it and has exactly it repaired; usage errors exit 2', async () => {
    await custom().createNamespacedCustomObject({
      group: 'k8or.io',
      version: 'v1alpha1',
      namespace: NS,
      plural: 'buckets',
      body: { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: 'photos' }, spec: { name: 'drift-photos', labels: { team: 'media' }, driftPolicy: { default: 'Hold' } } },
    });
    await waitFor('Bucket photos in sync', async () => ((b) => (synced(b)?.status === 'True' && b.status?.observedGeneration === b.metadata.generation ? b : undefined))(await getBucket('photos')), 90_000);

    // Nothing held yet: approve has nothing to approve.
    const nothing = await k8or(['approve', 'bucket/photos', '-n', NS], { env });
    assert.equal(nothing.code, 1, nothing.stderr);
    assert.match(nothing.stderr, /holds no drift for approval/);

    // Behind k8or's back: the team tag changed with the S3 SDK, owner tags kept.
    await s3.send(new PutBucketTaggingCommand({ Bucket: 'drift-photos', Tagging: { TagSet: Object.entries({ ...(await tagsOf('drift-photos')), team: 'ops' }).map(([Key, Value]) => ({ Key, Value })) } }));

    const checked = await k8or(['reconcile', 'bkt/photos', '-n', NS, '--wait', '90'], { env });
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stdout, /Requested a reconcile of bucket media\/photos/);
    assert.match(checked.stdout, /Synced False \(DriftHeld\)/);
    const held = await getBucket('photos');
    assert.equal(held.status?.lastHandledReconcileAt, held.metadata.annotations?.[Annotations.reconcileRequestedAt], 'the request is echoed');
    assert.deepEqual(held.status?.drift, [{ field: 'spec.labels.team', desired: 'media', actual: 'ops', mode: 'Hold' }]);
    assert.equal(held.status?.driftCount, 1);
    const digest = held.status?.heldDriftDigest;
    assert.ok(digest);
    assert.equal((await tagsOf('drift-photos')).team, 'ops', 'held: not written');

    const approved = await k8or(['approve', 'buckets/photos', '-n', NS], { env });
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, new RegExp(`digest ${digest}`));
    assert.match(approved.stdout, /spec\.labels\.team: the spec has "media", the cloud has "ops"/);
    await waitFor('the approved drift repaired in S3', async () => ((await tagsOf('drift-photos')).team === 'media' ? true : undefined), 90_000);
    const repaired = await waitFor('Synced True again', async () => ((b) => (synced(b)?.status === 'True' ? b : undefined))(await getBucket('photos')), 90_000);
    assert.equal(repaired.status?.heldDriftDigest, undefined);
    assert.equal(repaired.status?.driftCount, 0);
    assert.equal(repaired.metadata.annotations?.[Annotations.approveDrift], undefined, 'the approval is used up');

    const usage = await k8or(['approve', 'photos'], { env });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /is not KIND\/NAME/);
    const missing = await k8or(['reconcile', 'table/none', '-n', NS], { env });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /table media\/none not found/);
  });
});
