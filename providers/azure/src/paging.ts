import type { CloudCallOptions, ConnectionContext } from '@k8or/core';
import type { AzureClientTuning } from './clients.js';
import { callAzure } from './errors.js';

/** Internal options of the connectors; none is a user-facing setting. */
export interface AzureConnectorOptions extends AzureClientTuning {
  /**
   * Items per page of a listing (List Containers `maxresults`, Query Tables `$top`). Absent: Azure's
   * own (5,000 containers, 1,000 tables). Tests set it small to read many pages from few items.
   */
  listPageSize?: number;
}

/** One page of a listing and the continuation token of the next, if any. */
export interface ListingPage<T> {
  items: T[];
  continuationToken: string | undefined;
}

/**
 * The pages of an Azure listing, one at a time, each page request a call of its own through the
 * engine's call recorder, as GCS and Bigtable listings do: it takes its rate-limit token and is
 * counted and timed on its own, and the SDK's retries of that page take theirs (`retryTokenPolicy`).
 * Azure may answer any page with fewer items than asked, none included, and a continuation token:
 * only a page without one ends the listing. A failed page fails the listing.
 */
export async function* pagesOf<T>(
  context: Pick<ConnectionContext, 'recordCall'>,
  paced: CloudCallOptions,
  operation: string,
  page: (continuationToken: string | undefined) => Promise<ListingPage<T>>,
): AsyncGenerator<T[], void, undefined> {
  let continuationToken: string | undefined;
  do {
    const next = await callAzure(context, paced, operation, () => page(continuationToken));
    yield next.items;
    continuationToken = next.continuationToken || undefined;
  } while (continuationToken);
}

/** Every item of an Azure listing (`pagesOf`): a partial inventory is never taken for the whole. */
export async function everyPage<T>(
  context: Pick<ConnectionContext, 'recordCall'>,
  paced: CloudCallOptions,
  operation: string,
  page: (continuationToken: string | undefined) => Promise<ListingPage<T>>,
): Promise<T[]> {
  const items: T[] = [];
  for await (const next of pagesOf(context, paced, operation, page)) items.push(...next);
  return items;
}
