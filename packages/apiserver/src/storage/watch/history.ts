/** A bounded window of recent store events, for resuming watches from a resourceVersion. */
import type { StoreEvent } from '../store.js';

export class WatchHistory {
  private events: StoreEvent[] = [];
  private start = 0;
  /** Versions at or below this are no longer covered by the window. */
  private compactedThrough: number;

  constructor(
    private readonly capacity: number,
    currentResourceVersion: number,
  ) {
    this.compactedThrough = currentResourceVersion;
  }

  append(event: StoreEvent): void {
    this.events.push(event);
    if (this.events.length - this.start > this.capacity) {
      const dropped = this.events[this.start];
      this.start += 1;
      if (dropped) this.compactedThrough = dropped.rv;
      // reclaim the array now and then rather than shifting on every append
      if (this.start > this.capacity) {
        this.events = this.events.slice(this.start);
        this.start = 0;
      }
    }
  }

  /** Forget everything up to `currentResourceVersion`. */
  compact(currentResourceVersion: number): void {
    this.events = [];
    this.start = 0;
    this.compactedThrough = currentResourceVersion;
  }

  /** The oldest resourceVersion a watch can still resume from. */
  get oldestResumable(): number {
    return this.compactedThrough;
  }

  /** Events after `rv`, or undefined when `rv` has left the window (410 Gone). */
  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedThrough) return undefined;
    const out: StoreEvent[] = [];
    for (let i = this.events.length - 1; i >= this.start; i--) {
      const e = this.events[i] as StoreEvent;
      if (e.rv <= rv) break;
      out.push(e);
    }
    return out.reverse();
  }
}
