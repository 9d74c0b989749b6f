import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { API_VERSION } from '@k8or/api';
import { CoreMetrics, k8orPath } from '@k8or/core';
import { callRateReport } from '@k8or/core/testing';
import { AwsWorld, SECRETS_NAMESPACE, isReady } from './e2e-world.ts';

const RATE = 10;
const BURST = 2;
const BUCKETS = 6;
/**
 * A request reaches the fake some time after it took its token (signing, the socket, timers that fire
 * late together on a loaded machine): the backend may see up to `RATE × latency` more in a window than
 * the bucket let go. One second; without the limit the engine sends these requests two to three times
 * faster than even that allows.
 */
const LATENCY_ALLOWANCE_S = 1;

describe('cloud rate limits through the engine: the S3 calls of a ProviderConfig keep to its spec.rateLimits', () => {
  let world: AwsWorld;
  const metrics = new CoreMetrics();

  before(async () => {
    world = await AwsWorld.start();
    await world.user.create(k8orPath('ProviderConfig', undefined), {
      apiVersion: API_VERSION,
      kind: 'ProviderConfig',
      metadata: { name: 'paced' },
      spec: {
        provider: 'aws',
        region: 'us-east-1',
        endpoints: { bucket: world.s3.endpoint, table: world.dynamodb.endpoint },
        credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: 'aws-ours' } },
        rateLimits: { 's3-buckets': { requestsPerSecond: RATE, burst: BURST } },
      },
    });
    await world.startEngine({ metrics, workers: 8 });
  });
  after(async () => {
    await world?.stop();
  });

  it(`creates ${BUCKETS} Buckets with every S3 request at the backend within ${RATE}/s and a burst of ${BURST}`, async () => {
    const since = performance.now();
    const names = Array.from({ length: BUCKETS }, (_, i) => `k8or-paced-${i}`);
    await Promise.all(names.map((name, i) => world.createBucket(`paced-${i}`, { name, providerConfigRef: { name: 'paced' } })));
    for (let i = 0; i < BUCKETS; i += 1) await world.waitForBucket(`paced-${i}`, 'Ready', isReady);

    // ListBuckets (no bucket in the path) reads each bucket's creation date, its identity: the same service's token.
    const arrivals = world.s3.requests.filter((r) => r.receivedAt >= since && (r.bucket === undefined || names.includes(r.bucket))).map((r) => r.receivedAt);
    assert.ok(arrivals.length > BURST * 4, `the limit had work to do: ${arrivals.length} requests`);
    const report = callRateReport(arrivals, { requestsPerSecond: RATE, burst: BURST }, LATENCY_ALLOWANCE_S);
    if (process.env['K8OR_TEST_VERBOSE']) console.log(report);
    const worst = report.worstWindow;
    assert.ok(report.withinLimit, `${worst.calls} S3 requests arrived within ${worst.seconds.toFixed(3)} s; at most ${worst.allowed.toFixed(1)} may`);
    assert.ok(report.spanSeconds >= (arrivals.length - BURST) / RATE - LATENCY_ALLOWANCE_S, `${arrivals.length} requests took ${report.spanSeconds.toFixed(2)} s`);

    // Every S3 request of this ProviderConfig went through its bucket, and the metrics say so.
    const state = world.engine?.cloudRateLimits.state('paced', 's3-buckets');
    assert.equal(state?.calls, arrivals.length, 'the limiter admitted exactly the requests the backend saw');
    assert.ok((state?.delayed ?? 0) > 0, 'calls waited for tokens');
    const text = await metrics.metrics();
    const labels = 'provider="aws",provider_config="paced",service="s3-buckets"';
    assert.ok(text.includes(`k8or_cloud_rate_limit_requests_per_second{${labels}} ${RATE}`));
    assert.ok(text.includes(`k8or_cloud_rate_limit_calls_total{${labels}} ${arrivals.length}`));
    // The default ProviderConfig keeps the provider's own limit, untouched by this one.
    await world.createBucket('unpaced', { name: 'k8or-unpaced' });
    await world.waitForBucket('unpaced', 'Ready', isReady);
    assert.equal(world.engine?.cloudRateLimits.state('default', 's3-buckets')?.requestsPerSecond, 50);
  });
});
