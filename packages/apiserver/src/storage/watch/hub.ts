/** Fans store events out to open watch streams. */
import type { StoreEvent } from '../store.js';

export interface WatchSubscriber {
  /** Storage key of the watched resource (group/plural). */
  resourceKey: string;
  /** Receives every store event, synchronously, in resourceVersion order. */
  deliver(event: StoreEvent): void;
  /** Abruptly end the stream (dropWatches, server stop). */
  close(): void;
  /** End the stream cleanly. */
  end(): void;
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

  /** End every watch of one resource (its CRD was deleted), as the real server does. */
  closeResource(resourceKey: string): void {
    for (const s of [...this.subscribers]) {
      if (s.resourceKey !== resourceKey) continue;
      this.subscribers.delete(s);
      s.end();
    }
  }

  closeAll(): void {
    const all = [...this.subscribers];
    this.subscribers.clear();
    for (const s of all) s.close();
  }
}
