/**
 * Runs `reconcile(name)` on the next turn of the event loop, once however many
 * times the name was scheduled before then (a burst of store events for one
 * object is one reconcile), and never after stop().
 */
export class CoalescingScheduler {
  private readonly pending = new Set<string>();
  private stopped = false;

  constructor(private readonly reconcile: (name: string) => void) {}

  schedule(name: string): void {
    if (this.pending.has(name)) return;
    this.pending.add(name);
    setImmediate(() => {
      this.pending.delete(name);
      if (!this.stopped) this.reconcile(name);
    });
  }

  stop(): void {
    this.stopped = true;
  }
}
