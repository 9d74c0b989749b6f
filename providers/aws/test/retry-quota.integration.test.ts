import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProviderError } from '@k8or/core';
import { startFaultProxy, startS3Fake, type FaultProxy, type S3Fake } from '@k8or/local-clouds';
import { bucketConnector, destroyS3Clients, retryWithoutQuota } from '@k8or/provider-aws';
import { ACCESS_KEY, awsProviderConfig, bucket, call, connectionContext, credentials } from './support.ts';

/** The SDK's attempts per call (providers/aws/src/config.ts). */
const ATTEMPTS = 3;
/**
 * Calls throttled on every attempt, all on the one client a ProviderConfig's buckets share: 70 calls
 * retried twice are 140 retries, more than the 100 the AWS SDK's standard retry quota (500 tokens,
 * 5 a retry) allows a client before it retries nothing.
 */
const STORM = 70;

describe("the AWS SDK keeps retrying a throttled call after a storm (S3 behind a throttling proxy)", () => {
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

  it('retries a call throttled once after many calls were throttled on every attempt, as the engine paces and backs off itself', async () => {
    const providerConfig = awsProviderConfig({ bucket: proxy.endpoint });
    const resource = bucket('k8or-after-the-storm');
    const client = await bucketConnector.connect(resource, connectionContext(providerConfig, resource));
    await client.create(resource, call);
    assert.equal((await client.observe(resource, call)).exists, true);

    proxy.setFaults({ script: Array.from({ length: STORM * ATTEMPTS }, () => 'throttle' as const) });
    const storm = await Promise.allSettled(Array.from({ length: STORM }, () => client.observe(resource, call)));
    assert.ok(storm.every((outcome) => outcome.status === 'rejected' && outcome.reason instanceof ProviderError && outcome.reason.retryable), 'every call of the storm failed, throttled');

    // The storm is over but for one throttle: the SDK's retry takes the call through.
    proxy.setFaults({ script: ['throttle'] });
    const since = proxy.calls.length;
    const observation = await client.observe(resource, call);
    assert.equal(observation.exists, true);
    const first = proxy.calls[since];
    assert.equal(first?.outcome, 'throttled');
    assert.equal(proxy.calls.filter((c, i) => i > since && c.operationId === first?.operationId).length, 1, 'the throttled call was retried once');
  });
});

describe('retryWithoutQuota: the SDK retry rules the AWS clients use', () => {
  it('retries throttling and transient errors, up to the attempts given, with backoff doubling from 500 ms and 100 ms', async () => {
    const strategy = retryWithoutQuota(ATTEMPTS, () => 1);
    const first = await strategy.acquireInitialRetryToken('');
    const second = await strategy.refreshRetryTokenForRetry(first, { errorType: 'THROTTLING' });
    assert.deepEqual([second.getRetryCount(), second.getRetryDelay()], [1, 500]);
    const third = await strategy.refreshRetryTokenForRetry(second, { errorType: 'TRANSIENT' });
    assert.deepEqual([third.getRetryCount(), third.getRetryDelay()], [2, 200]);
    await assert.rejects(strategy.refreshRetryTokenForRetry(third, { errorType: 'THROTTLING' }), 'three attempts, no fourth');
    await assert.rejects(strategy.refreshRetryTokenForRetry(first, { errorType: 'CLIENT_ERROR' }), 'a client error is not retried');
  });

  it('never runs out of retries however many calls were throttled, and waits at least what a Retry-After asks (up to 5 s more)', async () => {
    const strategy = retryWithoutQuota(ATTEMPTS, () => 0);
    const first = await strategy.acquireInitialRetryToken('');
    for (let i = 0; i < 500; i++) assert.equal((await strategy.refreshRetryTokenForRetry(first, { errorType: 'THROTTLING' })).getRetryCount(), 1);
    const hinted = await strategy.refreshRetryTokenForRetry(first, { errorType: 'THROTTLING', retryAfterHint: new Date(Date.now() + 3_000) });
    assert.ok(hinted.getRetryDelay() > 2_500 && hinted.getRetryDelay() <= 3_000, `waits ${hinted.getRetryDelay()} ms for a 3 s Retry-After`);
  });
});
