import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProviderError } from '@k8or/core';
import { startFaultProxy, startS3Fake, type FaultProxy, type S3Fake } from '@k8or/local-clouds';
import { bucketConnector, destroyS3Clients } from '@k8or/provider-aws';
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
