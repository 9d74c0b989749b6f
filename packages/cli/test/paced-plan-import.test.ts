// `k8or plan` and `k8or import` call the cloud outside the engine: they must keep to the
// ProviderConfig's rate limits all the same (the declared limits, overridden by spec.rateLimits).
// Measured where the calls arrive: the S3 fake's request log.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { API_VERSION } from '@k8or/api';
import type { Sandbox } from '@k8or/apiserver';
import { callRateReport } from '@k8or/core/testing';
import { startS3Fake, type S3Fake } from '@k8or/local-clouds';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { k8or, startCommandCluster } from './support.ts';

const credentials = { accessKeyId: 'AKIAPACEDTESTEXAMPLE', secretAccessKey: 'paced-test-secret-access-key' };
const CLUSTER_ID = 'paced-test-cluster';
/** Far below what plan and import reach unpaced against the local fake (dozens of calls a second). */
const LIMIT = { requestsPerSecond: 4, burst: 1 };
/** A call reaches the fake a little after it took its token (signing, sockets, a loaded machine). */
const LATENCY_ALLOWANCE_S = 1;

const providerConfig = (name: string, endpoint: string, rateLimits: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind: 'ProviderConfig',
  metadata: { name },
  spec: { provider: 'aws', region: 'us-east-1', endpoints: { bucket: endpoint }, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-credentials' } }, rateLimits },
});

const secretManifest = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials', namespace: 'k8or-system' }, stringData: credentials };

const bucketManifest = (name: string, config: string) => ({
  apiVersion: API_VERSION,
  kind: 'Bucket',
  metadata: { name, namespace: 'default' },
  spec: { providerConfigRef: { name: config } },
});

/** The fake's requests from `since` (performance.now()) on, and how they kept to LIMIT. */
function arrivalsSince(s3Fake: S3Fake, since: number) {
  const arrivals = s3Fake.requests.filter((r) => r.receivedAt >= since).map((r) => r.receivedAt);
  return { arrivals, report: callRateReport(arrivals, LIMIT, LATENCY_ALLOWANCE_S) };
}

describe("k8or plan and k8or import keep to the ProviderConfig's rate limits, as the operator does", () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-paced-'));
  let s3Fake: S3Fake;

  before(async () => {
    s3Fake = await startS3Fake();
  });
  after(async () => {
    await s3Fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('k8or plan --provider-config (no cluster)', () => {
    const env = { ...process.env, K8OR_CLUSTER_ID: CLUSTER_ID, KUBECONFIG: '' };
    const BUCKETS = 16;

    it('observes many Buckets no faster than spec.rateLimits allows: burst + rate × T in every window at the backend', async () => {
      const configFile = join(dir, 'paced-providerconfig.json');
      writeFileSync(configFile, JSON.stringify(providerConfig('paced', s3Fake.endpoint, { 's3-buckets': LIMIT })));
      const manifests = join(dir, 'many-buckets.yaml');
      const objects = [secretManifest, ...Array.from({ length: BUCKETS }, (_, i) => bucketManifest(`planned-${i}`, 'paced'))];
      writeFileSync(manifests, objects.map((o) => `---\n${JSON.stringify(o)}\n`).join(''));
      const since = performance.now();

      const result = await k8or(['plan', '-f', manifests, '--provider-config', configFile, '-o', 'json'], { env });

      assert.equal(result.code, 0, result.stdout + result.stderr);
      const plan = JSON.parse(result.stdout) as { resources: { plan: { action: string } }[] };
      assert.deepEqual(
        plan.resources.map((r) => r.plan.action),
        Array.from({ length: BUCKETS }, () => 'create'),
      );
      const { arrivals, report } = arrivalsSince(s3Fake, since);
      assert.ok(arrivals.length >= BUCKETS, `one observe call per Bucket at least (${arrivals.length})`);
      assert.ok(report.withinLimit, `${report.worstWindow.calls} calls in ${report.worstWindow.seconds} s at the S3 fake; at ${LIMIT.requestsPerSecond}/s with a burst of ${LIMIT.burst}, ${report.worstWindow.allowed.toFixed(1)} allowed`);
    });

    it('an invalid spec.rateLimits blocks the plan, naming the field and the rule, and calls nothing', async () => {
      const configFile = join(dir, 'invalid-providerconfig.json');
      writeFileSync(configFile, JSON.stringify(providerConfig('invalid', s3Fake.endpoint, { 's3-buckets': { requestsPerSecond: 4, burst: 0 } })));
      const manifests = join(dir, 'one-bucket.yaml');
      writeFileSync(manifests, [secretManifest, bucketManifest('planned', 'invalid')].map((o) => `---\n${JSON.stringify(o)}\n`).join(''));
      const before = s3Fake.requests.length;

      const result = await k8or(['plan', '-f', manifests, '--provider-config', configFile], { env });

      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(result.stdout, /Bucket default\/planned: blocked \(invalid ProviderConfig\) .*spec\.rateLimits\.s3-buckets\.burst: must be an integer of at least 1 .*rule rateLimits\.burst\.integer/);
      assert.equal(s3Fake.requests.length, before, 'no cloud call');
    });
  });

  describe('k8or import (ProviderConfig in the cluster)', () => {
    const kubeconfigPath = join(dir, 'kubeconfig');
    const env = { ...process.env, KUBECONFIG: kubeconfigPath, K8OR_CLUSTER_ID: CLUSTER_ID };
    let sandbox: Sandbox;
    let kubeConfig: KubeConfig;
    const EXISTING = 5;

    before(async () => {
      ({ sandbox, kubeConfig } = await startCommandCluster(kubeconfigPath));
      const core = kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedSecret({ namespace: 'k8or-system', body: { metadata: { name: 'aws-credentials' }, stringData: credentials } });
      const custom = kubeConfig.makeApiClient(CustomObjectsApi);
      for (const [name, rateLimits] of [
        ['paced', { 's3-buckets': LIMIT }],
        ['misspelt', { 's3-bucket': LIMIT }],
      ] as const) {
        await custom.createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body: providerConfig(name, s3Fake.endpoint, rateLimits) });
      }
      const s3 = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
      for (let i = 0; i < EXISTING; i += 1) await s3.send(new CreateBucketCommand({ Bucket: `existing-estate-${i}` }));
      s3.destroy();
    });
    after(async () => {
      await sandbox?.stop();
    });

    it('lists and observes an estate no faster than spec.rateLimits allows: burst + rate × T in every window at the backend', async () => {
      const since = performance.now();

      const result = await k8or(['import', '--provider-config', 'paced', '--kinds', 'Bucket'], { env });

      assert.equal(result.code, 0, result.stdout + result.stderr);
      const names = parseAllDocuments(result.stdout).map((d) => (d.toJS() as { spec: { name: string } } | null)?.spec.name).filter((n) => n !== undefined);
      assert.deepEqual(names.sort(), Array.from({ length: EXISTING }, (_, i) => `existing-estate-${i}`));
      const { arrivals, report } = arrivalsSince(s3Fake, since);
      assert.ok(arrivals.length > EXISTING, `a listing and an observe per bucket (${arrivals.length} calls)`);
      assert.ok(report.withinLimit, `${report.worstWindow.calls} calls in ${report.worstWindow.seconds} s at the S3 fake; at ${LIMIT.requestsPerSecond}/s with a burst of ${LIMIT.burst}, ${report.worstWindow.allowed.toFixed(1)} allowed`);
    });

    it('an invalid spec.rateLimits stops the import before any cloud call, naming the field and the rule', async () => {
      const before = s3Fake.requests.length;

      const result = await k8or(['import', '--provider-config', 'misspelt', '--kinds', 'Bucket'], { env });

      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(result.stderr, /spec\.rateLimits\.s3-bucket: provider "aws" has no rate-limited service "s3-bucket".*rule rateLimits\.service/);
      assert.equal(result.stdout, '');
      assert.equal(s3Fake.requests.length, before, 'no cloud call');
    });
  });
});
