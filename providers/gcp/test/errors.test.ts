import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '@google-cloud/storage';
import { NotOwnedError, RetryableError, TerminalError } from '@k8or/core';
import { classifyGcpError, gcpErrorCode, isNotFound } from '@k8or/provider-gcp';

/** An error as @google-cloud/storage builds it from a JSON API answer. */
const gcsError = (code: number, reason: string, message = `${reason} happened`, headers: Record<string, string> = {}): ApiError =>
  new ApiError({ code, message, errors: [{ reason, message }], response: { headers } as never });
/** An error as the gRPC clients (google-gax) build it. */
const grpcError = (code: number, details: string): Error => Object.assign(new Error(`${code} ${details}`), { code, details });

describe('GCP error classification', () => {
  it('noEffect: a throttle or a 4xx was answered before Google acted; a 5xx, a timeout or a network failure leaves the outcome unknown', () => {
    assert.equal(classifyGcpError(gcsError(429, 'rateLimitExceeded'), 'buckets.insert').noEffect, true);
    assert.equal(classifyGcpError(gcsError(409, 'conflict'), 'buckets.insert').noEffect, true);
    assert.equal(classifyGcpError(gcsError(503, 'backendError'), 'buckets.insert').noEffect, false);
    assert.equal(classifyGcpError(grpcError(8, 'quota'), 'CreateTable').noEffect, true, 'RESOURCE_EXHAUSTED');
    assert.equal(classifyGcpError(grpcError(6, 'exists'), 'CreateTable').noEffect, true, 'ALREADY_EXISTS');
    assert.equal(classifyGcpError(grpcError(4, 'deadline'), 'CreateTable').noEffect, false, 'DEADLINE_EXCEEDED');
    assert.equal(classifyGcpError(grpcError(14, 'unavailable'), 'CreateTable').noEffect, false, 'UNAVAILABLE');
    assert.equal(classifyGcpError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), 'buckets.insert').noEffect, false);
  });

  for (const [status, reason] of [[429, 'rateLimitExceeded'], [503, 'backendError'], [500, 'internalError'], [502, 'badGateway']] as const) {
    it(`retries GCS ${status} ${reason}`, () => {
      const error = classifyGcpError(gcsError(status, reason), 'buckets.patch');
      assert.ok(error instanceof RetryableError);
      assert.equal(error.code, reason);
      assert.equal(error.message, `buckets.patch failed with ${status} ${reason}: ${reason} happened`);
    });
  }

  for (const [status, reason] of [[403, 'forbidden'], [400, 'invalid'], [401, 'authError'], [409, 'conflict'], [412, 'conditionNotMet']] as const) {
    it(`stops on GCS ${status} ${reason}, with the reason in the message`, () => {
      const error = classifyGcpError(gcsError(status, reason), 'buckets.insert');
      assert.ok(error instanceof TerminalError);
      assert.ok(!(error instanceof NotOwnedError));
      assert.match(error.message, new RegExp(`buckets.insert failed with ${status} ${reason}`));
    });
  }

  for (const [code, name] of [[14, 'UNAVAILABLE'], [4, 'DEADLINE_EXCEEDED'], [8, 'RESOURCE_EXHAUSTED'], [10, 'ABORTED']] as const) {
    it(`retries gRPC ${name}`, () => {
      const error = classifyGcpError(grpcError(code, 'try later'), 'GetTable');
      assert.ok(error instanceof RetryableError);
      assert.equal(error.code, name);
      assert.equal(error.message, `GetTable failed with ${name}: try later`);
    });
  }

  for (const [code, name] of [[3, 'INVALID_ARGUMENT'], [7, 'PERMISSION_DENIED'], [16, 'UNAUTHENTICATED'], [6, 'ALREADY_EXISTS'], [9, 'FAILED_PRECONDITION']] as const) {
    it(`stops on gRPC ${name}`, () => assert.ok(classifyGcpError(grpcError(code, 'no'), 'CreateTable') instanceof TerminalError));
  }

  it('retries network failures', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.ok(classifyGcpError(refused, 'buckets.get') instanceof RetryableError);
    assert.equal(gcpErrorCode(refused), 'ECONNREFUSED');
  });

  it('calls only a definite 404 or NOT_FOUND absence: a 403 or a deadline never is', () => {
    assert.equal(isNotFound(gcsError(404, 'notFound')), true);
    assert.equal(isNotFound(classifyGcpError(grpcError(5, 'table not found'), 'GetTable')), true);
    assert.equal(isNotFound(gcsError(403, 'forbidden')), false);
    assert.equal(isNotFound(grpcError(4, 'deadline')), false);
    assert.equal(isNotFound(grpcError(7, 'denied')), false);
  });

  it("carries a 429 or 503's Retry-After above 0.5 s for the engine's requeue, at most 5 minutes; a shorter one, or another status's, is the backoff's", () => {
    const wait = (status: number, retryAfter: string): number | undefined => {
      const error = classifyGcpError(gcsError(status, status === 429 ? 'rateLimitExceeded' : 'backendError', 'busy', { 'retry-after': retryAfter }), 'buckets.get');
      assert.ok(error instanceof RetryableError);
      return error.retryAfterMs;
    };
    assert.equal(wait(429, '7'), 7_000);
    assert.equal(wait(503, '3600'), 5 * 60_000);
    assert.equal(wait(503, '0.5'), undefined);
    assert.equal(wait(500, '7'), undefined);
  });
});
