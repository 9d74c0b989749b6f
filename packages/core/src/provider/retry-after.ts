/** The most a provider asks the engine to wait on a cloud's Retry-After; a later resync observes again anyway. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

/** Response headers, read by name (case-insensitive, as `Headers` and the Azure SDKs' header collections are). */
export interface ResponseHeaders {
  get(name: string): string | null | undefined;
}

/**
 * The wait a throttling answer asks for, in ms: `retry-after-ms` / `x-ms-retry-after-ms`
 * (milliseconds), else `Retry-After` (seconds or an HTTP date). Undefined when none is given.
 */
export function retryAfterMsOf(headers: ResponseHeaders, now: number = Date.now()): number | undefined {
  for (const name of ['retry-after-ms', 'x-ms-retry-after-ms']) {
    const text = headers.get(name);
    const value = Number(text);
    if (text && Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers.get('retry-after')?.trim();
  if (!retryAfter) return undefined;
  if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter) * 1000;
  const date = Date.parse(retryAfter);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}
