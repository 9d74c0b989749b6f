import { dataTables } from './azure-sdk.js';
import type { PipelinePolicy } from './retry-tokens.js';

/**
 * How long one HTTP attempt may take, from sending the request to the end of its answer. The Blob
 * and Table services give themselves at most 30 s for the operations k8or makes (their server
 * timeouts; a Query Tables request included), so an attempt still open after that is stalled:
 * it ends, and the SDK retries it (3 tries in all, providers/azure/src/clients.ts), instead of
 * holding the worker until the reconcile's deadline (2 minutes by default). The same bound as the
 * GCS client's per request (providers/gcp/src/bucket.ts).
 */
export const ATTEMPT_TIMEOUT_MS = 30_000;

/**
 * A pipeline policy after the SDK's retry policy (once per HTTP attempt) that ends an attempt
 * after `timeoutMs`. The Blob SDK's `tryTimeoutInMs` only asks the server to give up (the
 * `timeout` query parameter) and the Tables SDK has no such option, so neither ends a stall on the
 * wire. The attempt fails as a RestError with the network code ETIMEDOUT, which both SDKs' retry
 * policies retry (each retry takes its rate-limit token, `retryTokenPolicy`), and which the
 * provider classifies as retryable, never as absence. The call's own signal still wins: an attempt
 * cut by the reconcile's deadline ends as that abort.
 */
export function attemptTimeoutPolicy(timeoutMs: number): PipelinePolicy {
  return {
    name: 'k8orAttemptTimeoutPolicy',
    async sendRequest(request, next) {
      const callSignal = request.abortSignal;
      const attempt = new AbortController();
      const timer = setTimeout(() => attempt.abort(), timeoutMs);
      const onCallAbort = (): void => attempt.abort();
      if (callSignal?.aborted) attempt.abort();
      callSignal?.addEventListener('abort', onCallAbort);
      request.abortSignal = attempt.signal;
      try {
        return await next(request);
      } catch (error) {
        if (!attempt.signal.aborted || callSignal?.aborted) throw error;
        throw new dataTables.RestError(`no answer within ${timeoutMs / 1000} s (the per-attempt timeout)`, { code: 'ETIMEDOUT', request });
      } finally {
        clearTimeout(timer);
        callSignal?.removeEventListener('abort', onCallAbort);
        // The SDK's retry loop reads the request's signal after each attempt: it must be the call's again.
        request.abortSignal = callSignal;
      }
    },
  };
}
