import { MAX_RETRY_AFTER_MS, ProviderError, RetryableError, TerminalError, retryAfterMsOf, type CloudCallOptions, type ConnectionContext } from '@k8or/core';
import { underSignal } from './abort.js';

/** gRPC status codes (google.rpc.Code) by number, as the Bigtable client reports them in `code`. */
const GRPC_CODES = [
  'OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED',
] as const;

/** gRPC codes worth a retry: the service is busy, slow or briefly away. */
const RETRYABLE_GRPC = new Set(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED', 'ABORTED', 'INTERNAL', 'CANCELLED', 'UNKNOWN']);
/** GCS reasons worth a retry, whatever the status. */
const RETRYABLE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'backendError', 'internalError', 'serviceUnavailable']);
/** Errors from the network rather than from Google. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'ERR_STREAM_PREMATURE_CLOSE', 'AbortError']);

/**
 * The shortest Retry-After handed to the engine as its wait: a shorter one is the engine's growing
 * backoff's to cover (a fixed requeue that short would replace it), as the Azure SDKs' retries keep
 * theirs (providers/azure/src/retry-after.ts).
 */
const MIN_RETRY_AFTER_MS = 500;

interface GoogleErrorShape {
  code?: unknown;
  message?: unknown;
  details?: unknown;
  name?: unknown;
  errors?: { reason?: unknown; message?: unknown }[];
  /** The HTTP answer @google-cloud/storage keeps on its ApiError: headers by lower-case name. */
  response?: { headers?: Record<string, unknown> };
}

const shape = (error: unknown): GoogleErrorShape => (typeof error === 'object' && error !== null ? (error as GoogleErrorShape) : {});

/** What Google answered: an HTTP status and GCS reason (JSON API), or a gRPC code name (Bigtable). */
export interface GoogleAnswer {
  status?: number;
  reason?: string;
  grpc?: (typeof GRPC_CODES)[number];
  network?: string;
}

export function googleAnswerOf(error: unknown): GoogleAnswer {
  const { code, errors, name } = shape(error);
  if (typeof code === 'string' && NETWORK.has(code)) return { network: code };
  if (typeof name === 'string' && NETWORK.has(name)) return { network: name };
  if (typeof code === 'number' && code >= 100) {
    const reason = errors?.find((e) => typeof e.reason === 'string')?.reason as string | undefined;
    return { status: code, ...(reason ? { reason } : {}) };
  }
  if (typeof code === 'number' && GRPC_CODES[code]) return { grpc: GRPC_CODES[code] };
  return {};
}

/**
 * The wait a GCS throttling answer (429, 503) names in Retry-After, when the engine should take it
 * (above MIN_RETRY_AFTER_MS; at most MAX_RETRY_AFTER_MS); undefined otherwise.
 */
function retryAfterFor(error: unknown, status: number | undefined): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const headers = shape(error).response?.headers;
  if (!headers) return undefined;
  const wait = retryAfterMsOf({ get: (name) => (typeof headers[name] === 'string' ? headers[name] : undefined) });
  return wait !== undefined && wait > MIN_RETRY_AFTER_MS ? Math.min(wait, MAX_RETRY_AFTER_MS) : undefined;
}

/** The code shown in conditions: the GCS reason (`forbidden`, `rateLimitExceeded`), the gRPC code name, or the network error. */
export function gcpErrorCode(error: unknown): string {
  if (error instanceof ProviderError && error.code) return error.code;
  const answer = googleAnswerOf(error);
  return answer.reason ?? answer.grpc ?? answer.network ?? (answer.status !== undefined ? `HTTP${answer.status}` : 'Unknown');
}

/**
 * Turns a Google client error from `operation` into the class the engine acts on: 429, 5xx,
 * UNAVAILABLE, DEADLINE_EXCEEDED and network failures are retryable; 4xx (403 included),
 * INVALID_ARGUMENT, PERMISSION_DENIED and the like are terminal. The Google reason is in the message.
 * A 429 or 503 whose Retry-After asks for more than MIN_RETRY_AFTER_MS carries that wait for the
 * engine's requeue (the client makes one attempt per call, so nothing else would honour it).
 */
export function classifyGcpError(error: unknown, operation: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const answer = googleAnswerOf(error);
  const code = gcpErrorCode(error);
  const rawMessage = shape(error).details ?? shape(error).message;
  const detail = typeof rawMessage === 'string' && rawMessage ? `: ${rawMessage}` : '';
  const status = answer.status !== undefined ? `${answer.status} ` : '';
  const message = `${operation} failed with ${status}${code}${detail}`;
  const options = { code, cause: error };
  // Both clients make one attempt per call: a throttle (429, rate-limit reasons, RESOURCE_EXHAUSTED)
  // or a 4xx was answered before Google acted (noEffect); a 5xx, a timeout or a network failure may come after.
  if (answer.network) return new RetryableError(message, options);
  if (answer.grpc) {
    if (!RETRYABLE_GRPC.has(answer.grpc)) return new TerminalError(message, options);
    return new RetryableError(message, { ...options, noEffect: answer.grpc === 'RESOURCE_EXHAUSTED' });
  }
  if (answer.status !== undefined) {
    const throttled = answer.status === 429 || answer.reason === 'rateLimitExceeded' || answer.reason === 'userRateLimitExceeded';
    const retryAfterMs = retryAfterFor(error, answer.status);
    if (retryAfterMs !== undefined) {
      return new RetryableError(`${message} (Google asked for ${Math.ceil(retryAfterMs / 1000)} s before the next attempt: Retry-After)`, { ...options, retryAfterMs, noEffect: throttled });
    }
    const retryable = throttled || answer.status >= 500 || (answer.reason !== undefined && RETRYABLE_REASONS.has(answer.reason));
    return retryable ? new RetryableError(message, { ...options, noEffect: throttled }) : new TerminalError(message, options);
  }
  // No answer from Google at all (a socket closed, a client bug): try again rather than give up.
  return new RetryableError(message, options);
}

/** True for a definite "not found" (HTTP 404 or gRPC NOT_FOUND); a 403 or a timeout never is. */
export function isNotFound(error: unknown): boolean {
  const cause = error instanceof ProviderError ? error.cause : error;
  const answer = googleAnswerOf(cause);
  return answer.status === 404 || answer.grpc === 'NOT_FOUND';
}

/** The HTTP status or gRPC code name of a classified error's cause. */
export function answerOf(error: unknown): GoogleAnswer {
  return googleAnswerOf(error instanceof ProviderError ? error.cause : error);
}

/**
 * Runs one client call under the call's signal and the engine's recorder (its rate limit for
 * `paced.service`, metrics), classifying any failure.
 */
export async function callGoogle<T>(
  context: Pick<ConnectionContext, 'recordCall'>,
  paced: CloudCallOptions,
  operation: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await context.recordCall(operation, () => underSignal(paced.signal, operation, call), paced);
  } catch (error) {
    throw classifyGcpError(error, operation);
  }
}
