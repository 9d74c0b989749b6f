import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryAfterMsOf } from '@k8or/core';

const headers = (values: Record<string, string>) => ({ get: (name: string): string | undefined => values[name.toLowerCase()] });

describe('retryAfterMsOf: the wait a throttling answer asks for', () => {
  it('reads milliseconds from retry-after-ms and x-ms-retry-after-ms before Retry-After', () => {
    assert.equal(retryAfterMsOf(headers({ 'x-ms-retry-after-ms': '1500', 'retry-after': '9' })), 1500);
    assert.equal(retryAfterMsOf(headers({ 'retry-after-ms': '20' })), 20);
  });

  it('reads Retry-After as seconds, or as an HTTP date (a past date is no wait)', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMsOf(headers({ 'retry-after': '30' }), now), 30_000);
    assert.equal(retryAfterMsOf(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:12 GMT' }), now), 12_000);
    assert.equal(retryAfterMsOf(headers({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now), 0);
  });

  it('is undefined without a header, or with one that is no wait at all', () => {
    assert.equal(retryAfterMsOf(headers({})), undefined);
    assert.equal(retryAfterMsOf(headers({ 'retry-after': 'soon' })), undefined);
  });
});
