import { defaultControllerRateLimiter } from './default-controller-rate-limiter.js';
import { DelayHeap } from './delay-heap.js';
import type { WorkQueueMetricsProvider } from './metrics.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * Which line an add waits in. `change`: the work a change asked for (an edit, a delete, a retry, a
 * poll of a cloud operation under way). `background`: a periodic look (a drift check at its slot),
 * which waits while any change does, so a backlog of drift checks never delays a user's edit. An
 * item added both ways waits as a change.
 */
export type QueueLane = 'change' | 'background';

/** One first-in first-out line of items, read from a moving head and compacted now and then so its array does not grow forever. */
class Line<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The first item; call only when `length > 0`. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  remove(item: T): void {
    const at = this.items.indexOf(item, this.head);
    if (at >= 0) this.items.splice(at, 1);
  }
}

export interface WorkQueueOptions<T> {
  /** Names the queue in metrics (`workqueue_depth{name}`) and logs. */
  name: string;
  /** Used by `addRateLimited`; defaults to {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter<T>;
  metrics?: WorkQueueMetricsProvider;
}

/**
 * A rate-limiting, delaying work queue with client-go's semantics
 * (`util/workqueue`), built from three sets:
 *
 * - `changes` and `backgroundLine`: items waiting for a worker, in order;
 * - `dirty`: items that need processing (everything in those lines, plus items
 *   added again while a worker holds them);
 * - `processing`: items a worker holds, between `get` and `done`.
 *
 * So an item is queued once however many times it is added; it is never handed
 * to two workers at once; and if it is added while being processed, it is
 * queued again when its worker calls `done`, so no change is lost.
 *
 * Items wait in two lines (`QueueLane`), each first-in first-out: a worker takes from the
 * background line only when no change waits (as controller-runtime's priority queue puts
 * resyncs behind events). A change for an item waiting in the background line moves it over.
 *
 * Items are compared with SameValueZero: use strings (object keys), not objects.
 *
 * Shutdown differs from client-go in one way, on purpose: once shut down the
 * queue hands out nothing more (`get` resolves `undefined` at once), so no new
 * cloud call starts while the process stops; `shutDownWithDrain` then waits for
 * the items already in flight. The queue is rebuilt from the informers on restart.
 */
export class WorkQueue<T> {
  readonly name: string;
  /** The pace of `addRateLimited`. */
  readonly rateLimiter: RateLimiter<T>;
  private readonly metrics: WorkQueueMetricsProvider | undefined;

  private readonly changes = new Line<T>();
  /** Its items are also in `background`. */
  private readonly backgroundLine = new Line<T>();
  /** Items needing processing whose every add since they were last taken was a background one. */
  private readonly background = new Set<T>();
  /** Delayed items whose every wake was set as a background one. */
  private readonly delayedBackground = new Set<T>();
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();

  /** When each queued item was queued (queue latency) and each held item was handed out (work duration). */
  private readonly queuedAt = new Map<T, number>();
  private readonly startedAt = new Map<T, number>();

  private readonly waiters: ((item: T | undefined) => void)[] = [];
  private readonly drainWaiters: (() => void)[] = [];

  private readonly delayed = new DelayHeap<T>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  private isShuttingDown = false;

  constructor(options: WorkQueueOptions<T>) {
    this.name = options.name;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<T>();
    this.metrics = options.metrics;
    this.metrics?.trackInFlight({
      unfinishedWorkSeconds: () => {
        const now = performance.now();
        let total = 0;
        for (const started of this.startedAt.values()) total += now - started;
        return total / 1000;
      },
      longestRunningProcessorSeconds: () => {
        let oldest = Infinity;
        for (const started of this.startedAt.values()) oldest = Math.min(oldest, started);
        return oldest === Infinity ? 0 : (performance.now() - oldest) / 1000;
      },
    });
  }

  get shuttingDown(): boolean {
    return this.isShuttingDown;
  }

  /**
   * Marks `item` as needing processing, in `lane`. A no-op if it is already waiting (but for a
   * change to an item waiting in the background line, which moves it to the change line), or
   * after shutdown.
   */
  add(item: T, lane: QueueLane = 'change'): void {
    if (this.isShuttingDown) return;
    if (this.dirty.has(item)) {
      if (lane === 'change' && this.background.delete(item) && !this.processing.has(item)) this.moveToChanges(item);
      return;
    }
    this.metrics?.incAdds();
    this.dirty.add(item);
    if (lane === 'background') this.background.add(item);
    // A worker holds it: `done` re-queues it.
    if (this.processing.has(item)) return;
    this.enqueue(item);
    this.dispatch();
  }

  /**
   * Adds `item` after `delayMs`, in `lane` (see `add`). While it waits, a sooner `addAfter` moves it
   * earlier and a later one is ignored (but for its lane: a change wins); a plain `add` queues it
   * now as well.
   */
  addAfter(item: T, delayMs: number, lane: QueueLane = 'change'): void {
    if (this.isShuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(item, lane);
      return;
    }
    const now = performance.now();
    const waiting = this.delayed.readyAtOf(item) !== undefined;
    if (lane === 'change') this.delayedBackground.delete(item);
    else if (!waiting) this.delayedBackground.add(item);
    this.delayed.push(item, now + delayMs, now);
    this.armTimer();
  }

  /**
   * Drops `item`'s delayed wake if it was set before a worker took the item: the
   * pass that worker just finished did what that wake was for, and decides the
   * next one itself. A wake set while the pass ran (a newer event) stays. Call it
   * between `get` and `done`.
   */
  dropWakeSetBeforeProcessing(item: T): void {
    const started = this.startedAt.get(item);
    if (started !== undefined && this.delayed.removeIfSetBefore(item, started)) {
      this.delayedBackground.delete(item);
      this.armTimer();
    }
  }

  /** When `item`'s delayed wake is due (on `performance.now()`'s clock), or undefined when it has none. */
  nextWakeAt(item: T): number | undefined {
    return this.delayed.readyAtOf(item);
  }

  /** Adds `item` once its rate limiter allows (its backoff grows with each call until `forget`). */
  addRateLimited(item: T): void {
    if (this.isShuttingDown) return;
    this.metrics?.incRetries();
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Resets `item`'s backoff: call it when processing succeeded. */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  /**
   * Waits for the next item and marks it as processing; the caller must call
   * `done(item)` when finished. Resolves `undefined` once the queue is shut down.
   */
  get(): Promise<T | undefined> {
    if (this.isShuttingDown) return Promise.resolve(undefined);
    if (this.len() > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Takes `item` for the caller as a worker's `get` would, if no worker holds it: out of the line
   * it waits in, if it waits; the caller must call `done(item)`. Undefined when a worker holds it
   * or the queue is shut down. `waited` says whether it was waiting, so a caller that does not do
   * what the item waited for can `add` it back. Its delayed wake, if any, stays.
   */
  claim(item: T): { waited: boolean } | undefined {
    if (this.isShuttingDown || this.processing.has(item)) return undefined;
    const waited = this.dirty.has(item);
    if (waited) {
      (this.background.has(item) ? this.backgroundLine : this.changes).remove(item);
      this.background.delete(item);
      this.dirty.delete(item);
      this.queuedAt.delete(item);
      this.metrics?.setDepth(this.len());
    }
    this.processing.add(item);
    this.startedAt.set(item, performance.now());
    return { waited };
  }

  /** Ends processing of `item`; if it was added meanwhile, it is queued again. */
  done(item: T): void {
    if (!this.processing.delete(item)) return;
    const started = this.startedAt.get(item);
    this.startedAt.delete(item);
    if (started !== undefined) this.metrics?.observeWorkDuration((performance.now() - started) / 1000);
    if (this.isShuttingDown) {
      if (this.processing.size === 0) this.notifyDrained();
      return;
    }
    if (this.dirty.has(item)) {
      this.enqueue(item);
      this.dispatch();
    }
  }

  /** Items waiting for a worker (not counting delayed or in-flight ones), in both lines. */
  len(): number {
    return this.changes.length + this.backgroundLine.length;
  }

  /** Items a worker holds right now. */
  inFlight(): number {
    return this.processing.size;
  }

  /** Stops the queue: adds are ignored, delayed items dropped, and `get` resolves `undefined`. */
  shutDown(): void {
    if (this.isShuttingDown) return;
    this.isShuttingDown = true;
    this.clearTimer();
    this.delayed.clear();
    this.delayedBackground.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
    if (this.processing.size === 0) this.notifyDrained();
  }

  /**
   * Shuts down, then waits until every in-flight item is `done`. Resolves true
   * when drained, false if `deadlineMs` passed first (the items are then abandoned).
   */
  shutDownWithDrain(deadlineMs: number): Promise<boolean> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const deadline = setTimeout(() => {
        const index = this.drainWaiters.indexOf(onDrained);
        if (index >= 0) this.drainWaiters.splice(index, 1);
        resolve(false);
      }, deadlineMs);
      const onDrained = (): void => {
        clearTimeout(deadline);
        resolve(true);
      };
      this.drainWaiters.push(onDrained);
    });
  }

  /** Puts a dirty item in its line: the background one when every add since it was taken was a background one. */
  private enqueue(item: T): void {
    (this.background.has(item) ? this.backgroundLine : this.changes).push(item);
    this.queuedAt.set(item, performance.now());
    this.metrics?.setDepth(this.len());
  }

  /** A change for an item waiting in the background line: it leaves that line for the change line, keeping its queued time. */
  private moveToChanges(item: T): void {
    this.backgroundLine.remove(item);
    this.changes.push(item);
    this.dispatch();
  }

  private take(): T {
    const item = (this.changes.length > 0 ? this.changes : this.backgroundLine).shift();
    this.metrics?.setDepth(this.len());
    this.background.delete(item);
    this.dirty.delete(item);
    this.processing.add(item);
    const now = performance.now();
    const queued = this.queuedAt.get(item);
    this.queuedAt.delete(item);
    if (queued !== undefined) this.metrics?.observeQueueDuration((now - queued) / 1000);
    this.startedAt.set(item, now);
    return item;
  }

  /** Hands queued items to waiting workers. */
  private dispatch(): void {
    while (this.waiters.length > 0 && this.len() > 0) {
      const waiter = this.waiters.shift()!;
      waiter(this.take());
    }
  }

  private notifyDrained(): void {
    for (const waiter of this.drainWaiters.splice(0)) waiter();
  }

  /** One timer for the earliest delayed item, re-armed as the heap's head changes. */
  private armTimer(): void {
    const next = this.delayed.peekReadyAt();
    if (next === undefined) {
      this.clearTimer();
      return;
    }
    if (this.timer !== undefined && this.timerAt <= next) return;
    this.clearTimer();
    this.timerAt = next;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, next - performance.now()));
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    // Timers may fire a little early or late; take everything due within a millisecond.
    for (const item of this.delayed.popReady(performance.now() + 1)) this.add(item, this.delayedBackground.delete(item) ? 'background' : 'change');
    this.armTimer();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }
}
