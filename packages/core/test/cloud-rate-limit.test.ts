import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ProviderConfig } from '@k8or/api';
import {
  CloudRateLimits,
  CoreMetrics,
  RetryableError,
  TerminalError,
  TokenBucket,
  effectiveRateLimits,
  rateLimitViolations,
  rateLimitWarnings,
  type CloudCallRecorder,
  type ProviderPlugin,
} from '@k8or/core';

/** A plugin's rate-limit declaration, all the limiter reads of it. */
const plugin: Pick<ProviderPlugin, 'provider' | 'rateLimits'> = {
  provider: 'aws',
  rateLimits: {
    'dynamodb-control-plane': { requestsPerSecond: 10, burst: 2, description: 'tables' },
    's3-buckets': { requestsPerSecond: 50, burst: 100, description: 'buckets' },
  },
};

function providerConfig(name: string, rateLimits?: ProviderConfig['spec']['rateLimits']): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec: { provider: 'aws', region: 'eu-west-1', ...(rateLimits ? { rateLimits } : {}) } };
}

/**
 * A clock that moves only when a wait ends, and a wait that records how long it was asked for: every
 * wait resolves at once with the clock moved on by its length, unless its signal is already aborted.
 */
function fakeTime() {
  const clock = { now: 0, waits: [] as number[] };
  const wait = async (ms: number, signal: AbortSignal): Promise<void> => {
    clock.waits.push(ms);
    signal.throwIfAborted();
    clock.now += ms;
  };
  return { clock, options: { now: () => clock.now, wait } };
}

/** A wait that never ends by itself: only its signal ends it (as a token 1,000 s away would). */
function pendingTime() {
  const waits: number[] = [];
  const wait = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((_resolve, reject) => {
      waits.push(ms);
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
  return { waits, options: { now: () => 0, wait } };
}

const noSignal = () => new AbortController().signal;

describe('TokenBucket', () => {
  it('lets the burst through at once, then one token per 1/rate, reservations queuing in order', () => {
    let now = 0;
    const bucket = new TokenBucket(4, 2, () => now);
    assert.deepEqual([bucket.reserve(), bucket.reserve()], [0, 0]);
    assert.equal(bucket.reserve(), 250, 'the third token exists 250 ms from now at 4/s');
    assert.equal(bucket.reserve(), 500, 'and the fourth after it');
    now = 500;
    assert.equal(bucket.available(), 0, 'both reserved tokens have come due');
    now = 10_000;
    assert.equal(bucket.available(), 2, 'a quiet spell refills up to the burst, no further');
  });

  it('takes fractional rates: 0.5 per second is one token every two seconds', () => {
    let now = 0;
    const bucket = new TokenBucket(0.5, 1, () => now);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 2000);
    now = 2000;
    assert.equal(bucket.reserve(), 2000, 'the token due at 2 s was taken by the waiter; the next is due at 4 s');
  });

  it('a cancelled reservation gives its token back, and later reservations keep their times', () => {
    const now = 0;
    const bucket = new TokenBucket(1, 1, () => now);
    bucket.reserve();
    assert.equal(bucket.reserve(), 1000);
    assert.equal(bucket.reserve(), 2000);
    bucket.cancel();
    assert.equal(bucket.reserve(), 2000, 'the cancelled slot is free again: the next waiter gets it, not a later one');
  });

  it('never lets more than burst + rate × T calls come due in any window of T seconds', () => {
    let now = 0;
    const rate = 5;
    const burst = 3;
    const bucket = new TokenBucket(rate, burst, () => now);
    const due: number[] = [];
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 500; i += 1) {
      now += random() < 0.7 ? 0 : random() * 2000;
      due.push(now + bucket.reserve());
    }
    due.sort((a, b) => a - b);
    for (let i = 0; i < due.length; i += 1) {
      for (let j = i; j < due.length; j += 1) {
        const windowSeconds = (due[j]! - due[i]!) / 1000;
        assert.ok(j - i + 1 <= burst + rate * windowSeconds + 1e-9, `${j - i + 1} calls due within ${windowSeconds} s`);
      }
    }
  });

  it('refuses a rate that is not positive and a burst below one', () => {
    assert.throws(() => new TokenBucket(0, 1), RangeError);
    assert.throws(() => new TokenBucket(1, 0), RangeError);
    assert.throws(() => new TokenBucket(Number.POSITIVE_INFINITY, 1), RangeError);
  });
});

describe('spec.rateLimits: precedence and validation', () => {
  it('a ProviderConfig number wins over the provider default, field by field', () => {
    const limits = effectiveRateLimits(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 2 }, 's3-buckets': { burst: 5 } }));
    assert.deepEqual(limits.get('dynamodb-control-plane'), { requestsPerSecond: 2, burst: 2, source: 'providerConfig' });
    assert.deepEqual(limits.get('s3-buckets'), { requestsPerSecond: 50, burst: 5, source: 'providerConfig' });
    assert.deepEqual(effectiveRateLimits(plugin, providerConfig('q')).get('s3-buckets'), { requestsPerSecond: 50, burst: 100, source: 'default' });
  });

  it('refuses unknown services, non-positive rates, bad bursts and unknown fields, naming the field and the rule', () => {
    const config = providerConfig('p', {
      'dynamo-control-plane': { requestsPerSecond: 1 },
      's3-buckets': { requestsPerSecond: 0, burst: 1.5 },
      'dynamodb-control-plane': { requestsPerSecond: -1, qps: 3 } as never,
    });
    const violations = rateLimitViolations(plugin, config);
    assert.deepEqual(
      violations.map((v) => [v.field, v.rule]),
      [
        ['spec.rateLimits.dynamo-control-plane', 'rateLimits.service'],
        ['spec.rateLimits.s3-buckets.requestsPerSecond', 'rateLimits.requestsPerSecond.positive'],
        ['spec.rateLimits.s3-buckets.burst', 'rateLimits.burst.integer'],
        ['spec.rateLimits.dynamodb-control-plane.qps', 'rateLimits.field'],
        ['spec.rateLimits.dynamodb-control-plane.requestsPerSecond', 'rateLimits.requestsPerSecond.positive'],
      ],
    );
    assert.match(violations[0]!.message, /no rate-limited service "dynamo-control-plane"; its services: dynamodb-control-plane, s3-buckets/);
    assert.deepEqual(rateLimitViolations(plugin, providerConfig('ok', { 's3-buckets': { requestsPerSecond: 0.5, burst: 1 } })), []);
    assert.deepEqual(rateLimitViolations({ provider: 'foo' }, providerConfig('x', { any: { burst: 1 } })).map((v) => v.message), ['provider "foo" has no rate-limited service "any"; it declares none']);
  });

  it('warns about a rate above the provider default, which rests on the published limit', () => {
    const warnings = rateLimitWarnings(plugin, providerConfig('p', { 's3-buckets': { requestsPerSecond: 500 }, 'dynamodb-control-plane': { requestsPerSecond: 1 } }));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /spec\.rateLimits\.s3-buckets\.requestsPerSecond 500 is above provider "aws"'s default of 50/);
  });
});

describe('CloudRateLimits', () => {
  it('paces the calls of one service: the burst at once, then 1/rate apart', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p'));
    for (let i = 0; i < 5; i += 1) await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    assert.deepEqual(time.clock.waits, [100, 100, 100], 'burst 2 went at once; the next three waited 100 ms each at 10/s');
    const state = limits.state('p', 'dynamodb-control-plane');
    assert.equal(state?.calls, 5);
    assert.equal(state?.delayed, 3);
    assert.ok(Math.abs((state?.waitedSeconds ?? 0) - 0.3) < 1e-9);
  });

  it('keeps one bucket per ProviderConfig: one that is out of tokens never slows another', async () => {
    const time = pendingTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('team-a'));
    limits.configure(plugin, providerConfig('team-b', { 'dynamodb-control-plane': { burst: 1 } }));
    await limits.acquire('aws', 'team-a', 'dynamodb-control-plane', noSignal());
    await limits.acquire('aws', 'team-a', 'dynamodb-control-plane', noSignal());
    const stop = new AbortController();
    const waiting = limits.acquire('aws', 'team-a', 'dynamodb-control-plane', stop.signal);
    assert.deepEqual(time.waits, [100], 'team-a is out of tokens: its third call waits');
    await limits.acquire('aws', 'team-b', 'dynamodb-control-plane', noSignal());
    assert.deepEqual(time.waits, [100], "team-b's first call goes at once");
    await limits.acquire('aws', 'team-a', 's3-buckets', noSignal());
    assert.deepEqual(time.waits, [100], "and so does team-a's first call to another service");
    stop.abort(new Error('test over'));
    await assert.rejects(waiting, RetryableError);
    assert.equal(limits.state('team-b', 'dynamodb-control-plane')?.burst, 1, "team-b's override is its own");
    assert.equal(limits.state('team-a', 'dynamodb-control-plane')?.burst, 2);
  });

  it('an abort while waiting rejects with a retryable error, and gives the token back', async () => {
    const time = pendingTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 0.001, burst: 1 } }));
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    const reconcile = new AbortController();
    const waiting = limits.acquire('aws', 'p', 'dynamodb-control-plane', reconcile.signal, 'CreateTable');
    assert.deepEqual(time.waits, [1_000_000], 'the next token is 1,000 s away');
    reconcile.abort(new Error('reconcile deadline'));
    const error = await waiting.then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof RetryableError, 'retryable: the engine backs off and tries again');
    assert.equal(error.code, 'RateLimitWaitAborted');
    assert.match(error.message, /"dynamodb-control-plane" rate-limit token of ProviderConfig "p" was aborted: reconcile deadline/);
    const next = new AbortController();
    const again = limits.acquire('aws', 'p', 'dynamodb-control-plane', next.signal);
    assert.deepEqual(time.waits, [1_000_000, 1_000_000], 'the aborted wait gave its token back: the next waiter waits as long, not twice as long');
    next.abort(new Error('done'));
    await assert.rejects(again, RetryableError);
    const state = limits.state('p', 'dynamodb-control-plane');
    assert.equal(state?.calls, 1, 'only the first call went');
    assert.equal(state?.aborted, 2);
  });

  it('a deadline that passes while waiting ends the wait (real timers)', async () => {
    const limits = new CloudRateLimits();
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 0.001, burst: 1 } }));
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    await assert.rejects(limits.acquire('aws', 'p', 'dynamodb-control-plane', AbortSignal.timeout(20)), (error: unknown) => error instanceof RetryableError && error.code === 'RateLimitWaitAborted');
  });

  it('a call whose signal is already aborted takes no token', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p'));
    await assert.rejects(limits.acquire('aws', 'p', 'dynamodb-control-plane', AbortSignal.abort(new Error('stopped'))), RetryableError);
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    assert.deepEqual(time.clock.waits, [], 'both tokens of the burst were still there');
  });

  it('refuses a call under a service the provider does not declare', async () => {
    const limits = new CloudRateLimits(fakeTime().options);
    limits.configure(plugin, providerConfig('p'));
    await assert.rejects(limits.acquire('aws', 'p', 'ec2', noSignal(), 'RunInstances'), (error: unknown) => error instanceof TerminalError && /RunInstances under rate-limit service "ec2"/.test(error.message));
  });

  it('the recorder takes the token before the call and the metrics around it; a changed ProviderConfig applies from the next connect', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    const order: string[] = [];
    const inner: CloudCallRecorder = async (operation, call) => {
      order.push(`record ${operation} at ${time.clock.now}`);
      return await call();
    };
    const recordCall = limits.recorder(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 1, burst: 1 } }), inner);
    const signal = noSignal();
    assert.equal(await recordCall('CreateTable', async () => 'created', { service: 'dynamodb-control-plane', signal }), 'created');
    await recordCall('DescribeTable', async () => 'described', { service: 'dynamodb-control-plane', signal });
    assert.deepEqual(order, ['record CreateTable at 0', 'record DescribeTable at 1000']);
    const faster = limits.recorder(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 100, burst: 1 } }), inner);
    await faster('DescribeTable', async () => undefined, { service: 'dynamodb-control-plane', signal });
    assert.deepEqual(time.clock.waits, [1000, 10], 'the new rate holds from the next call');
    assert.equal(limits.state('p', 'dynamodb-control-plane')?.requestsPerSecond, 100);
    const unpaced = limits.recorder({ provider: 'foo' }, providerConfig('f'), inner);
    assert.equal(unpaced, inner, 'a provider that declares no limits is not paced');
  });

  it('reports limits, calls, waits and aborted waits as Prometheus metrics', async () => {
    const metrics = new CoreMetrics();
    const time = pendingTime();
    const limits = new CloudRateLimits({ ...time.options, metrics: metrics.cloudRateLimitMetrics() });
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 0.5, burst: 1 } }));
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    const stop = new AbortController();
    const waiting = limits.acquire('aws', 'p', 'dynamodb-control-plane', stop.signal);
    stop.abort(new Error('stop'));
    await assert.rejects(waiting);
    const text = await metrics.metrics();
    const labels = 'provider="aws",provider_config="p",service="dynamodb-control-plane"';
    assert.ok(text.includes(`k8or_cloud_rate_limit_requests_per_second{${labels}} 0.5`), text);
    assert.ok(text.includes(`k8or_cloud_rate_limit_burst{${labels}} 1`));
    assert.ok(text.includes(`k8or_cloud_rate_limit_calls_total{${labels}} 1`));
    assert.ok(text.includes(`k8or_cloud_rate_limit_aborted_total{${labels}} 1`));
    assert.ok(text.includes(`k8or_cloud_rate_limit_wait_seconds_count{${labels}} 1`));
    assert.ok(text.includes('k8or_cloud_rate_limit_requests_per_second{provider="aws",provider_config="p",service="s3-buckets"} 50'), 'every declared service is listed with its limit');
  });
});
