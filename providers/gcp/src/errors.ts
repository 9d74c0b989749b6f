import { ProviderError, RetryableError, TerminalError, type CloudCallOptions, type ConnectionContext } from '@k8or/core';
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

interface GoogleErrorShape {
  code?: unknown;
  message?: unknown;
  details?: unknown;
  name?: unknown;
  errors?: { reason?: unknown; message?: unknown }[];
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
  if (answer.network) return new RetryableError(message, options);
  if (answer.grpc) return RETRYABLE_GRPC.has(answer.grpc) ? new RetryableError(message, options) : new TerminalError(message, options);
  if (answer.status !== undefined) {
    const retryable = answer.status === 429 || answer.status >= 500 || (answer.reason !== undefined && RETRYABLE_REASONS.has(answer.reason));
    return retryable ? new RetryableError(message, options) : new TerminalError(message, options);
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
