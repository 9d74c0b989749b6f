import type { ManagedKindName } from '@k8or/api';
import { k8orPath } from '../kube/paths.js';
import type { KubeRest } from '../kube/rest.js';
import { shardRecordOf, type ShardRecord, type StringPool } from './shard-record.js';

interface ListPage {
  items?: unknown[];
  metadata?: { continue?: string; resourceVersion?: string };
}

/** One page of records, and the resourceVersion of the list it belongs to (every page of one list has the first page's). */
export interface ShardRecordPage {
  records: ShardRecord[];
  resourceVersion: string | undefined;
}

export interface ShardRecordPagerOptions {
  limit: number;
  labelSelector?: string;
  keep?: (object: unknown) => boolean;
}

/**
 * Every Bucket or Table of one kind (that `labelSelector` selects; of those, the ones `keep` keeps,
 * judged on the object as read) as `ShardRecord`s, listed a page of `limit` at a time: the assigner's full pass reads the whole cluster this way and keeps
 * none of it. A continue token that expired between pages (410) fails the listing; the pass is
 * then retried.
 *
 * A page is read and made into records by a call of `next()` that returns it and keeps nothing of
 * it: no suspended frame (an async generator's, say) holds a decoded page while the next one is
 * read. A suspended async function keeps what its local variables hold until they are
 * overwritten, and a page kept through the next page's read outlives two young-generation
 * collections and is promoted, with the old generation, and the RSS, growing by it.
 */
export class ShardRecordPager {
  readonly #rest: KubeRest;
  readonly #kind: ManagedKindName;
  readonly #pool: StringPool;
  readonly #options: ShardRecordPagerOptions;
  readonly #signal: AbortSignal | undefined;
  #token: string | undefined;
  #last = false;

  constructor(rest: KubeRest, kind: ManagedKindName, pool: StringPool, options: ShardRecordPagerOptions, signal?: AbortSignal) {
    this.#rest = rest;
    this.#kind = kind;
    this.#pool = pool;
    this.#options = options;
    this.#signal = signal;
  }

  /** The next page, or undefined once the last was read. One call at a time. */
  async next(): Promise<ShardRecordPage | undefined> {
    if (this.#last) return undefined;
    const query = new URLSearchParams({
      limit: String(this.#options.limit),
      ...(this.#options.labelSelector !== undefined ? { labelSelector: this.#options.labelSelector } : {}),
      ...(this.#token !== undefined ? { continue: this.#token } : {}),
    });
    const page = await this.#rest.get<ListPage>(`${k8orPath(this.#kind, undefined)}?${query.toString()}`, this.#signal);
    if (page === undefined) throw new Error(`the API server does not serve ${this.#kind} objects`);
    this.#token = page.metadata?.continue || undefined;
    this.#last = this.#token === undefined;
    const items = page.items ?? [];
    const { keep } = this.#options;
    return { records: (keep ? items.filter(keep) : items).map((item) => shardRecordOf(this.#kind, item, this.#pool)), resourceVersion: page.metadata?.resourceVersion };
  }
}
