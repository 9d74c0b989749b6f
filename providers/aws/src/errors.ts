import { NotOwnedError, ProviderError, RetryableError, TerminalError, type CloudCallOptions, type ConnectionContext } from '@k8or/core';

/** Codes that mean "slow down": retried with backoff. */
const THROTTLING = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'LimitExceededException',
  'TransactionInProgressException',
  // S3: a conflicting operation on the same bucket is still in progress.
  'OperationAborted',
]);

/** Codes of a denial: the resource may well exist, so these are never read as "not found". */
const ACCESS_DENIED = new Set(['AccessDenied', 'AccessDeniedException', 'Forbidden', 'AllAccessDisabled']);

/** Codes no retry can fix: the spec, the credentials or the permissions must change. */
const TERMINAL = new Set([
  ...ACCESS_DENIED,
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'UnrecognizedClientException',
  'InvalidBucketName',
  'InvalidLocationConstraint',
  'IllegalLocationConstraintException',
  'MalformedXML',
  'InvalidArgument',
  'InvalidRequest',
  'InvalidTag',
  'ValidationException',
  'ResourceInUseException',
  'UnknownOperationException',
  'KMS.NotFoundException',
]);

/** Codes that say the name belongs to someone else. */
const NOT_OWNED = new Set(['BucketAlreadyExists']);

/** Errors from the network (or a call cut short by its deadline) rather than from AWS: never an answer about the resource. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
]);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

function shape(error: unknown): SdkErrorShape {
  return typeof error === 'object' && error !== null ? (error as SdkErrorShape) : {};
}

/** HTTP status of an SDK error, when AWS answered at all. */
export function httpStatusOf(error: unknown): number | undefined {
  return shape(error).$metadata?.httpStatusCode;
}

/**
 * The AWS error code of an SDK error. Bodiless answers (HEAD requests) carry none, so the SDK
 * names them after the status; those become `Forbidden`, `ServiceUnavailable` and the like.
 */
export function awsErrorCode(error: unknown): string {
  if (error instanceof ProviderError && error.code) return error.code;
  const { name, code } = shape(error);
  if (typeof code === 'string' && NETWORK.has(code)) return code;
  if (typeof name === 'string' && name !== 'Unknown' && name !== 'UnknownError' && name !== 'Error') return name;
  const status = httpStatusOf(error);
  const byStatus: Record<number, string> = { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 500: 'InternalError', 503: 'ServiceUnavailable' };
  if (status !== undefined) return byStatus[status] ?? `HTTP${status}`;
  return typeof code === 'string' ? code : 'UnknownError';
}

/**
 * Turns an SDK error from `operation` into the class the engine acts on: throttling, 5xx and network
 * failures are retryable; AccessDenied, validation errors and the like are terminal; a bucket name
 * taken by another account is NotOwnedError. The AWS code is in the message and in `code`.
 */
export function classifyAwsError(error: unknown, operation: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const code = awsErrorCode(error);
  const rawMessage = shape(error).message;
  const detail = typeof rawMessage === 'string' && rawMessage && rawMessage !== 'UnknownError' ? `: ${rawMessage}` : '';
  const message = `${operation} failed with ${code}${detail}`;
  // The SDK's own retries: an earlier attempt (a timeout, a 5xx) may have acted before this answer.
  const retried = (shape(error).$metadata?.attempts ?? 1) > 1;
  const options = { code, cause: error };
  if (NOT_OWNED.has(code)) return new NotOwnedError(message, { ...options, noEffect: !retried });
  // A throttle is answered before AWS acts; a network failure may come after.
  if (THROTTLING.has(code)) return new RetryableError(message, { ...options, noEffect: !retried });
  if (NETWORK.has(code)) return new RetryableError(message, options);
  if (TERMINAL.has(code)) return new TerminalError(message, { ...options, noEffect: !retried });
  const status = httpStatusOf(error);
  if (status === 429) return new RetryableError(message, { ...options, noEffect: !retried });
  if (status === undefined || status >= 500) return new RetryableError(message, options);
  return new TerminalError(message, { ...options, noEffect: !retried });
}

/**
 * The same failure, marked as coming after the cloud acted (`noEffect: false`): for a create whose
 * resource was made and whose next step failed, so the engine never records it as refused.
 */
export function afterEffect(error: unknown): unknown {
  if (!(error instanceof ProviderError) || !error.noEffect) return error;
  const options = { ...(error.code ? { code: error.code } : {}), cause: error.cause, noEffect: false };
  if (error instanceof RetryableError) return new RetryableError(error.message, { ...options, ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}) });
  return new TerminalError(error.message, options);
}

/**
 * Runs one SDK call through the engine's call recorder (its rate limit for `paced.service`, metrics),
 * classifying any failure.
 */
export async function callAws<T>(context: Pick<ConnectionContext, 'recordCall'>, paced: CloudCallOptions, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await context.recordCall(operation, call, paced);
  } catch (error) {
    throw classifyAwsError(error, operation);
  }
}

/** True when a classified error carries one of `codes` (used for "absent" answers such as NoSuchTagSet). */
export function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof ProviderError && error.code !== undefined && codes.includes(error.code);
}

/** True for a classified denial (AccessDenied, Forbidden...): an answer that says nothing about existence. */
export function isAccessDenied(error: unknown): boolean {
  return error instanceof ProviderError && error.code !== undefined && ACCESS_DENIED.has(error.code);
}
