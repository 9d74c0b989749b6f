/**
 * Decides how long an item waits before it is retried, as in client-go's
 * `workqueue.TypedRateLimiter`. Limiters are small and compose
 * (see {@link MaxOfRateLimiter}).
 */
export interface RateLimiter<T> {
  /** How long (ms) to wait before `item` is handed out again. Each call counts as one more failure. */
  when(item: T): number;
  /** Stop tracking `item` (it succeeded): its next failure starts from the base delay again. */
  forget(item: T): void;
  /** How many times `item` has been re-queued through this limiter since it was last forgotten. */
  numRequeues(item: T): number;
}
