/**
 * Runs `reconcile(name)` on the next turn of the event loop, once however many times the name was
 * scheduled before then (a burst of store events for one object is one reconcile), never twice at
 * once for one name (scheduled while it runs, it runs again after), and never after stop().
 * A reconcile that fails (throws or rejects) runs again after a delay that doubles with each failure
 * in a row, as client-go's rate-limited work queue requeues: 100 ms, then up to 10 s.
 */
export class CoalescingScheduler {
  private readonly pending = new Set<string>();
  private readonly running = new Set<string>();
  private readonly rerun = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly reconcile: (name: string) => void | Promise<void>,
    private readonly onError: (name: string, err: unknown) => void = () => {},
  ) {}

  schedule(name: string): void {
    if (this.stopped) return;
    if (this.running.has(name)) {
      this.rerun.add(name);
      return;
    }
    if (this.pending.has(name)) return;
    this.pending.add(name);
    setImmediate(() => {
      this.pending.delete(name);
      if (!this.stopped) void this.run(name);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
  }

  private async run(name: string): Promise<void> {
    this.running.add(name);
    let failed = false;
    try {
      await this.reconcile(name);
      this.failures.delete(name);
    } catch (err) {
      failed = true;
      this.onError(name, err);
    } finally {
      this.running.delete(name);
    }
    if (this.rerun.delete(name)) this.schedule(name);
    else if (failed) this.retryLater(name);
  }

  private retryLater(name: string): void {
    if (this.stopped || this.retryTimers.has(name)) return;
    const failures = (this.failures.get(name) ?? 0) + 1;
    this.failures.set(name, failures);
    const delay = Math.min(100 * 2 ** (failures - 1), 10_000);
    const timer = setTimeout(() => {
      this.retryTimers.delete(name);
      this.schedule(name);
    }, delay);
    timer.unref();
    this.retryTimers.set(name, timer);
  }
}
