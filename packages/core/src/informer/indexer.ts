import type { ObjectCodec } from './compact-codec.js';
import { objectKey, type ObjectWithMetadata } from './object-key.js';

/** The built-in index: objects by `metadata.namespace` (empty string for cluster-scoped ones). */
export const NAMESPACE_INDEX = 'namespace';

/** Maps an object to the index values it should be found under. */
export type IndexFunc<T> = (obj: T) => string[];

/**
 * A read view of an informer's cache with secondary indexes (client-go's
 * cache.Indexer). Unless `copies` says otherwise, objects are shared with the
 * informer: treat them as read-only.
 */
export interface Indexer<T> {
  /** Whether every read returns a fresh copy (a compact cache decodes one) that the reader may change. */
  readonly copies: boolean;
  get(key: string): T | undefined;
  list(): T[];
  keys(): string[];
  /** Objects whose index function returned `value`; throws for an unknown index. */
  byIndex(index: string, value: string): T[];
  /** The keys of those objects, without reading the objects. */
  keysByIndex(index: string, value: string): string[];
  /** Adds an index, built at once over the objects already cached. */
  addIndex(name: string, fn: IndexFunc<T>): void;
  /**
   * Keeps `summarize(obj)` of every cached object, by key, in step with the cache: what a reader
   * of every object needs (a metrics scrape, a plan), without reading each object whole.
   */
  addSummary<V>(summarize: (obj: T) => V): ReadonlyMap<string, V>;
}

interface Index<T> {
  fn: IndexFunc<T>;
  /** index value -> the key of the one object under it, or the keys of several (most values, such as an external name, have one). */
  values: Map<string, string | Set<string>>;
}

interface Summary<T> {
  summarize: (obj: T) => unknown;
  values: Map<string, unknown>;
}

/**
 * The informer's store: objects by key, plus every index and summary kept in step on each write.
 * With a codec (a compact cache) each object is kept encoded, and every read decodes a copy.
 */
export class ObjectCache<T extends ObjectWithMetadata> implements Indexer<T> {
  private readonly objects = new Map<string, T | string>();
  private readonly indexes = new Map<string, Index<T>>();
  private readonly summaries: Summary<T>[] = [];
  private readonly codec: ObjectCodec<T> | undefined;

  constructor(codec?: ObjectCodec<T>, options: { namespaceIndex?: boolean } = {}) {
    this.codec = codec;
    if (options.namespaceIndex ?? true) this.addIndex(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
  }

  get copies(): boolean {
    return this.codec !== undefined;
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    const stored = this.objects.get(key);
    return stored === undefined ? undefined : this.read(stored);
  }

  list(): T[] {
    return Array.from(this.objects.values(), (stored) => this.read(stored));
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  *entries(): IterableIterator<[string, T]> {
    for (const [key, stored] of this.objects) yield [key, this.read(stored)];
  }

  byIndex(index: string, value: string): T[] {
    return this.keysByIndex(index, value)
      .map((key) => this.get(key))
      .filter((obj): obj is T => obj !== undefined);
  }

  keysByIndex(index: string, value: string): string[] {
    const found = this.indexes.get(index);
    if (!found) throw new Error(`no index named ${JSON.stringify(index)}`);
    const keys = found.values.get(value);
    return keys === undefined ? [] : typeof keys === 'string' ? [keys] : [...keys];
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name)) throw new Error(`index ${JSON.stringify(name)} already exists`);
    const index: Index<T> = { fn, values: new Map() };
    this.indexes.set(name, index);
    for (const [key, obj] of this.entries()) this.indexValues(index, key, fn(obj));
  }

  addSummary<V>(summarize: (obj: T) => V): ReadonlyMap<string, V> {
    const summary: Summary<T> = { summarize, values: new Map() };
    for (const [key, obj] of this.entries()) summary.values.set(key, summarize(obj));
    this.summaries.push(summary);
    return summary.values as Map<string, V>;
  }

  /** Stores `obj` and returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const stored = this.objects.get(key);
    const old = stored === undefined ? undefined : this.read(stored);
    this.objects.set(key, this.codec ? this.codec.encode(obj) : obj);
    for (const index of this.indexes.values()) {
      const values = index.fn(obj);
      if (old) {
        const oldValues = index.fn(old);
        // Left as it is: the index keeps the key it holds, the one the objects are stored under,
        // rather than a copy of it for each update (most updates change no index value).
        if (sameValues(oldValues, values)) continue;
        this.unindexValues(index, key, oldValues);
      }
      this.indexValues(index, key, values);
    }
    for (const summary of this.summaries) summary.values.set(key, summary.summarize(obj));
    return old;
  }

  /** Removes the object under `key` and returns it. */
  delete(key: string): T | undefined {
    const stored = this.objects.get(key);
    if (stored === undefined) return undefined;
    const old = this.read(stored);
    for (const index of this.indexes.values()) this.unindexValues(index, key, index.fn(old));
    for (const summary of this.summaries) summary.values.delete(key);
    this.objects.delete(key);
    return old;
  }

  private read(stored: T | string): T {
    // Without a codec nothing is stored as a string: every object is kept as it is.
    return this.codec && typeof stored === 'string' ? this.codec.decode(stored) : (stored as T);
  }

  private indexValues(index: Index<T>, key: string, values: readonly string[]): void {
    for (const value of values) {
      const keys = index.values.get(value);
      if (keys === undefined || keys === key) index.values.set(value, key);
      else if (typeof keys === 'string') index.values.set(value, new Set([keys, key]));
      else keys.add(key);
    }
  }

  private unindexValues(index: Index<T>, key: string, values: readonly string[]): void {
    for (const value of values) {
      const keys = index.values.get(value);
      if (keys === key) index.values.delete(value);
      else if (keys instanceof Set) {
        keys.delete(key);
        if (keys.size === 1) index.values.set(value, keys.values().next().value!);
      }
    }
  }
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
