/** One waiting item in a {@link DelayHeap}. */
interface Entry<T> {
  item: T;
  readyAt: number;
  /** When it was last pushed, on the caller's clock: a wake set before some moment can be told apart. */
  setAt: number;
  /** Insertion order: items ready at the same instant come out first-in first-out. */
  seq: number;
  index: number;
}

/**
 * A min-heap of items keyed by the time they become ready, holding each item at
 * most once (client-go's waitForPriorityQueue plus its `knownEntries` map). The
 * queue arms a single timer for the head instead of one timer per item.
 */
export class DelayHeap<T> {
  private readonly heap: Entry<T>[] = [];
  private readonly entries = new Map<T, Entry<T>>();
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** When the earliest item becomes ready, or undefined when empty. */
  peekReadyAt(): number | undefined {
    return this.heap[0]?.readyAt;
  }

  /** When `item` becomes ready, or undefined when it is not waiting. */
  readyAtOf(item: T): number | undefined {
    return this.entries.get(item)?.readyAt;
  }

  /** Adds `item`, or moves it earlier if it is already waiting for longer (never later). */
  push(item: T, readyAt: number, setAt: number): void {
    const existing = this.entries.get(item);
    if (existing) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        existing.setAt = setAt;
        this.up(existing.index);
      }
      return;
    }
    const entry: Entry<T> = { item, readyAt, setAt, seq: this.nextSeq++, index: this.heap.length };
    this.heap.push(entry);
    this.entries.set(item, entry);
    this.up(entry.index);
  }

  /** Removes and returns every item ready at or before `now`, earliest first. */
  popReady(now: number): T[] {
    const ready: T[] = [];
    while (this.heap.length > 0 && this.heap[0]!.readyAt <= now) ready.push(this.pop());
    return ready;
  }

  /** Removes `item` if it was last pushed before `setBefore`; true when it did. */
  removeIfSetBefore(item: T, setBefore: number): boolean {
    const entry = this.entries.get(item);
    if (!entry || entry.setAt >= setBefore) return false;
    const last = this.heap.pop()!;
    this.entries.delete(item);
    if (last !== entry) {
      last.index = entry.index;
      this.heap[entry.index] = last;
      this.down(entry.index);
      this.up(last.index);
    }
    return true;
  }

  clear(): void {
    this.heap.length = 0;
    this.entries.clear();
  }

  private pop(): T {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.down(0);
    }
    this.entries.delete(top.item);
    return top.item;
  }

  private less(a: Entry<T>, b: Entry<T>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i]!;
    const b = this.heap[j]!;
    this.heap[i] = b;
    this.heap[j] = a;
    a.index = j;
    b.index = i;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.heap[i]!, this.heap[parent]!)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < n && this.less(this.heap[left]!, this.heap[smallest]!)) smallest = left;
      if (right < n && this.less(this.heap[right]!, this.heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
