/** Fans store events out to open watch streams. */
import type { StoreEvent } from '../store/store.js';

export interface WatchSubscriber {
  /** Receives every store event, synchronously, in resourceVersion order. */
  deliver(event: StoreEvent): void;
  /** Abruptly end the stream (dropWatches, server stop). */
  close(): void;
}

export class WatchHub {
  private readonly subscribers = new Set<WatchSubscriber>();

  subscribe(subscriber: WatchSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  publish(event: StoreEvent): void {
    for (const s of this.subscribers) s.deliver(event);
  }

  get size(): number {
    return this.subscribers.size;
  }

  closeAll(): void {
    const all = [...this.subscribers];
    this.subscribers.clear();
    for (const s of all) s.close();
  }
}
