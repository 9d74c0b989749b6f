import assert from 'node:assert/strict';
import { RetryableError } from '@k8or/core';

/**
 * The RetryableError `call` rejects with, for the caller's further checks; fails the test when it
 * succeeds or rejects with anything else (a throttle, a stall or a 5xx is never absence).
 */
export async function retryableFailureOf(call: Promise<unknown>): Promise<RetryableError> {
  const failure = await call.then(
    () => assert.fail('the call succeeded; a retryable failure was expected'),
    (error: unknown) => error,
  );
  assert.ok(failure instanceof RetryableError, `a retryable error, not ${String(failure)}`);
  return failure;
}
