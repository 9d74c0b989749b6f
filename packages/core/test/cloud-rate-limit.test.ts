import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ProviderConfig } from '@k8or/api';
import {
  CloudRateLimits,
  FLEET_TRANSIT_ALLOWANCE_S,
  beforeCloudAttempt,
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
 * A clock that moves only when the test advances it, and the timers on it: `advance(ms)` fires every timer
 * due by then in order, letting the promises they settle run after each.
 */
function fakeTime() {
  const clock = { now: 0 };
  const timers: { at: number; callback: () => void; cancelled: boolean }[] = [];
  const setTimer = (callback: () => void, ms: number) => {
    const timer = { at: clock.now + ms, callback, cancelled: false };
    timers.push(timer);
    return () => void (timer.cancelled = true);
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  async function advance(ms: number): Promise<void> {
    const end = clock.now + ms;
    await settle();
    for (;;) {
      const due = timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      timers.splice(timers.indexOf(due), 1);
      clock.now = Math.max(clock.now, due.at);
      due.callback();
      await settle();
    }
    clock.now = end;
    await settle();
  }
  return { clock, advance, settle, armed: () => timers.filter((t) => !t.cancelled).length, options: { now: () => clock.now, setTimer } };
}

/** When each call was let go, on the fake clock. */
function releaseTimes(time: ReturnType<typeof fakeTime>, calls: Promise<void>[]): number[] {
  const times: number[] = [];
  for (const call of calls) void call.then(() => times.push(time.clock.now), () => undefined);
  return times;
}

const noSignal = () => new AbortController().signal;

/** Release times (ms, in order) that never put more than `burst + rate × T` calls in any window of T seconds. */
function assertWithinBucket(released: readonly number[], burst: number, rate: number, arriveUpToSecondsLate = 0): void {
  for (let i = 0; i < released.length; i += 1) {
    for (let j = i; j < released.length; j += 1) {
      // Calls let go over S seconds may all arrive within S less how late they may be.
      const seconds = Math.max(0, (released[j]! - released[i]!) / 1000 - arriveUpToSecondsLate);
      assert.ok(j - i + 1 <= burst + rate * seconds + 1e-9, `${j - i + 1} calls went within ${seconds} s`);
    }
  }
}

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

  it('tryTake takes only a token that is there now, and says how long until the next', () => {
    let now = 0;
    const bucket = new TokenBucket(2, 1, () => now);
    assert.equal(bucket.tryTake(), true);
    assert.equal(bucket.tryTake(), false, 'no token: nothing taken, nothing owed');
    assert.equal(bucket.msUntilToken(), 500);
    now = 499;
    assert.equal(bucket.tryTake(), false);
    now = 500;
    assert.equal(bucket.tryTake(), true);
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
  it('paces the calls of one service: the burst at once, then 1/rate apart, first come first served', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p'));
    const calls = Array.from({ length: 5 }, () => limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal()));
    const released = releaseTimes(time, calls);
    await time.advance(1000);
    assert.deepEqual(released, [0, 0, 100, 200, 300], 'burst 2 at once, then one every 100 ms at 10/s');
    assert.equal(time.armed(), 0, 'no timer left once nobody waits');
    const state = limits.state('p', 'dynamodb-control-plane');
    assert.equal(state?.calls, 5);
    assert.equal(state?.delayed, 3);
    assert.ok(Math.abs((state?.waitedSeconds ?? 0) - 0.6) < 1e-9);
  });

  it('lets a change call go before the drift checks calls waiting for the same bucket, and keeps each lane in order', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 10, burst: 1 } }));
    const order: string[] = [];
    const call = (name: string, lane: 'change' | 'background') => void limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal(), name, undefined, lane).then(() => order.push(`${name} at ${time.clock.now}`));
    // Five checks queue first (the first takes the burst); then two changes come.
    for (let i = 1; i <= 5; i += 1) call(`check-${i}`, 'background');
    await time.advance(50);
    call('change-1', 'change');
    call('change-2', 'change');
    await time.advance(1000);
    assert.deepEqual(order, ['check-1 at 0', 'change-1 at 100', 'change-2 at 200', 'check-2 at 300', 'check-3 at 400', 'check-4 at 500', 'check-5 at 600']);
    // A change with a token there goes at once even while checks wait; a check waits behind them.
    order.length = 0;
    await time.advance(1000);
    call('check-6', 'background');
    call('check-7', 'background');
    call('change-3', 'change');
    await time.advance(1000);
    assert.deepEqual(order.map((entry) => entry.split(' ')[0]), ['check-6', 'change-3', 'check-7'], 'the saved token went to the first check; the next one to the change');
    assert.equal(limits.state('p', 'dynamodb-control-plane')?.calls, 10);
    assert.equal(limits.state('p', 'dynamodb-control-plane')?.backgroundCalls, 7);
    assert.equal(time.armed(), 0);
  });

  it('holds the limit over both lanes: never more than burst + rate × T calls in any window of T seconds', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    const rate = 4;
    const burst = 2;
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: rate, burst } }));
    const released: number[] = [];
    let seed = 11;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 200; i += 1) {
      const stop = new AbortController();
      void limits.acquire('aws', 'p', 'dynamodb-control-plane', stop.signal, 'x', undefined, random() < 0.5 ? 'change' : 'background').then(() => released.push(time.clock.now), () => undefined);
      if (random() < 0.1) stop.abort(new Error('deadline'));
      if (random() < 0.2) await time.advance(random() * 2000);
    }
    await time.advance(200_000);
    assertWithinBucket(released, burst, rate);
    assert.equal(time.armed(), 0, 'no timer left once nobody waits');
  });

  it('never lets more than burst + rate × T calls go in any window of T seconds, even when timers fire late', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    const rate = 5;
    const burst = 3;
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: rate, burst } }));
    const released: number[] = [];
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 200; i += 1) {
      void limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal()).then(() => released.push(time.clock.now));
      // Arrivals in clumps; time passing with timers on time, or a stalled process whose due timers all fire late.
      if (random() < 0.2) await time.advance(random() * 3000);
      else if (random() < 0.1) {
        await time.settle();
        time.clock.now += random() * 3000;
        await time.advance(0);
      }
    }
    await time.advance(100_000);
    assert.equal(released.length, 200);
    assertWithinBucket(released, burst, rate);
  });

  it('a shard spends its share: rate and burst times the share (the burst never below one), tokens saved above it dropped at once', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 10, burst: 4 } }));
    limits.setShare(0.5);
    assert.equal(limits.state('p', 'dynamodb-control-plane')?.share, 0.5);
    const calls = Array.from({ length: 4 }, () => limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal()));
    const released = releaseTimes(time, calls);
    await time.advance(1000);
    assert.deepEqual(released, [0, 0, 200, 400], 'burst 2 at once, then one every 200 ms at 5/s');
    // a quiet spell fills the bucket to its burst; a smaller share drops what is above the new one
    await time.advance(10_000);
    limits.setShare(0.1);
    const more = Array.from({ length: 3 }, () => limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal()));
    const later = releaseTimes(time, more);
    const start = time.clock.now;
    await time.advance(3000);
    assert.deepEqual(later.map((at) => at - start), [0, 1000, 2000], 'burst 1 (0.4 raised to one), then 1/s');
    // a share set before a ProviderConfig's first call applies to its bucket too
    limits.configure(plugin, providerConfig('q', { 'dynamodb-control-plane': { requestsPerSecond: 10, burst: 10 } }));
    assert.equal(limits.state('q', 'dynamodb-control-plane')?.share, 0.1);
    assert.throws(() => limits.setShare(0), RangeError);
    assert.throws(() => limits.setShare(1.5), RangeError);
  });

  it('a fleet\'s member starts each bucket with no tokens: the burst may be spent by the others already', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.shareFleetWide();
    limits.setShare(0.5);
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 10, burst: 4 } }));
    const calls = Array.from({ length: 3 }, () => limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal()));
    const released = releaseTimes(time, calls);
    await time.advance(1000);
    assert.deepEqual(released, [200, 400, 600], 'no burst: one every 200 ms at 5/s from the start');
    // A quiet spell earns the burst (its share of it) as before.
    await time.advance(10_000);
    const start = time.clock.now;
    const later = releaseTimes(time, Array.from({ length: 3 }, () => limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal())));
    await time.advance(1000);
    assert.deepEqual(later.map((at) => at - start), [0, 200, 400], 'its burst: 2, less 5/s × 0.25 s kept back, raised to one');
  });

  it('a fleet\'s member keeps a quarter second of its rate back from its burst: its calls keep to its share where they arrive, up to that late', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.shareFleetWide();
    limits.setShare(0.5);
    limits.configure(plugin, providerConfig('p', { 's3-buckets': { requestsPerSecond: 40, burst: 40 } }));
    // A quiet spell earns its burst.
    await time.advance(10_000);
    const start = time.clock.now;
    const released = releaseTimes(time, Array.from({ length: 60 }, () => limits.acquire('aws', 'p', 's3-buckets', noSignal())));
    await time.advance(5000);
    assert.equal(released.length, 60);
    assert.equal(released.filter((at) => at === start).length, 15, 'a burst of 20, less 20/s × 0.25 s');
    assertWithinBucket(released, 20, 20, FLEET_TRANSIT_ALLOWANCE_S);
    // One process alone keeps its whole burst: nothing else's calls share the limit.
    const alone = new CloudRateLimits(time.options);
    alone.configure(plugin, providerConfig('p', { 's3-buckets': { requestsPerSecond: 40, burst: 40 } }));
    const at = time.clock.now;
    const aloneReleased = releaseTimes(time, Array.from({ length: 41 }, () => alone.acquire('aws', 'p', 's3-buckets', noSignal())));
    await time.advance(1000);
    assert.equal(aloneReleased.filter((t) => t === at).length, 40);
  });

  it('keeps one bucket per ProviderConfig: one that is out of tokens never slows another', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('team-a'));
    limits.configure(plugin, providerConfig('team-b', { 'dynamodb-control-plane': { burst: 1 } }));
    await limits.acquire('aws', 'team-a', 'dynamodb-control-plane', noSignal());
    await limits.acquire('aws', 'team-a', 'dynamodb-control-plane', noSignal());
    let teamAThird = false;
    const waiting = limits.acquire('aws', 'team-a', 'dynamodb-control-plane', noSignal()).then(() => void (teamAThird = true));
    await limits.acquire('aws', 'team-b', 'dynamodb-control-plane', noSignal());
    await limits.acquire('aws', 'team-a', 's3-buckets', noSignal());
    assert.equal(teamAThird, false, "team-a's third call still waits while team-b's first call, and team-a's first call to another service, went at once");
    await time.advance(100);
    await waiting;
    assert.equal(teamAThird, true);
    assert.equal(limits.state('team-b', 'dynamodb-control-plane')?.burst, 1, "team-b's override is its own");
    assert.equal(limits.state('team-a', 'dynamodb-control-plane')?.burst, 2);
  });

  it('an abort while waiting rejects with a retryable error, takes no token, and costs no one else a turn', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 0.001, burst: 1 } }));
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    const reconcile = new AbortController();
    const aborted = limits.acquire('aws', 'p', 'dynamodb-control-plane', reconcile.signal, 'CreateTable');
    const next = limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    const released = releaseTimes(time, [next]);
    await time.advance(1000);
    reconcile.abort(new Error('reconcile deadline'));
    const error = await aborted.then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof RetryableError, 'retryable: the engine backs off and tries again');
    assert.equal(error.code, 'RateLimitWaitAborted');
    assert.match(error.message, /"dynamodb-control-plane" rate-limit token of ProviderConfig "p" was aborted: reconcile deadline/);
    await time.advance(999_000);
    assert.deepEqual(released, [1_000_000], 'the call behind the aborted one takes the next token, 1,000 s after the first');
    const state = limits.state('p', 'dynamodb-control-plane');
    assert.equal(state?.calls, 2);
    assert.equal(state?.aborted, 1);
  });

  it('a deadline that passes while waiting ends the wait (real timers)', async () => {
    const limits = new CloudRateLimits();
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 0.001, burst: 1 } }));
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    await assert.rejects(limits.acquire('aws', 'p', 'dynamodb-control-plane', AbortSignal.timeout(20)), (error: unknown) => error instanceof RetryableError && error.code === 'RateLimitWaitAborted');
    // The bucket's timer for the aborted waiter is gone: nothing keeps the process alive.
  });

  it('tells onWait when a call has to queue and when its wait ends, aborted or not; nothing when a token is there', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 1, burst: 1 } }));
    const seen: string[] = [];
    const onWait = (name: string) => () => {
      seen.push(`${name} waits at ${time.clock.now}`);
      return () => void seen.push(`${name} done at ${time.clock.now}`);
    };
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal(), 'DescribeTable', onWait('first'));
    const aborted = new AbortController();
    const second = limits.acquire('aws', 'p', 'dynamodb-control-plane', aborted.signal, 'DescribeTable', onWait('second'));
    const third = limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal(), 'DescribeTable', onWait('third'));
    await time.advance(500);
    aborted.abort(new Error('stopped'));
    await assert.rejects(second, RetryableError);
    await time.advance(500);
    await third;
    assert.deepEqual(seen, ['second waits at 0', 'third waits at 0', 'second done at 500', 'third done at 1000']);
  });

  it('a call whose signal is already aborted takes no token', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    limits.configure(plugin, providerConfig('p'));
    await assert.rejects(limits.acquire('aws', 'p', 'dynamodb-control-plane', AbortSignal.abort(new Error('stopped'))), RetryableError);
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    await limits.acquire('aws', 'p', 'dynamodb-control-plane', noSignal());
    assert.equal(limits.state('p', 'dynamodb-control-plane')?.delayed, 0, 'both tokens of the burst were still there');
  });

  it('refuses a call under a service the provider does not declare', async () => {
    const limits = new CloudRateLimits(fakeTime().options);
    limits.configure(plugin, providerConfig('p'));
    await assert.rejects(limits.acquire('aws', 'p', 'ec2', noSignal(), 'RunInstances'), (error: unknown) => error instanceof TerminalError && /RunInstances under rate-limit service "ec2"/.test(error.message));
  });

  it('refuses to pace by an invalid spec.rateLimits, naming the field and the rule, and keeps the limits it had', () => {
    const limits = new CloudRateLimits(fakeTime().options);
    limits.configure(plugin, providerConfig('p', { 's3-buckets': { requestsPerSecond: 5, burst: 2 } }));
    const invalid = providerConfig('p', { 's3-buckets': { requestsPerSecond: 0, burst: 2 } });
    assert.throws(
      () => limits.recorder(plugin, invalid, async (_operation, call) => await call()),
      (error: unknown) => error instanceof TerminalError && error.code === 'InvalidRateLimits' && /spec\.rateLimits\.s3-buckets\.requestsPerSecond: .*rule rateLimits\.requestsPerSecond\.positive/.test(error.message),
    );
    assert.equal(limits.state('p', 's3-buckets')?.requestsPerSecond, 5);
  });

  it('the recorder takes the token before the call and the metrics around it; a changed ProviderConfig applies at once', async () => {
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
    const second = recordCall('DescribeTable', async () => 'described', { service: 'dynamodb-control-plane', signal });
    await time.advance(1000);
    assert.equal(await second, 'described');
    assert.deepEqual(order, ['record CreateTable at 0', 'record DescribeTable at 1000']);
    // A call waiting under the old rate is let go on the new one's schedule.
    const third = recordCall('DescribeTable', async () => undefined, { service: 'dynamodb-control-plane', signal });
    await time.advance(10);
    limits.recorder(plugin, providerConfig('p', { 'dynamodb-control-plane': { requestsPerSecond: 100, burst: 1 } }), inner);
    await time.advance(10);
    await third;
    const releasedAt = Number(/at ([\d.]+)$/.exec(order.at(-1) ?? '')?.[1]);
    assert.ok(releasedAt > 1010 && releasedAt <= 1020, `released at ${releasedAt} ms: the rest of its token at 100/s, not at 2,000 ms as 1/s would have`);
    assert.equal(limits.state('p', 'dynamodb-control-plane')?.requestsPerSecond, 100);
    const unpaced = limits.recorder({ provider: 'foo' }, providerConfig('f'), inner);
    assert.equal(unpaced, inner, 'a provider that declares no limits is not paced');
  });

  it('reports limits, calls, waits and aborted waits as Prometheus metrics', async () => {
    const metrics = new CoreMetrics();
    const time = fakeTime();
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
    assert.ok(text.includes(`k8or_cloud_rate_limit_wait_seconds_count{${labels},lane="change"} 1`), 'the wait of each call, by its lane');
    assert.ok(text.includes('k8or_cloud_rate_limit_requests_per_second{provider="aws",provider_config="p",service="s3-buckets"} 50'), 'every declared service is listed with its limit');
  });
});

describe("CloudRateLimits: the SDK's retries inside a call (beforeCloudAttempt)", () => {
  const inner: CloudCallRecorder = async (_operation, call) => await call();

  it('lets the first attempt go on the call token and makes each later attempt take one of the same bucket', async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    const record = limits.recorder(plugin, providerConfig('paced', { 'dynamodb-control-plane': { requestsPerSecond: 1, burst: 1 } }), inner);
    const attemptsAt: number[] = [];
    const attempt = async (): Promise<void> => {
      await beforeCloudAttempt();
      attemptsAt.push(time.clock.now);
    };
    const call = record('DescribeTable', async () => {
      for (let i = 0; i < 3; i += 1) await attempt();
      return 'done';
    }, { service: 'dynamodb-control-plane', signal: new AbortController().signal });
    await time.advance(5_000);
    assert.equal(await call, 'done');
    assert.deepEqual(attemptsAt, [0, 1_000, 2_000]);
    assert.equal(limits.state('paced', 'dynamodb-control-plane')?.calls, 3);
  });

  it('takes no token outside a rate-limited call', async () => {
    await beforeCloudAttempt();
    await beforeCloudAttempt();
  });

  it("ends a retry's wait when the call's signal aborts, with a retryable error", async () => {
    const time = fakeTime();
    const limits = new CloudRateLimits(time.options);
    const record = limits.recorder(plugin, providerConfig('aborted', { 'dynamodb-control-plane': { requestsPerSecond: 1, burst: 1 } }), inner);
    const controller = new AbortController();
    const call = record('DescribeTable', async () => {
      await beforeCloudAttempt();
      await beforeCloudAttempt();
    }, { service: 'dynamodb-control-plane', signal: controller.signal });
    await time.settle();
    controller.abort(new Error('deadline'));
    await assert.rejects(call, (error: unknown) => error instanceof RetryableError && error.code === 'RateLimitWaitAborted');
    assert.equal(limits.state('aborted', 'dynamodb-control-plane')?.aborted, 1);
  });
});
