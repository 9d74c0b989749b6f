import type { KubeAccess } from '../kube/access.js';
import type { Logger } from 'pino';
import { Backoff } from './backoff.js';
import { compactJsonCodec } from './compact-codec.js';
import { ObjectCache, type Indexer } from './indexer.js';
import { objectKey, type ObjectWithMetadata } from './object-key.js';
import { KubeApiError, requestJson, resourcePath } from './request.js';
import { sleepUnlessAborted } from '../util/sleep.js';
import { openWatchStream, type WatchStreamEnd } from './watch-stream.js';

/** Why one watch request ended. */
export type WatchEndReason =
  /** The server closed the stream (its timeoutSeconds passed, or it went away). */
  | 'closed'
  /** 410 Gone: our resourceVersion is older than the server's history; the informer relists. */
  | 'gone'
  /** The stream went silent, or outlived its timeout: presumed dead and replaced. */
  | 'stalled'
  | 'error'
  | 'stopped';

/** Counters an informer reports (see `CoreMetrics.informerMetrics`). */
export interface InformerMetricsProvider {
  listed(): void;
  watchEnded(reason: WatchEndReason): void;
  event(type: 'add' | 'update' | 'delete' | 'resync'): void;
}

export interface InformerOptions<T extends ObjectWithMetadata = ObjectWithMetadata> {
  kubeConfig: KubeAccess;
  /** API group; `''` for the core group (`/api/v1`). */
  group: string;
  version: string;
  plural: string;
  /** Watch one namespace; all namespaces when omitted. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Emit 'resync' for every cached object this often; never when 0 or omitted. */
  resyncPeriodMs?: number;
  logger?: Logger;
  metrics?: InformerMetricsProvider;
  /**
   * Server-side timeout of each watch request. Default: random in [300, 600) s,
   * like client-go, so informers of one process do not all reconnect together.
   */
  watchTimeoutSeconds?: number;
  /** How long past its timeout a watch may stay open before the client aborts it as dead. Default 30 s. */
  watchGuardMs?: number;
  /**
   * A watch that delivers nothing, not even a bookmark, for this long is presumed
   * dead and replaced. Default 150 s: API servers send a bookmark about every minute.
   */
  watchInactivityMs?: number;
  /** Reconnect backoff (jittered exponential); defaults 200 ms .. 30 s. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** List page size (`limit`); default 500. */
  pageSize?: number;
  /**
   * Applied to every listed and watched object before it is cached and handed
   * to the handlers (client-go's `SetTransform`), so the cache holds only what
   * its readers need. Default `withoutUnreadMetadata`. It may change the object
   * it gets, which is the informer's own decoded copy.
   */
  transform?: (obj: T) => T;
  /**
   * Keep each object deflated (compactJsonCodec): a fraction of the heap (docs/benchmarks.md), at the cost of a
   * decode per read, and every read is a fresh copy. For caches of many objects read one at a time.
   */
  compact?: boolean;
  /** Keep the built-in index of objects by namespace (`NAMESPACE_INDEX`); default true. Off, a cache of every object of the cluster that nobody reads by namespace saves an entry per object. */
  namespaceIndex?: boolean;
}

/** Where `kubectl apply` keeps the whole object it last applied, as JSON text. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The informers' default transform: drops from the metadata what is as big as
 * the object and that nothing in k8or reads, `managedFields` and kubectl
 * apply's `last-applied-configuration` annotation. The engine writes merge
 * patches (annotations merge key by key, so the ones not sent stay) and PUTs
 * on /status with identity and status only, so a cached copy without them
 * never erases them.
 */
export function withoutUnreadMetadata<T extends ObjectWithMetadata>(obj: T): T {
  withoutManagedFields(obj);
  const metadata = obj.metadata as (NonNullable<T['metadata']> & { annotations?: Record<string, string> }) | undefined;
  const annotations = metadata?.annotations;
  if (!annotations || !(LAST_APPLIED_ANNOTATION in annotations)) return obj;
  const { [LAST_APPLIED_ANNOTATION]: _dropped, ...kept } = annotations;
  obj.metadata = { ...metadata, annotations: kept } as T['metadata'];
  return obj;
}

/**
 * Drops `metadata.managedFields`: the API server's bookkeeping of which field
 * manager set which field, about half of a typical object's JSON, and nothing
 * k8or reads. Writes are merge patches and status updates, and an update that
 * leaves managedFields out keeps the stored ones.
 */
export function withoutManagedFields<T extends ObjectWithMetadata>(obj: T): T {
  if (!obj.metadata || !('managedFields' in obj.metadata)) return obj;
  // A copy without the key rather than `delete`, which would leave the metadata in V8's slower dictionary mode.
  const { managedFields: _dropped, ...metadata } = obj.metadata as NonNullable<T['metadata']> & { managedFields?: unknown };
  obj.metadata = metadata as T['metadata'];
  return obj;
}

/**
 * A list-then-watch cache of one resource that keeps itself up to date and
 * never ends on its own: every watch end or error reconnects with backoff,
 * and a `410 Gone` relists and emits the difference.
 */
export interface Informer<T extends ObjectWithMetadata> {
  /** Starts listing and watching; resolves once the initial list is in the cache (or the informer was stopped). */
  start(): Promise<void>;
  stop(): void;
  hasSynced(): boolean;
  on(event: 'add' | 'update' | 'delete', handler: (obj: T, old?: T) => void): void;
  /** Periodic resync of every cached object. */
  on(event: 'resync', handler: (obj: T) => void): void;
  /** Errors are reported, never fatal: the informer reconnects. */
  on(event: 'error', handler: (err: unknown) => void): void;
  readonly cache: Indexer<T>;
  /** The resourceVersion the next watch resumes from. */
  lastResourceVersion(): string | undefined;
  /**
   * Lists and watches by `labelSelector` from now on: ends the watch, lists again, and emits the
   * difference (an object the new selector leaves out is deleted from the cache, one it adds is
   * added); objects both select keep their place without an event.
   */
  reselect(labelSelector: string | undefined): void;
  /**
   * Also lists and watches each of `sources` into the same cache, beside the informer's own
   * selection, whose watch goes on undisturbed (a source's list of thousands of objects holds up
   * none of its events). Replaces the sources given before: one no longer given stops, and the
   * objects it `owns` leave the cache (each emitted as deleted). Sources must select apart from the
   * informer's own selection, and an object may move from a source's selection into the own one,
   * never back: a source's event or list item for an object whose cached copy it does not `own`
   * (the own watch brought it since) is left out, as is what its relist finds missing.
   */
  watchAlso(sources: readonly WatchSource<T>[]): void;
}

/** A selection an informer also lists and watches (`Informer.watchAlso`). */
export interface WatchSource<T> {
  labelSelector: string;
  /** Whether `obj` is in this selection (its labels match `labelSelector`). */
  owns(obj: T): boolean;
}

/** Creates an informer (not started) for one resource. */
export function createInformer<T extends ObjectWithMetadata>(options: InformerOptions<T>): Informer<T> {
  return new ResourceInformer<T>(options);
}

interface WatchEnd {
  reason: WatchEndReason;
  error?: unknown;
  /** Events the watch delivered, bookmarks included, ERROR not. */
  events: number;
}

type ObjectHandler<T> = (obj: T, old?: T) => void;
type ErrorHandler = (err: unknown) => void;

/** How list and watch requests show up in audit logs. */
const USER_AGENT = 'k8or-informer';

const WATCH_EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

class ResourceInformer<T extends ObjectWithMetadata> implements Informer<T> {
  private readonly options: InformerOptions<T>;
  private readonly transform: (obj: T) => T;
  private readonly path: string;
  private readonly store: ObjectCache<T>;
  private readonly backoff: Backoff;
  private readonly handlers = {
    add: [] as ObjectHandler<T>[],
    update: [] as ObjectHandler<T>[],
    delete: [] as ObjectHandler<T>[],
    resync: [] as ObjectHandler<T>[],
    error: [] as ErrorHandler[],
  };

  private started: Promise<void> | undefined;
  private resolveStarted: (() => void) | undefined;
  private synced = false;
  private stopped = false;
  /** Aborted by stop(), which cancels a list in flight and ends a backoff wait. */
  private readonly lifetime = new AbortController();
  private resourceVersion: string | undefined;
  private labelSelector: string | undefined;
  /** The selector changed: list again before the next watch. */
  private relistRequested = false;
  private abortWatch: (() => void) | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  /** Set on a source's informer (`watchAlso`): the informer whose cache and handlers it feeds, and what it owns there. */
  private readonly feeds: { informer: ResourceInformer<T>; source: WatchSource<T> } | undefined;
  /** The sources this informer also watches, by label selector. */
  private readonly sources = new Map<string, ResourceInformer<T>>();

  constructor(options: InformerOptions<T>, feeds?: { informer: ResourceInformer<T>; source: WatchSource<T> }) {
    this.options = options;
    this.feeds = feeds;
    this.labelSelector = options.labelSelector;
    this.transform = options.transform ?? withoutUnreadMetadata;
    this.store = feeds ? feeds.informer.store : new ObjectCache<T>(options.compact ? compactJsonCodec<T>() : undefined, { namespaceIndex: options.namespaceIndex ?? true });
    this.path = resourcePath(options.group, options.version, options.plural, options.namespace);
    this.backoff = new Backoff(options.backoffInitialMs ?? 200, options.backoffMaxMs ?? 30_000);
  }

  get cache(): Indexer<T> {
    return this.store;
  }

  on(event: 'add' | 'update' | 'delete' | 'resync', handler: ObjectHandler<T>): void;
  on(event: 'error', handler: ErrorHandler): void;
  on(event: keyof ResourceInformer<T>['handlers'], handler: ObjectHandler<T> | ErrorHandler): void {
    (this.handlers[event] as (ObjectHandler<T> | ErrorHandler)[]).push(handler);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  start(): Promise<void> {
    if (!this.started) {
      if (this.stopped) return (this.started = Promise.resolve());
      this.started = new Promise((resolve) => (this.resolveStarted = resolve));
      const period = this.options.resyncPeriodMs;
      if (period && period > 0) {
        this.resyncTimer = setInterval(() => this.resync(), period);
        this.resyncTimer.unref();
      }
      void this.run();
    }
    return this.started;
  }

  reselect(labelSelector: string | undefined): void {
    if (labelSelector === this.labelSelector) return;
    this.labelSelector = labelSelector;
    this.relistRequested = true;
    this.abortWatch?.();
  }

  watchAlso(sources: readonly WatchSource<T>[]): void {
    const wanted = new Map(sources.map((source) => [source.labelSelector, source]));
    for (const [labelSelector, informer] of [...this.sources]) {
      if (wanted.has(labelSelector)) continue;
      informer.stop();
      this.sources.delete(labelSelector);
      this.dropCached(() => true, (cached) => informer.feeds!.source.owns(cached));
    }
    for (const [labelSelector, source] of wanted) {
      if (this.sources.has(labelSelector) || this.stopped) continue;
      const { resyncPeriodMs: _own, ...options } = this.options;
      const informer = new ResourceInformer<T>({ ...options, labelSelector }, { informer: this, source });
      this.sources.set(labelSelector, informer);
      void informer.start();
    }
  }

  /** A source's informer: whether to leave out its event or list item `obj`, as the object's cached copy is not its own (the own watch brought it since). */
  private yields(obj: T): boolean {
    if (!this.feeds) return false;
    const cached = this.store.get(objectKey(obj));
    return cached !== undefined && !this.feeds.source.owns(cached);
  }

  /** Whether a relist may delete the cached `obj` it did not find: a source's informer, only what it owns; the own one, nothing a source owns. */
  private mayDropUnlisted(obj: T): boolean {
    if (this.feeds) return this.feeds.source.owns(obj);
    for (const informer of this.sources.values()) if (informer.feeds!.source.owns(obj)) return false;
    return true;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const informer of this.sources.values()) informer.stop();
    this.sources.clear();
    this.lifetime.abort();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    this.abortWatch?.();
    this.resolveStarted?.();
  }

  /** The informer's life: list when needed, then watch, forever, until stopped. */
  private async run(): Promise<void> {
    let needList = true;
    let freshFromList = false;
    while (!this.stopped) {
      if (this.relistRequested) {
        this.relistRequested = false;
        needList = true;
      }
      if (needList) {
        try {
          await this.listAndReplace();
          needList = false;
          freshFromList = true;
        } catch (error) {
          if (this.stopped) break;
          this.reportError(error);
          await this.sleep(this.backoff.next());
          continue;
        }
      }
      // Reselected while listing: that list used the old selector.
      if (this.relistRequested) continue;
      const end = await this.watchOnce();
      if (this.stopped) break;
      if (this.relistRequested) continue;
      this.options.metrics?.watchEnded(end.reason);
      if (end.reason === 'gone') {
        this.options.logger?.info({ resource: this.path, resourceVersion: this.resourceVersion }, 'watch history expired (410 Gone); relisting');
        needList = true;
        // Relist at once, unless the server answered 410 to the version we had just listed.
        if (freshFromList && end.events === 0) await this.sleep(this.backoff.next());
        continue;
      }
      if (end.events > 0) freshFromList = false;
      if (end.error !== undefined) this.reportError(end.error);
      else this.options.logger?.debug({ resource: this.path, reason: end.reason }, 'watch ended; reconnecting');
      if (end.events > 0 || end.reason === 'closed') this.backoff.reset();
      await this.sleep(this.backoff.next());
    }
  }

  /**
   * Lists every object (in pages) and replaces the cache, emitting the difference. Each page goes
   * into the cache as it comes, so a list of many objects never holds them all uncompacted at once;
   * what the list did not name is deleted once it is complete.
   */
  private async listAndReplace(): Promise<void> {
    const pageSize = this.options.pageSize ?? 500;
    const listed = new Set<string>();
    const resourceVersion = await this.listPages(pageSize, listed).catch((error: unknown) => {
      // A continue token can expire between pages (410): list again in one go.
      if (error instanceof KubeApiError && error.status === 410) {
        listed.clear();
        return this.listPages(undefined, listed);
      }
      throw error;
    });
    if (this.stopped) return;
    this.replaceRest(listed, resourceVersion);
    this.options.metrics?.listed();
  }

  /** Lists in pages of `limit` (all at once when undefined), putting each page into the cache and its keys into `listed`; the list's resourceVersion. */
  private async listPages(limit: number | undefined, listed: Set<string>): Promise<string | undefined> {
    let resourceVersion: string | undefined;
    let continueToken: string | undefined;
    const labelSelector = this.labelSelector;
    do {
      const query = {
        limit: limit === undefined ? undefined : String(limit),
        continue: continueToken,
        labelSelector,
        fieldSelector: this.options.fieldSelector,
      };
      const body = await requestJson(this.options.kubeConfig, 'GET', this.path, { query, userAgent: USER_AGENT, signal: this.lifetime.signal });
      if (this.stopped) return undefined;
      const list = asRecord(body);
      const metadata = asRecord(list.metadata);
      const itemKind = typeof list.kind === 'string' && list.kind.endsWith('List') ? list.kind.slice(0, -4) : undefined;
      const apiVersion = typeof list.apiVersion === 'string' ? list.apiVersion : undefined;
      for (const raw of Array.isArray(list.items) ? list.items : []) {
        const item = raw as T;
        // Lists of built-in kinds omit each item's apiVersion and kind; watch events carry them.
        if (!item.apiVersion && apiVersion) item.apiVersion = apiVersion;
        if (!item.kind && itemKind) item.kind = itemKind;
        const obj = this.transform(item);
        if (this.yields(obj)) continue;
        listed.add(objectKey(obj));
        const old = this.store.set(obj);
        if (!old) this.emit('add', obj);
        else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit('update', obj, old);
      }
      resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
      continueToken = typeof metadata.continue === 'string' && metadata.continue !== '' ? metadata.continue : undefined;
    } while (continueToken && !this.stopped);
    return resourceVersion;
  }

  /** After a complete list: deletes (and emits) what it did not name, and resumes from its resourceVersion. */
  private replaceRest(listed: ReadonlySet<string>, resourceVersion: string | undefined): void {
    const selective = this.feeds !== undefined || this.sources.size > 0;
    this.dropCached((key) => !listed.has(key), selective ? (cached) => this.mayDropUnlisted(cached) : undefined);
    this.resourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      this.resolveStarted?.();
    }
  }

  /** Deletes (and emits) each cached object whose key `candidate` picks and, where given, `drop` too (only those are read). */
  private dropCached(candidate: (key: string) => boolean, drop?: (cached: T) => boolean): void {
    for (const key of this.store.keys()) {
      if (!candidate(key)) continue;
      if (drop) {
        const cached = this.store.get(key);
        if (!cached || !drop(cached)) continue;
      }
      const old = this.store.delete(key);
      if (old) this.emit('delete', old);
    }
  }

  /** One watch request from the last resourceVersion, until it ends for any reason. */
  private watchOnce(): Promise<WatchEnd> {
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? Math.floor(300 * (1 + Math.random()));
    const guardMs = timeoutSeconds * 1000 + (this.options.watchGuardMs ?? 30_000);

    return new Promise<WatchEnd>((resolve) => {
      let events = 0;
      let settled = false;
      const finish = (end: Omit<WatchEnd, 'events'>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(guard);
        this.abortWatch = undefined;
        // Only ever called after the executor has returned, so `stream` is set.
        stream.abort();
        resolve({ ...end, events });
      };
      // The server should end the watch after timeoutSeconds; if it has not, the stream is dead.
      const guard = setTimeout(() => finish({ reason: 'stalled' }), guardMs);
      this.abortWatch = () => finish({ reason: 'stopped' });
      const stream = openWatchStream(this.options.kubeConfig, this.path, {
        query: {
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: 'true',
          timeoutSeconds: String(timeoutSeconds),
          labelSelector: this.labelSelector,
          fieldSelector: this.options.fieldSelector,
        },
        inactivityMs: this.options.watchInactivityMs ?? 150_000,
        userAgent: USER_AGENT,
        onEvent: (type, obj) => {
          if (settled) return;
          if (type !== 'ERROR') events++;
          const end = this.handleWatchEvent(type, obj);
          if (end) finish(end);
        },
      });
      void stream.ended.then((end) => finish(classifyWatchEnd(end)));
    });
  }

  /** Applies one watch event to the cache; returns how the watch ends if the event ends it. */
  private handleWatchEvent(type: string, raw: unknown): Omit<WatchEnd, 'events'> | undefined {
    if (!WATCH_EVENT_TYPES.has(type)) return undefined;
    if (type === 'ERROR') {
      const status = asRecord(raw);
      const code = typeof status.code === 'number' ? status.code : 0;
      if (code === 410) return { reason: 'gone' };
      const message = typeof status.message === 'string' ? status.message : JSON.stringify(raw);
      return { reason: 'error', error: new KubeApiError(`watch ${this.path}: ${message}`, code, typeof status.reason === 'string' ? status.reason : undefined) };
    }
    if (type === 'BOOKMARK') {
      const resourceVersion = (raw as T).metadata?.resourceVersion;
      if (resourceVersion) this.resourceVersion = resourceVersion;
      return undefined;
    }
    const obj = this.transform(raw as T);
    const resourceVersion = obj.metadata?.resourceVersion;
    if (this.yields(obj)) {
      if (resourceVersion) this.resourceVersion = resourceVersion;
      return undefined;
    }
    if (type === 'DELETED') {
      const old = this.store.delete(objectKey(obj));
      if (resourceVersion) this.resourceVersion = resourceVersion;
      if (old) this.emit('delete', obj);
      return undefined;
    }
    const old = this.store.set(obj);
    if (resourceVersion) this.resourceVersion = resourceVersion;
    if (!old) this.emit('add', obj);
    else if (old.metadata?.resourceVersion !== resourceVersion) this.emit('update', obj, old);
    return undefined;
  }

  private resync(): void {
    if (!this.synced || this.stopped) return;
    for (const obj of this.store.list()) this.emit('resync', obj);
  }

  private emit(event: 'add' | 'update' | 'delete' | 'resync', obj: T, old?: T): void {
    if (this.feeds) {
      this.feeds.informer.emit(event, obj, old);
      return;
    }
    this.options.metrics?.event(event);
    for (const handler of this.handlers[event]) {
      try {
        handler(obj, old);
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  private reportError(error: unknown): void {
    if (this.feeds) {
      this.feeds.informer.reportError(error);
      return;
    }
    this.options.logger?.warn({ err: error, resource: this.path }, 'informer error; it keeps going');
    for (const handler of this.handlers.error) {
      try {
        handler(error);
      } catch {
        // An error handler that throws must not stop the informer.
      }
    }
  }

  /** Waits `ms`, or less if the informer is stopped meanwhile. */
  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.lifetime.signal);
  }
}

function classifyWatchEnd(end: WatchStreamEnd): Omit<WatchEnd, 'events'> {
  switch (end.reason) {
    case 'closed':
      return { reason: 'closed' };
    case 'inactive':
      return { reason: 'stalled' };
    case 'aborted':
      return { reason: 'stopped' };
    case 'error':
      return end.error instanceof KubeApiError && end.error.status === 410 ? { reason: 'gone' } : { reason: 'error', error: end.error };
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}
