/**
 * Errors a provider throws. The engine decides what to do from the class alone:
 * retryable errors back off and retry; terminal errors set a condition and wait
 * for the spec (or the world) to change, without hot-looping.
 */
export class ProviderError extends Error {
  /** The cloud's own error code (`AccessDenied`, `ThrottlingException`...), shown in the condition message. */
  readonly code: string | undefined;
  readonly retryable: boolean;
  /**
   * The cloud definitely did nothing for this call: it refused it before any effect (a 4xx, a
   * throttle such as S3 SlowDown or DynamoDB ThrottlingException, a name taken). For a create,
   * the engine records create-failed (nothing of ours is there). False: the call may have had
   * its effect (a timeout, a 5xx, a dropped connection): the create's outcome is unknown.
   * Default: true for terminal errors, false for retryable ones.
   */
  readonly noEffect: boolean;

  constructor(message: string, options: { code?: string; retryable: boolean; cause?: unknown; noEffect?: boolean }) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.retryable = options.retryable;
    this.noEffect = options.noEffect ?? !options.retryable;
  }
}

/** Throttling, 5xx, network: try again with backoff. */
export class RetryableError extends ProviderError {
  /**
   * Try again no sooner than this, when the cloud says how long a condition lasts (a name still
   * being deleted); otherwise the engine's exponential backoff decides.
   */
  readonly retryAfterMs: number | undefined;

  /** `noEffect: true` for a throttle or refusal the cloud answered before acting (see ProviderError.noEffect). */
  constructor(message: string, options: { code?: string; cause?: unknown; retryAfterMs?: number; noEffect?: boolean } = {}) {
    const { retryAfterMs, ...rest } = options;
    super(message, { ...rest, retryable: true });
    this.retryAfterMs = retryAfterMs;
  }
}

/** Invalid input, access denied, a conflict no retry can fix. */
export class TerminalError extends ProviderError {
  /** `noEffect: false` when the call failed after the cloud acted (a create made, then its tag write denied). */
  constructor(message: string, options: { code?: string; cause?: unknown; noEffect?: boolean } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** The external name is taken by a resource k8or does not own (another account, cluster or object). */
export class NotOwnedError extends TerminalError {}

/** Deleting would lose data (a non-empty bucket without forceDelete). The engine reports it and checks again later. */
export class DeletionBlockedError extends ProviderError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** True for an error the engine should retry with backoff (anything not a known terminal ProviderError). */
export function isRetryable(error: unknown): boolean {
  return error instanceof ProviderError ? error.retryable : true;
}
