import { NotOwnedError, ProviderError, RetryableError, TerminalError, type CloudCallOptions, type ConnectionContext } from '@k8or/core';
import { AzureRetryAfter } from './retry-after.js';

/** Codes that mean "busy, try again": retried with backoff. */
const RETRYABLE = new Set(['ServerBusy', 'OperationTimedOut', 'InternalError', 'ServiceUnavailable', 'TooManyRequests']);

/**
 * Codes that mean "the previous resource of that name is still going away": Azure deletes
 * containers and tables in the background (about 30 s), and refuses the name until then.
 */
const BEING_DELETED = new Set(['ContainerBeingDeleted', 'TableBeingDeleted']);

/** Codes no retry can fix: the spec, the credentials, the role assignments or the account must change. */
const TERMINAL = new Set([
  'AuthorizationFailure',
  'AuthenticationFailed',
  'AuthorizationPermissionMismatch',
  'AuthorizationPermissionDenied',
  'AuthorizationResourceTypeMismatch',
  'AuthorizationServiceMismatch',
  'AuthorizationProtocolMismatch',
  'AuthorizationSourceIPMismatch',
  'InsufficientAccountPermissions',
  'InvalidAuthenticationInfo',
  'AccountIsDisabled',
  'InvalidResourceName',
  'OutOfRangeInput',
  'InvalidInput',
  'InvalidMetadata',
  'InvalidHeaderValue',
  'InvalidQueryParameterValue',
  'MetadataTooLarge',
  'PublicAccessNotPermitted',
  'UnsupportedHeader',
  'FeatureNotSupported',
  'ContainerDisabled',
  'CredentialUnavailableError',
  'MissingCredentials',
]);

/** Codes that say the name belongs to someone else. */
const NOT_OWNED = new Set(['ContainerAlreadyExists', 'TableAlreadyExists']);

/** Errors from the network rather than from Azure (Node's codes, and the Azure core pipeline's). */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'REQUEST_SEND_ERROR', 'AbortError', 'TimeoutError']);

/** How long to wait before trying a name Azure is still deleting. */
export const BEING_DELETED_RETRY_MS = 10_000;

interface RestErrorShape {
  name?: unknown;
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
  details?: { errorCode?: unknown; odataError?: { code?: unknown } };
  response?: { headers?: { get?(name: string): string | undefined } };
}

function shape(error: unknown): RestErrorShape {
  return typeof error === 'object' && error !== null ? (error as RestErrorShape) : {};
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value : undefined);

/** HTTP status of an SDK error, when Azure answered at all. */
export function httpStatusOf(error: unknown): number | undefined {
  const status = shape(error).statusCode;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The Azure error code of an SDK error: the storage error code (`x-ms-error-code`, the XML or
 * OData body), else the pipeline's or Node's code, else a name after the HTTP status.
 */
export function azureErrorCode(error: unknown): string {
  if (error instanceof ProviderError && error.code) return error.code;
  const { name, code, details, response } = shape(error);
  const fromService =
    nonEmpty(details?.errorCode) ?? nonEmpty(details?.odataError?.code) ?? nonEmpty(response?.headers?.get?.('x-ms-error-code')) ?? nonEmpty(code);
  if (fromService) return fromService;
  if (name === 'AbortError' || name === 'CredentialUnavailableError') return name;
  const status = httpStatusOf(error);
  const byStatus: Record<number, string> = { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServerBusy' };
  if (status !== undefined) return byStatus[status] ?? `HTTP${status}`;
  return 'UnknownError';
}

/** The first line of Azure's message (the rest is RequestId and Time). */
function firstLine(error: unknown): string {
  const message = shape(error).message;
  return typeof message === 'string' ? (message.split('\n')[0]?.trim() ?? '') : '';
}

/**
 * Turns an SDK error from `operation` into the class the engine acts on: 429, 5xx, ServerBusy,
 * OperationTimedOut and network failures are retryable, and so are ContainerBeingDeleted and
 * TableBeingDeleted (after BEING_DELETED_RETRY_MS), and a throttling answer whose Retry-After the SDK
 * did not wait out (after that wait, `retryAfterPolicy`); authorization and authentication failures and
 * invalid names are terminal; a name that exists elsewhere is NotOwnedError. The Azure code is in
 * the message and in `code`.
 */
export function classifyAzureError(error: unknown, operation: string): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof AzureRetryAfter) {
    return new RetryableError(`${operation} failed with ${error.code}: Azure asked for ${Math.ceil(error.retryAfterMs / 1000)} s before the next attempt (Retry-After)`, {
      code: error.code,
      cause: error,
      retryAfterMs: error.retryAfterMs,
    });
  }
  const code = azureErrorCode(error);
  const detail = firstLine(error);
  const message = `${operation} failed with ${code}${detail && detail !== code ? `: ${detail}` : ''}`;
  const options = { code, cause: error };
  if (NOT_OWNED.has(code)) return new NotOwnedError(message, options);
  if (BEING_DELETED.has(code)) return new RetryableError(message, { ...options, retryAfterMs: BEING_DELETED_RETRY_MS });
  if (RETRYABLE.has(code) || NETWORK.has(code)) return new RetryableError(message, options);
  if (TERMINAL.has(code)) return new TerminalError(message, options);
  const status = httpStatusOf(error);
  if (status === undefined || status >= 500 || status === 429 || status === 408) return new RetryableError(message, options);
  return new TerminalError(message, options);
}

/**
 * Runs one SDK call through the engine's call recorder (its rate limit for `paced.service`, metrics),
 * classifying any failure.
 */
export async function callAzure<T>(context: Pick<ConnectionContext, 'recordCall'>, paced: CloudCallOptions, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await context.recordCall(operation, call, paced);
  } catch (error) {
    throw classifyAzureError(error, operation);
  }
}

/** True when a classified error carries one of `codes`. */
export function hasCode(error: unknown, ...codes: string[]): boolean {
  return error instanceof ProviderError && error.code !== undefined && codes.includes(error.code);
}
