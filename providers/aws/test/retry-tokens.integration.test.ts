import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CloudRateLimits, ProviderError, type CloudCallRecorder } from '@k8or/core';
import { callRateReport } from '@k8or/core/testing';
import { startFaultProxy, startS3Fake, type FaultProxy, type S3Fake } from '@k8or/local-clouds';
import { awsProvider, bucketConnector, destroyS3Clients } from '@k8or/provider-aws';
import { ACCESS_KEY, awsProviderConfig, bucket, call, connectionContext, credentials } from './support.ts';

/**
 * Slow enough that the SDK's own backoff (at most 1 s, then 2 s, for a throttled S3 call) can never
 * space its three attempts as far apart as the bucket does (5 s), even with the allowance below:
 * without a token per retry the check fails (two attempts within 2 s, 1.8 allowed).
 */
const LIMIT = { requestsPerSecond: 0.2, burst: 1 };
/** An attempt reaches the proxy some time after it took its token: up to 2 s on a loaded machine. */
const LATENCY_ALLOWANCE_S = 2;
/** The SDK's attempts per call (providers/aws/src/config.ts). */
const ATTEMPTS = 3;

describe("the AWS SDK's retries take a rate-limit token each (S3 behind a throttling proxy)", () => {
  let fake: S3Fake;
  let proxy: FaultProxy;

  before(async () => {
    fake = await startS3Fake({ credentials: { [ACCESS_KEY]: credentials.secretAccessKey } });
    proxy = await startFaultProxy({ target: fake.endpoint, dialect: 's3' });
  });
  after(async () => {
    destroyS3Clients();
    await proxy?.stop();
    await fake?.stop();
  });

  function pacedContext(limits: CloudRateLimits, name: string): ReturnType<typeof connectionContext> {
    const providerConfig = awsProviderConfig({ bucket: proxy.endpoint });
    providerConfig.metadata.name = name;
    providerConfig.spec.rateLimits = { 's3-buckets': LIMIT };
    const context = connectionContext(providerConfig, bucket('throttled'));
    const recordCall: CloudCallRecorder = limits.recorder(awsProvider, providerConfig, context.recordCall);
    return { ...context, recordCall };
  }

  it('waits for a token before every attempt after the first, so the proxy sees no more than the limit allows', async () => {
    const limits = new CloudRateLimits();
    const resource = bucket('k8or-throttled-a');
    const client = await bucketConnector.connect(resource, pacedContext(limits, 'throttled-a'));
    proxy.setFaults({ script: Array.from({ length: ATTEMPTS }, () => 'throttle' as const) });
    const since = Date.now();

    await assert.rejects(client.observe(resource, call), (error: unknown) => error instanceof ProviderError && error.retryable);

    const arrivals = proxy.calls.filter((c) => c.at >= since).map((c) => c.at);
    assert.equal(arrivals.length, ATTEMPTS, 'the SDK retried the throttled call');
    const report = callRateReport(arrivals, LIMIT, LATENCY_ALLOWANCE_S);
    assert.ok(report.withinLimit, `${report.worstWindow.calls} attempts in ${report.worstWindow.seconds} s, ${report.worstWindow.allowed} allowed`);
    const state = limits.state('throttled-a', 's3-buckets');
    assert.equal(state?.calls, ATTEMPTS, 'each attempt took a token of the bucket');
    assert.ok((state?.delayed ?? 0) >= 1, 'a retry waited for its token');
  });
});
