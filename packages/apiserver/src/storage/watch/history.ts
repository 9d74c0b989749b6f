/**
 * Recent store events, for resuming watches from a resourceVersion: one window per resource type,
 * sized as kube-apiserver's watch cache sizes its event history (staging/src/k8s.io/apiserver/pkg/
 * storage/cacher/watch_cache.go): it starts at 100 events; when it is full and its oldest event is
 * younger than 75 s it doubles, up to 102,400; when it is full and even its newest quarter is older
 * than that it halves, down to 100; else a full window drops its oldest event. A watch from a
 * resourceVersion older than its resource's window gets 410 Gone, as from the real server.
 */
import type { StoreEvent } from '../store.js';

/** kube-apiserver's `eventFreshDuration` (the bookmark frequency plus 15 s). */
export const EVENT_FRESH_MS = 75_000;
/** kube-apiserver's `defaultLowerBoundCapacity` and `defaultUpperBoundCapacity`. */
export const LOWER_BOUND_CAPACITY = 100;
export const UPPER_BOUND_CAPACITY = 100 * 1024;

export interface WatchHistoryOptions {
  /** A fixed window per resource type instead of the real server's sizing (tests of expiry). */
  capacity?: number;
  /** Milliseconds now; default `Date.now`. */
  now?: () => number;
}

interface Recorded {
  event: StoreEvent;
  at: number;
}

/** One resource type's window. */
class ResourceWindow {
  private events: Recorded[] = [];
  private start = 0;

  constructor(
    private capacity: number,
    private readonly resizable: boolean,
    /** Versions at or below this are no longer covered by the window. */
    public compactedThrough: number,
  ) {}

  get size(): number {
    return this.events.length - this.start;
  }

  append(event: StoreEvent, at: number): void {
    if (this.resizable) this.resize(at);
    if (this.size >= this.capacity) this.dropOldest(this.size - this.capacity + 1);
    this.events.push({ event, at });
  }

  private resize(at: number): void {
    if (this.size < this.capacity) return;
    if (at - this.events[this.start]!.at < EVENT_FRESH_MS) {
      this.capacity = Math.min(this.capacity * 2, UPPER_BOUND_CAPACITY);
    } else if (at - this.events[this.events.length - Math.floor(this.capacity / 4)]!.at > EVENT_FRESH_MS) {
      this.capacity = Math.max(Math.floor(this.capacity / 2), LOWER_BOUND_CAPACITY);
      if (this.size > this.capacity) this.dropOldest(this.size - this.capacity);
    }
  }

  private dropOldest(count: number): void {
    this.start += count;
    this.compactedThrough = this.events[this.start - 1]!.event.rv;
    // reclaim the array now and then rather than shifting on every drop
    if (this.start > this.capacity) {
      this.events = this.events.slice(this.start);
      this.start = 0;
    }
  }

  since(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedThrough) return undefined;
    const out: StoreEvent[] = [];
    for (let i = this.events.length - 1; i >= this.start; i--) {
      const recorded = this.events[i]!;
      if (recorded.event.rv <= rv) break;
      out.push(recorded.event);
    }
    return out.reverse();
  }
}

export class WatchHistory {
  private readonly windows = new Map<string, ResourceWindow>();
  private readonly now: () => number;
  /** Where a resource type's window begins before its first event: the last compaction of them all. */
  private compactedThrough: number;

  constructor(
    currentResourceVersion: number,
    private readonly options: WatchHistoryOptions = {},
  ) {
    this.compactedThrough = currentResourceVersion;
    this.now = options.now ?? Date.now;
  }

  append(event: StoreEvent): void {
    let window = this.windows.get(event.resourceKey);
    if (!window) {
      window = new ResourceWindow(this.options.capacity ?? LOWER_BOUND_CAPACITY, this.options.capacity === undefined, this.compactedThrough);
      this.windows.set(event.resourceKey, window);
    }
    window.append(event, this.now());
  }

  /** Forget everything up to `currentResourceVersion`, as an etcd compaction the cache relists after. */
  compact(currentResourceVersion: number): void {
    this.windows.clear();
    this.compactedThrough = currentResourceVersion;
  }

  /** The oldest resourceVersion a watch of `resourceKey` can still resume from. */
  oldestResumable(resourceKey: string): number {
    return this.windows.get(resourceKey)?.compactedThrough ?? this.compactedThrough;
  }

  /** The events of `resourceKey` after `rv`, or undefined when `rv` has left its window (410 Gone). */
  since(resourceKey: string, rv: number): StoreEvent[] | undefined {
    const window = this.windows.get(resourceKey);
    if (!window) return rv < this.compactedThrough ? undefined : [];
    return window.since(rv);
  }
}
