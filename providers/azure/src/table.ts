/**
 * Table -> Azure Table Storage table: observe, create, delete. A table has a name and nothing
 * else to set: PartitionKey and RowKey are fixed by Azure (the spec's key names and types only
 * document the mapping), and tables carry no metadata, so ownership rests on the persisted
 * external name and the engine's creation markers, and adoption is explicit.
 */
import { randomBytes } from 'node:crypto';
import type { TableClient, TableItem, TableServiceClient } from '@azure/data-tables';
import type { Table } from '@k8or/api';
import { DeletionBlockedError, NotOwnedError, ProviderError, TerminalError, type ApplyResult, type CallOptions, type ConnectionContext, type Connector, type ExternalClient, type InventoryContext, type InventoryItem, type Observation, type Presence, type ResourceIdentity } from '@k8or/core';
import { attemptsOf } from './attempt-count.js';
import { tableClient, tableServiceClient } from './clients.js';
import { clientSettings, type AzureCredential } from './config.js';
import { callAzure, hasCode } from './errors.js';
import { everyPage, pagesOf, type AzureConnectorOptions, type ListingPage } from './paging.js';
import { AzureServices } from './rate-limits.js';
import { publicUrl } from './public-url.js';
import { unappliedTableSettings } from './unapplied.js';

/** The keys Azure gives every table: a string PartitionKey and a string RowKey. */
const AZURE_PARTITION_KEY = { name: 'PartitionKey', type: 'string' } as const;
const AZURE_ROW_KEY = { name: 'RowKey', type: 'string' } as const;

/** An OData string literal: single quotes doubled. */
const odataString = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** One page of Query Tables (one request), from `continuationToken` (NextTableName) when given. */
async function queryTablesPage(
  service: TableServiceClient,
  signal: AbortSignal,
  continuationToken: string | undefined,
  query: { filter?: string; maxPageSize?: number | undefined },
): Promise<ListingPage<TableItem>> {
  const listing = service.listTables({ ...(query.filter ? { queryOptions: { filter: query.filter } } : {}), abortSignal: signal });
  const pages = listing.byPage({ ...(continuationToken ? { continuationToken } : {}), ...(query.maxPageSize ? { maxPageSize: query.maxPageSize } : {}) });
  const page = await pages.next();
  return page.done ? { items: [], continuationToken: undefined } : { items: [...page.value], continuationToken: page.value.continuationToken };
}

/**
 * The prefix of a table's identity marker. A table has no metadata, tags or creation time, so k8or
 * gives each table it creates one stored access policy of its own, named with a random part
 * (`k8or-id-<16 hex>`), that grants nothing (it expired in 2000). A table made again under the
 * name, by anyone, lacks it.
 */
export const IDENTITY_POLICY_PREFIX = 'k8or-id-';
const EXPIRED = new Date('2000-01-01T00:00:00Z');

/** Codes of a refused access-policy call (a SAS may not read or set a table's ACL): the identity is then unknown, never an error. */
const ACL_REFUSED = ['AuthorizationFailure', 'AuthorizationPermissionMismatch', 'AuthorizationResourceTypeMismatch', 'AuthorizationServiceMismatch', 'Forbidden'];

/** Why a table reached through a SAS has no identity (ExternalClient.identityUnavailable). */
export const SAS_HOLDS_NO_IDENTITY = "the ProviderConfig's credentials are a shared access signature (`sasToken`, or a connection string's `SharedAccessSignature`), which may neither set nor read a table's access policies, where k8or keeps a table's identity";

/** One Azure table's client. */
export class AzureTableClient implements ExternalClient<Table> {
  readonly #service: TableServiceClient;
  readonly #table: TableClient;
  readonly #context: ConnectionContext;

  /** Set for SAS credentials: Get and Set Table ACL take Shared Key or Entra ID only, so no marker can be made or read. */
  readonly identityUnavailable: string | undefined;

  constructor(service: TableServiceClient, table: TableClient, context: ConnectionContext, credential: AzureCredential['kind']) {
    this.#service = service;
    this.#table = table;
    this.#context = context;
    this.identityUnavailable = credential === 'sas' ? SAS_HOLDS_NO_IDENTITY : undefined;
  }

  /** The identity marker (Get Table ACL), or undefined where the table has none or its ACL may not be read. */
  async #identity(call: CallOptions): Promise<ResourceIdentity | undefined> {
    try {
      const acl = await callAzure(this.#context, { service: AzureServices.tables, signal: call.signal }, 'GetTableACL', () => this.#table.getAccessPolicy({ abortSignal: call.signal }));
      const markers = [...acl].map((identifier) => identifier.id).filter((id) => id.startsWith(IDENTITY_POLICY_PREFIX)).sort();
      return markers.length > 0 ? { marker: markers.join(',') } : undefined;
    } catch (error) {
      if (hasCode(error, ...ACL_REFUSED)) return undefined;
      throw error;
    }
  }

  get #name(): string {
    return this.#context.externalName;
  }

  /** The table's URL: where its entities are addressed (never with a query string: no SAS is published). */
  get #url(): string {
    return `${publicUrl(this.#service.url).replace(/\/+$/, '')}/${this.#name}`;
  }

  /**
   * Query Tables for exactly this name (case-sensitive, as the name is persisted), page by page: Azure
   * may answer a page with no table and a NextTableName, and only the last page says "absent". Each
   * page is a recorded call with its token (`pagesOf`). A 403 is an error, never absence.
   */
  async #exists(call: CallOptions): Promise<boolean> {
    const filter = `TableName eq ${odataString(this.#name)}`;
    const pages = pagesOf(this.#context, { service: AzureServices.tables, signal: call.signal }, 'QueryTables', (token) => queryTablesPage(this.#service, call.signal, token, { filter }));
    for await (const tables of pages) {
      if (tables.some((table) => table.name === this.#name)) return true;
    }
    return false;
  }

  async observe(table: Table, call: CallOptions): Promise<Observation> {
    if (!(await this.#exists(call))) return { exists: false, upToDate: false, ready: false };
    const identity = await this.#identity(call);
    const settingIssues = unappliedTableSettings(table);
    // Nothing on the table itself can drift: it has no settings, no metadata and no tags.
    return {
      exists: true,
      ready: true,
      upToDate: true,
      diff: [],
      atProvider: { id: this.#url, url: this.#url },
      ownerTags: undefined,
      // Its identity is k8or's marker policy; Azure has no protection on a table: k8or enforces spec.deletionProtection itself.
      ...(identity ? { identity } : {}),
      protection: [],
      ...(settingIssues.length > 0 ? { settingIssues } : {}),
    };
  }

  /** Existence: observe's one Query Tables for the name. Tables carry no metadata: no owner tags to read. */
  async probe(_table: Table, call: CallOptions): Promise<Presence> {
    if (!(await this.#exists(call))) return { exists: false };
    const identity = await this.#identity(call);
    return { exists: true, ...(identity ? { identity } : {}), protection: [] };
  }

  /**
   * Create Table, then its identity marker (#mark). The SDK takes "already exists" (409) for success; here it is NotOwnedError,
   * since a table carries nothing that could prove it ours: the engine observes before it
   * creates, so a table found only now was made by someone else, or by an earlier attempt of
   * this very call that the SDK retried (a stall given up, a 5xx after the effect). Then the
   * outcome is unknown, not refused (`noEffect: false`), and the engine keeps create-pending.
   */
  async create(_table: Table, call: CallOptions): Promise<ApplyResult> {
    let status: number | undefined;
    let attempts: number | undefined;
    await callAzure(this.#context, { service: AzureServices.tables, signal: call.signal }, 'CreateTable', () =>
      this.#service.createTable(this.#name, {
        abortSignal: call.signal,
        onResponse: (response) => {
          status = response.status;
          attempts = attemptsOf(response.request);
        },
      }),
    );
    if (status === 409) {
      const refused = attempts === 1;
      const why = refused ? "nothing shows it is this object's" : "the SDK retried this create, so an earlier attempt may have made it, but nothing proves it is this object's";
      throw new NotOwnedError(`CreateTable: table "${this.#name}" already exists and ${why} (TableAlreadyExists); annotate the Table with k8or.io/adopt: "true" to take it over`, {
        code: 'TableAlreadyExists',
        noEffect: refused,
      });
    }
    const marker = await this.#mark(call);
    // The identity observe will read, for the engine to record with the create.
    return marker ? { identity: { marker } } : {};
  }

  /**
   * Set Table ACL with the identity marker, on the table just made (it has no other policy to keep);
   * the marker's id, or undefined where a SAS that may not set ACLs leaves the table without.
   */
  async #mark(call: CallOptions): Promise<string | undefined> {
    const marker = { id: `${IDENTITY_POLICY_PREFIX}${randomBytes(8).toString('hex')}`, accessPolicy: { permission: 'r', start: EXPIRED, expiry: EXPIRED } };
    try {
      await callAzure(this.#context, { service: AzureServices.tables, signal: call.signal }, 'SetTableACL', () => this.#table.setAccessPolicy([marker], { abortSignal: call.signal }));
      return marker.id;
    } catch (error) {
      if (hasCode(error, ...ACL_REFUSED)) return undefined;
      // The table exists: the create had its effect.
      throw error instanceof ProviderError && error.noEffect ? new TerminalError(error.message, { ...(error.code ? { code: error.code } : {}), cause: error.cause, noEffect: false }) : error;
    }
  }

  /** A table has nothing to bring in line; adoption and an interrupted create need no write either. What it cannot hold, observe reports. */
  async update(): Promise<void> {}

  /**
   * Delete Table. Azure has no deletion protection on a table, so k8or enforces the spec's: while
   * spec.deletionProtection is true, delete stops with DeletionBlockedError. Missing is success.
   */
  async delete(table: Table, call: CallOptions): Promise<void> {
    if (table.spec.deletionProtection) {
      throw new DeletionBlockedError(
        `Azure table "${this.#name}" has spec.deletionProtection: true; set it to false to delete the table, or use deletionPolicy: Retain to keep it`,
        { code: 'DeletionProtectionEnabled' },
      );
    }
    try {
      await callAzure(this.#context, { service: AzureServices.tables, signal: call.signal }, 'DeleteTable', () => this.#service.deleteTable(this.#name, { abortSignal: call.signal }));
    } catch (error) {
      if (!hasCode(error, 'TableNotFound', 'ResourceNotFound', 'TableBeingDeleted')) throw error;
    }
  }
}

/** A Table connector; `options` are internal (tests list in small pages). */
export function azureTableConnector(options: AzureConnectorOptions = {}): Connector<Table> {
  return {
    /** Builds (or reuses) the Table service client for the ProviderConfig's account, endpoint and credentials. */
    async connect(_table: Table, context: ConnectionContext): Promise<ExternalClient<Table>> {
      const settings = clientSettings(context.providerConfig, context.credentials, 'Table');
      return new AzureTableClient(tableServiceClient(settings, options), tableClient(settings, context.externalName, options), context, settings.credential.kind);
    },

    /** Every table of the storage account (Query Tables, every page); every Azure table has the string keys PartitionKey and RowKey. */
    async list(context: InventoryContext, call: CallOptions): Promise<InventoryItem<Table>[]> {
      const service = tableServiceClient(clientSettings(context.providerConfig, context.credentials, 'Table'), options);
      const tables = await everyPage(context, { service: AzureServices.tables, signal: call.signal }, 'QueryTables', (continuationToken) =>
        queryTablesPage(service, call.signal, continuationToken, { maxPageSize: options.listPageSize }),
      );
      return tables.flatMap((listed): InventoryItem<Table>[] =>
        listed.name ? [{ externalName: listed.name, spec: { partitionKey: { ...AZURE_PARTITION_KEY }, sortKey: { ...AZURE_ROW_KEY } } }] : [],
      );
    },
  };
}

export const tableConnector: Connector<Table> = azureTableConnector();
