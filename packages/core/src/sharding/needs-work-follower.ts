import type { ManagedKindName } from '@k8or/api';
import type { KubeAccess } from '../kube/access.js';
import type { KubeRest } from '../kube/rest.js';
import { readObjectAwaitsItsSlot } from '../policy/drift-schedule.js';
import { watchPendingEdits, type PendingEditsWatch } from './pending-edits-watch.js';
import { ShardRecordPager } from './record-pages.js';
import type { ShardRecord, StringPool } from './shard-record.js';

export interface NeedsWorkFollowerOptions {
  rest: KubeRest;
  kubeConfig: KubeAccess;
  kind: ManagedKindName;
  /** The objects to read and follow: a shard's (`<shard label> in (…)`). */
  labelSelector: string;
  pool: StringPool;
  /** Objects per list request. */
  pageSize: number;
}

/** Whether a shard must work the object at once: all but one in sync, waiting for its drift-check slot. */
export function needsWorkNow(object: unknown): boolean {
  return !readObjectAwaitsItsSlot(object);
}

/**
 * The objects of one kind that a label selector selects and that need work at once (`needsWorkNow`:
 * a user's edit, a delete, a failed reconcile to retry), read a page at a time, then followed by a
 * watch from that read, so each that comes to need work later is seen as it does. The assigner
 * starts one on a shard that went silent, before its Lease has expired, and on a dead shard it had
 * not started one on: when the shard is dead, those objects move first, without waiting for a read
 * of all its objects.
 *
 * Until `deliverTo` is called it keeps the newest record of each such object; from then on it hands
 * each page and each later object to the callback as it comes. It moves nothing itself, and a read
 * or watch that fails only ends it (`following` is then false): the assigner's pass over a dead
 * shard's objects moves every one of them anyway.
 */
export class NeedsWorkFollower {
  /** Resolves once the read has ended: true when every page was read and the watch from it opened. */
  readonly ready: Promise<boolean>;
  readonly #options: NeedsWorkFollowerOptions;
  readonly #stopping = new AbortController();
  readonly #waiting = new Map<string, ShardRecord>();
  #deliver: ((records: ShardRecord[]) => void) | undefined;
  #watch: PendingEditsWatch | undefined;
  #following = false;

  constructor(options: NeedsWorkFollowerOptions) {
    this.#options = options;
    this.ready = this.#read();
  }

  /** It has read every page and its watch has followed every write since: what it holds (or handed on) is complete. */
  get following(): boolean {
    return this.#following;
  }

  /** Hands what it holds to `deliver` now, and every later page or object as it comes. */
  deliverTo(deliver: (records: ShardRecord[]) => void): void {
    this.#deliver = deliver;
    const held = [...this.#waiting.values()];
    this.#waiting.clear();
    if (held.length > 0) deliver(held);
  }

  /** Ends the read and the watch; resolves once both have. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#watch?.stop();
    await this.ready;
    await this.#watch?.ended;
  }

  async #read(): Promise<boolean> {
    const { rest, kubeConfig, kind, labelSelector, pool, pageSize } = this.#options;
    const signal = this.#stopping.signal;
    try {
      const pager = new ShardRecordPager(rest, kind, pool, { limit: pageSize, labelSelector, keep: needsWorkNow }, signal);
      let listedAt: string | undefined;
      for (let page = await pager.next(); page !== undefined; page = await pager.next()) {
        listedAt ??= page.resourceVersion;
        this.#take(page.records);
      }
      if (listedAt === undefined || signal.aborted) return false;
      const watch = watchPendingEdits({ kubeConfig, kind, labelSelector, fromResourceVersion: listedAt, pool, onPending: (record) => this.#take([record]) });
      this.#watch = watch;
      this.#following = true;
      void watch.ended.then(() => (this.#following = false));
      return true;
    } catch {
      return false;
    }
  }

  #take(records: ShardRecord[]): void {
    if (records.length === 0) return;
    if (this.#deliver) this.#deliver(records);
    else for (const record of records) this.#waiting.set(record.cacheKey, record);
  }
}
