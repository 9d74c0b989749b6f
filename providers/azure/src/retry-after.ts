import { MAX_RETRY_AFTER_MS, retryAfterMsOf } from '@k8or/core';
import type { PipelinePolicy } from './retry-tokens.js';

/**
 * The longest Retry-After the SDKs' own retries may act on: their first backoff
 * (providers/azure/src/clients.ts). A longer one ends the call, and the engine
 * requeues the resource after it.
 */
export const SDK_RETRY_AFTER_LIMIT_MS = 500;

/** A throttling answer (429 or 503) that named a wait longer than the SDKs may take within a call. */
export class AzureRetryAfter extends Error {
  override readonly name = 'AzureRetryAfter';
  readonly status: number;
  readonly code: string;
  readonly retryAfterMs: number;

  constructor(status: number, code: string, retryAfterMs: number) {
    super(`${status} ${code} with Retry-After ${Math.ceil(retryAfterMs / 1000)} s`);
    this.status = status;
    this.code = code;
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * A pipeline policy after the SDK's retry policy (once per HTTP attempt). Left alone, the Tables
 * SDK sleeps for any Retry-After on a 429 or 503, however long, inside the call (holding the
 * worker until the reconcile's deadline cuts it short, the hint lost), and the Blob SDK ignores
 * Retry-After and tries again within half a second. Here a throttling answer that asks for more
 * than SDK_RETRY_AFTER_LIMIT_MS ends the call: thrown as something other than a RestError, it
 * passes through either SDK's retry loop untouched, and the provider turns it into a
 * RetryableError carrying the wait (capped at MAX_RETRY_AFTER_MS) for the engine's requeue.
 */
export const retryAfterPolicy: PipelinePolicy = {
  name: 'k8orRetryAfterPolicy',
  async sendRequest(request, next) {
    const response = await next(request);
    if (response.status !== 429 && response.status !== 503) return response;
    const retryAfterMs = retryAfterMsOf(response.headers);
    if (retryAfterMs === undefined || retryAfterMs <= SDK_RETRY_AFTER_LIMIT_MS) return response;
    const code = response.headers.get('x-ms-error-code') || (response.status === 429 ? 'TooManyRequests' : 'ServerBusy');
    throw new AzureRetryAfter(response.status, code, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
  },
};
