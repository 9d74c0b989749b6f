import { objectKey, type ObjectWithMetadata } from './object-key.js';

/** The built-in index: objects by `metadata.namespace` (empty string for cluster-scoped ones). */
export const NAMESPACE_INDEX = 'namespace';

/** Maps an object to the index values it should be found under. */
export type IndexFunc<T> = (obj: T) => string[];

/**
 * A read view of an informer's cache with secondary indexes (client-go's
 * cache.Indexer). Objects are shared with the informer: treat them as read-only.
 */
export interface Indexer<T> {
  get(key: string): T | undefined;
  list(): T[];
  keys(): string[];
  /** Objects whose index function returned `value`; throws for an unknown index. */
  byIndex(index: string, value: string): T[];
  /** Adds an index, built at once over the objects already cached. */
  addIndex(name: string, fn: IndexFunc<T>): void;
}

interface Index<T> {
  fn: IndexFunc<T>;
  /** index value -> keys of the objects under it */
  values: Map<string, Set<string>>;
}

/** The informer's store: objects by key, plus every index kept in step on each write. */
export class ObjectCache<T extends ObjectWithMetadata> implements Indexer<T> {
  private readonly objects = new Map<string, T>();
  private readonly indexes = new Map<string, Index<T>>();

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  entries(): IterableIterator<[string, T]> {
    return this.objects.entries();
  }

  byIndex(index: string, value: string): T[] {
    const found = this.indexes.get(index);
    if (!found) throw new Error(`no index named ${JSON.stringify(index)}`);
    const keys = found.values.get(value);
    if (!keys) return [];
    return [...keys].map((key) => this.objects.get(key)).filter((obj): obj is T => obj !== undefined);
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexes.has(name)) throw new Error(`index ${JSON.stringify(name)} already exists`);
    const index: Index<T> = { fn, values: new Map() };
    this.indexes.set(name, index);
    for (const [key, obj] of this.objects) this.indexObject(index, key, obj);
  }

  /** Stores `obj` and returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (old) for (const index of this.indexes.values()) this.unindexObject(index, key, old);
    this.objects.set(key, obj);
    for (const index of this.indexes.values()) this.indexObject(index, key, obj);
    return old;
  }

  /** Removes the object under `key` and returns it. */
  delete(key: string): T | undefined {
    const old = this.objects.get(key);
    if (!old) return undefined;
    for (const index of this.indexes.values()) this.unindexObject(index, key, old);
    this.objects.delete(key);
    return old;
  }

  private indexObject(index: Index<T>, key: string, obj: T): void {
    for (const value of index.fn(obj)) {
      let keys = index.values.get(value);
      if (!keys) index.values.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindexObject(index: Index<T>, key: string, obj: T): void {
    for (const value of index.fn(obj)) {
      const keys = index.values.get(value);
      keys?.delete(key);
      if (keys?.size === 0) index.values.delete(value);
    }
  }
}
