import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import {
  BucketRateLimiter,
  Controller,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  managedResourceRateLimiter,
  type KubeAccess,
  type Reconciler,
} from '@k8or/core';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles the delay per failure from 5 ms and caps it at 1000 s', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000, 0);
    const delays = Array.from({ length: 30 }, () => limiter.when('default/bucket'));
    assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
    assert.equal(delays[17], 5 * 2 ** 17);
    assert.equal(delays[18], 1_000_000, '5 ms * 2^18 would pass 1000 s');
    assert.equal(delays[29], 1_000_000);
    assert.equal(limiter.numRequeues('default/bucket'), 30);
  });

  it('does not overflow after very many failures', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000, 0.1);
    let last = 0;
    for (let i = 0; i < 2000; i++) last = limiter.when('x');
    assert.ok(Number.isFinite(last) && last <= 1_000_000 && last >= 900_000);
  });

  it('spreads delays by the jitter fraction and never past the cap', () => {
    const low = new ItemExponentialFailureRateLimiter<string>(100, 10_000, 0.1, () => 0);
    const high = new ItemExponentialFailureRateLimiter<string>(100, 10_000, 0.1, () => 0.999999);
    assert.equal(low.when('a'), 90);
    assert.ok(Math.abs(high.when('a') - 110) < 0.001);

    const random = new ItemExponentialFailureRateLimiter<string>(100, 10_000, 0.1);
    for (let failure = 0; failure < 12; failure++) {
      const nominal = Math.min(100 * 2 ** failure, 10_000);
      const delay = random.when('a');
      assert.ok(delay >= nominal * 0.9 && delay <= Math.min(nominal * 1.1, 10_000), `failure ${failure}: ${delay}`);
    }
  });

  it('tracks items separately and starts over after forget', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(5, 1000, 0);
    limiter.when('a');
    limiter.when('a');
    assert.equal(limiter.when('b'), 5);
    assert.equal(limiter.when('a'), 20);
    limiter.forget('a');
    assert.equal(limiter.numRequeues('a'), 0);
    assert.equal(limiter.when('a'), 5);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces retries at qps', () => {
    let now = 0;
    const limiter = new BucketRateLimiter<string>(10, 3, () => now);
    assert.deepEqual([limiter.when('a'), limiter.when('b'), limiter.when('c')], [0, 0, 0]);
    assert.equal(limiter.when('d'), 100, 'the 4th token exists 100 ms from now at 10 qps');
    assert.equal(limiter.when('e'), 200, 'reservations queue up');
    now = 1000;
    // 1 s refilled 10 tokens onto -2, capped at the burst of 3.
    assert.deepEqual([limiter.when('f'), limiter.when('g'), limiter.when('h')], [0, 0, 0]);
    assert.equal(limiter.when('i'), 100);
    assert.equal(limiter.numRequeues('a'), 0);
  });
});

describe('MaxOfRateLimiter and the default controller limiter', () => {
  it('waits as long as the strictest limiter and forgets in all of them', () => {
    let now = 0;
    const limiter = new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter<string>(5, 1_000_000, 0),
      new BucketRateLimiter<string>(1, 2, () => now),
    );
    assert.equal(limiter.when('a'), 5);
    assert.equal(limiter.when('a'), 10);
    assert.equal(limiter.when('a'), 1000, 'the bucket is empty: 1 qps');
    assert.equal(limiter.numRequeues('a'), 3);
    limiter.forget('a');
    assert.equal(limiter.numRequeues('a'), 0);
    now = 10_000;
    assert.equal(limiter.when('a'), 5);
  });

  it('defaults to 5 ms per-item backoff within a 100-burst bucket', () => {
    const limiter = defaultControllerRateLimiter<string>();
    const first = limiter.when('default/a');
    assert.ok(first >= 4.5 && first <= 5.5);
    for (let i = 0; i < 99; i++) limiter.when(`default/other-${i}`);
    // 100 tokens spent; the 101st retry waits for the bucket (about 100 ms at 10 qps).
    assert.ok(limiter.when('default/b') > 0);
  });
});

describe('the managed-resource controllers: retry pace after failures', () => {
  it('retries a resource within a minute however long its streak of failures, from 5 ms up', () => {
    const limiter = managedResourceRateLimiter<string>();
    const first = limiter.when('apps/photos');
    assert.ok(first >= 4.5 && first <= 5.5, `first retry after ${first} ms`);
    let delay = first;
    for (let i = 0; i < 40; i++) delay = limiter.when('apps/photos');
    assert.ok(delay >= 54_000 && delay <= 60_000, `after 41 failures the next retry comes in ${delay} ms`);
  });

  it('is what a Bucket or Table controller retries with, unless given another', () => {
    // A streak of failures (a throttling storm, a cloud outage, an SDK out of retry quota) must not
    // leave a resource idle for up to 1000 s, client-go's cap, once the cloud is healthy again.
    const kubeConfig: KubeAccess = { getCurrentCluster: () => ({ server: 'https://127.0.0.1:1' }), applyToHTTPSOptions: async () => {} };
    const reconciler: Reconciler = { reconcile: async () => ({}) };
    const controller = new Controller({ kind: 'Bucket', kubeConfig, reconciler });
    let delay = 0;
    for (let i = 0; i < 30; i++) delay = controller.queue.rateLimiter.when('apps/photos');
    assert.ok(delay <= 60_000, `after 30 failures the next retry comes in ${Math.round(delay / 1000)} s`);
    controller.kill();
  });
});
