/** An error as the GCS JSON API answers it: `{ error: { code, message, errors: [{ message, domain, reason }] } }`. */
export class GcsError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** More members of the error item, such as `locationType` and `location` of an authError. */
    readonly details: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): string {
    return JSON.stringify({ error: { code: this.status, message: this.message, errors: [{ message: this.message, domain: 'global', reason: this.reason, ...this.details }] } });
  }
}

/** The answers GCS gives, with its reasons and messages (cloud.google.com/storage/docs/json_api/v1/status-codes). */
export const GcsErrors = {
  invalid: (message: string): GcsError => new GcsError(400, 'invalid', message),
  required: (what: string): GcsError => new GcsError(400, 'required', `Required: ${what}`),
  unauthorized: (): GcsError => new GcsError(401, 'required', 'Anonymous caller does not have storage.buckets.get access to the Google Cloud Storage bucket.'),
  forbidden: (principal: string, permission: string, bucket: string | undefined): GcsError =>
    new GcsError(403, 'forbidden', `${principal} does not have ${permission} access to the Google Cloud Storage ${bucket ? `bucket ${bucket}` : 'project'}.`),
  bucketNotFound: (): GcsError => new GcsError(404, 'notFound', 'The specified bucket does not exist.'),
  objectNotFound: (bucket: string, name: string): GcsError => new GcsError(404, 'notFound', `No such object: ${bucket}/${name}`),
  alreadyOwned: (): GcsError => new GcsError(409, 'conflict', 'Your previous request to create the named bucket succeeded and you already own it.'),
  nameUnavailable: (): GcsError =>
    new GcsError(409, 'conflict', 'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.'),
  notEmpty: (): GcsError => new GcsError(409, 'conflict', 'The bucket you tried to delete is not empty.'),
  preconditionFailed: (): GcsError => new GcsError(412, 'conditionNotMet', 'Precondition Failed'),
  rateLimited: (): GcsError => new GcsError(429, 'rateLimitExceeded', 'The total number of changes to the object exceeds the rate limit. Please reduce the rate of create, update, and delete requests.'),
  backendError: (): GcsError => new GcsError(503, 'backendError', 'We encountered an internal error. Please try again.'),
  notImplemented: (what: string): GcsError => new GcsError(501, 'notImplemented', `${what} is not implemented by the GCS fake`),
} as const;
