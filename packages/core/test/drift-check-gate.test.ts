// The drift-check gate's sliding minute, on a clock the test moves.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { DriftCheckGate, EVERY_SERVICE, SlidingWindowBudget } from '@k8or/core';

describe('SlidingWindowBudget', () => {
  it('grants calls up to the limit in a window, and says when the first grant expires', () => {
    const window = new SlidingWindowBudget(60_000);
    for (let t = 0; t < 5; t++) {
      const grant = window.take(t * 1_000, 2, 10);
      assert.ok('done' in grant);
      grant.done(t * 1_000 + 100);
    }
    assert.equal(window.used(10_000), 10);
    // The first grant was done at 100 ms: it leaves the window at 60,100 ms.
    assert.deepEqual(window.take(10_000, 1, 10), { retryAfterMs: 50_100 });
    assert.deepEqual(window.take(60_099, 1, 10), { retryAfterMs: 1 });
    assert.ok('done' in window.take(60_100, 2, 10));
    assert.equal(window.used(60_100), 10);
  });

  it('counts a grant whose calls still run, however long they take', () => {
    const window = new SlidingWindowBudget(60_000);
    const slow = window.take(0, 1, 1);
    assert.ok('done' in slow);
    // Still running at 5 min: counted; the earliest it can leave is a window after now.
    assert.deepEqual(window.take(300_000, 1, 1), { retryAfterMs: 60_000 });
    slow.done(300_000);
    assert.deepEqual(window.take(359_999, 1, 1), { retryAfterMs: 1 });
    assert.ok('done' in window.take(360_000, 1, 1));
  });

  it('waits for enough grants to expire for a larger cost', () => {
    const window = new SlidingWindowBudget(60_000);
    for (const t of [0, 10_000, 20_000]) {
      const grant = window.take(t, 1, 3);
      assert.ok('done' in grant);
      grant.done(t);
    }
    // Two calls need two grants gone: the second leaves at 70 s.
    assert.deepEqual(window.take(30_000, 2, 3), { retryAfterMs: 40_000 });
  });

  it('lets a cost above the limit through an empty window, never refusing it for ever', () => {
    const window = new SlidingWindowBudget(60_000);
    const big = window.take(0, 5, 2);
    assert.ok('done' in big);
    big.done(0);
    assert.deepEqual(window.take(1_000, 5, 2), { retryAfterMs: 59_000 });
    assert.ok('done' in window.take(60_000, 5, 2));
  });

  it('holds the limit over every sliding window of a random run', () => {
    const window = new SlidingWindowBudget(60_000);
    const limit = 7;
    const made: number[] = [];
    let seed = 42;
    const random = (): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let t = 0; t < 600_000; t += Math.floor(random() * 3_000)) {
      const grant = window.take(t, 1, limit);
      if (!('done' in grant)) continue;
      const at = t + Math.floor(random() * 2_000);
      made.push(at);
      grant.done(at + Math.floor(random() * 500));
    }
    made.sort((a, b) => a - b);
    for (let i = 0; i < made.length; i++) {
      const inWindow = made.filter((m) => m >= made[i]! && m < made[i]! + 60_000).length;
      assert.ok(inWindow <= limit, `${inWindow} calls in the minute from ${made[i]} ms`);
    }
    assert.ok(made.length >= 60, `${made.length} calls in 10 min`);
  });
});

describe('DriftCheckGate', () => {
  it('holds each ProviderConfig with a budget to budget/60 calls a minute, defers the rest, and leaves one without a budget alone', () => {
    let now = 0;
    const deferred: string[] = [];
    const gate = new DriftCheckGate({
      budgets: (config) => (config === 'budgeted' ? new Map([[EVERY_SERVICE, 120]]) : undefined),
      onDeferred: (provider, config) => deferred.push(`${provider}/${config}`),
      now: () => now,
    });
    const first = gate.admit('aws', 'budgeted', { s3: 1 });
    assert.equal(first.admitted, true);
    if (first.admitted) first.done();
    assert.equal(gate.admit('aws', 'budgeted', { s3: 1 }).admitted, true);
    const third = gate.admit('aws', 'budgeted', { s3: 1 });
    assert.deepEqual(third, { admitted: false, retryAfterMs: 60_000 });
    assert.deepEqual(deferred, ['aws/budgeted']);
    for (let i = 0; i < 100; i++) assert.equal(gate.admit('aws', 'free', { s3: 3 }).admitted, true);
    now = 60_000;
    assert.equal(gate.admit('aws', 'budgeted', { s3: 1 }).admitted, true);
    assert.deepEqual(deferred, ['aws/budgeted']);
  });

  it('holds the budget\'s share of a shorter window when given one: 2,400 calls an hour is 4 in any 6 s', () => {
    let now = 0;
    const gate = new DriftCheckGate({ budgets: () => new Map([[EVERY_SERVICE, 2_400]]), now: () => now, windowMs: 6_000 });
    for (let i = 0; i < 4; i++) {
      const admission = gate.admit('aws', 'tight', { s3: 1 });
      assert.equal(admission.admitted, true);
      if (admission.admitted) admission.done();
    }
    assert.deepEqual(gate.admit('aws', 'tight', { s3: 1 }), { admitted: false, retryAfterMs: 6_000 });
    now = 6_000;
    assert.equal(gate.admit('aws', 'tight', { s3: 1 }).admitted, true);
  });

  it('holds each service of a rateLimitPercent budget to its own share: checks on one service never spend what another is allowed', () => {
    let now = 0;
    // A minute holds 7 of S3's calls and 100 of DynamoDB's: a Bucket's check is 7 S3 calls, a Table's 2 DynamoDB calls.
    const gate = new DriftCheckGate({ budgets: () => new Map([['s3-buckets', 420], ['dynamodb-control-plane', 6_000]]), now: () => now });
    const bucket = { 's3-buckets': 7 };
    const table = { 'dynamodb-control-plane': 2 };
    const first = gate.admit('aws', 'both', bucket);
    assert.equal(first.admitted, true);
    if (first.admitted) first.done();
    assert.deepEqual(gate.admit('aws', 'both', bucket), { admitted: false, retryAfterMs: 60_000 }, "S3's share is spent, though the two together would allow 107 calls more");
    for (let i = 0; i < 50; i++) assert.equal(gate.admit('aws', 'both', table).admitted, true, `Table check ${i + 1} of 50 on DynamoDB's share`);
    assert.equal(gate.admit('aws', 'both', table).admitted, false);
    // A check calling both services waits for both, and takes from neither while it waits.
    now = 60_000;
    assert.equal(gate.admit('aws', 'both', { 's3-buckets': 7, 'dynamodb-control-plane': 101 }).admitted, false);
    assert.equal(gate.admit('aws', 'both', bucket).admitted, true, 'the refused check took none of S3\'s share');
  });

  it('refuses a window of 0 ms or longer than an hour', () => {
    assert.throws(() => new DriftCheckGate({ budgets: () => new Map([[EVERY_SERVICE, 60]]), windowMs: 0 }), RangeError);
    assert.throws(() => new DriftCheckGate({ budgets: () => new Map([[EVERY_SERVICE, 60]]), windowMs: 3_600_001 }), RangeError);
  });
});
