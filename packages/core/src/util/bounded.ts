/**
 * Runs `task` on every item with at most `limit` running at once; the results in the order of
 * `items`. The first failure (or `signal` aborting) stops starting more; the ones running
 * settle, and only then is it thrown, so nothing is still running when this returns or throws.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const i = next++;
      try {
        signal?.throwIfAborted();
        results[i] = await task(items[i]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
}
