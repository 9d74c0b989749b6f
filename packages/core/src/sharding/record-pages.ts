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

/**
 * Every Bucket or Table of one kind (that `labelSelector` selects) as `ShardRecord`s, listed a page of `limit` at a time: the
 * assigner's full pass reads the whole cluster this way and keeps none of it afterwards. A
 * continue token that expired between pages (410) fails the listing; the pass is then retried.
 */
export async function* shardRecordPages(rest: KubeRest, kind: ManagedKindName, pool: StringPool, options: { limit: number; labelSelector?: string }, signal?: AbortSignal): AsyncGenerator<ShardRecordPage> {
  let token: string | undefined;
  do {
    const query = new URLSearchParams({
      limit: String(options.limit),
      ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
      ...(token !== undefined ? { continue: token } : {}),
    });
    const page = await rest.get<ListPage>(`${k8orPath(kind, undefined)}?${query.toString()}`, signal);
    if (page === undefined) throw new Error(`the API server does not serve ${kind} objects`);
    yield { records: (page.items ?? []).map((item) => shardRecordOf(kind, item, pool)), resourceVersion: page.metadata?.resourceVersion };
    token = page.metadata?.continue || undefined;
  } while (token !== undefined);
}
