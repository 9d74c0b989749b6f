/**
 * Table -> a Cloud Bigtable table in the ProviderConfig's instance, with the real
 * `@google-cloud/bigtable` admin client.
 *
 * Items are rows. The row key is the partition key value, then `#` and the sort key value when the
 * Table has a sort key (`rowKeyFor`); every other attribute is a column (qualifier = attribute name)
 * in the default column family `d`, or in a family the Table declares with the
 * `gcp.k8or.io/column-families` annotation. Every family keeps one version per cell (a write
 * replaces the value). With `ttlAttribute`, the families also expire cells one second after their
 * timestamp: writers set each cell's timestamp to the item's expiry time (Google's "simulate
 * cell-level TTL" pattern). Bigtable tables carry no labels: ownership rests on the identity
 * marker (an empty column family k8or creates with each table, see IDENTITY_FAMILY_PREFIX), recorded
 * in status at creation.
 */
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Bigtable, type BigtableOptions, type protos } from '@google-cloud/bigtable';
import type { Interceptor } from '@grpc/grpc-js';
import type { Table } from '@k8or/api';
import {
  DeletionBlockedError,
  NotOwnedError,
  type ApplyResult,
  type CallOptions,
  type ConnectionContext,
  type Connector,
  type ExternalClient,
  type FieldDiff,
  type InventoryContext,
  type InventoryItem,
  type Observation,
  type Presence,
  type ProtectionSetting,
  type ResourceIdentity,
} from '@k8or/core';
import { cancelOnAbort } from './abort.js';
import { ClientCache } from './client-cache.js';
import { answerOf, callGoogle, isNotFound } from './errors.js';
import { GcpServices, bigtableServiceFor } from './rate-limits.js';
import { gcpSettings, type GcpSettings } from './settings.js';
import { columnFamiliesOf, unappliedSettings } from './table-settings.js';

export { COLUMN_FAMILIES_ANNOTATION, DEFAULT_COLUMN_FAMILY, columnFamiliesOf, unappliedSettings } from './table-settings.js';

/** What an existing table's key becomes on import: Bigtable's one row key, bytes. */
const BIGTABLE_ROW_KEY = { name: 'rowKey', type: 'binary' } as const;
/** Row key separator between the partition key and the sort key values. */
export const ROW_KEY_SEPARATOR = '#';

// --- mapping ------------------------------------------------------------------------------------

/** A garbage-collection rule in a canonical, comparable form. */
export type GcRule = { maxNumVersions: number } | { maxAgeSeconds: number } | { union: GcRule[] } | { intersection: GcRule[] } | Record<string, never>;

/** The GC rule every family of the Table gets: one version per cell, and expiry one second after the cell's timestamp with ttlAttribute. */
export function gcRuleFor(table: Table): GcRule {
  return table.spec.ttlAttribute ? { union: [{ maxNumVersions: 1 }, { maxAgeSeconds: 1 }] } : { maxNumVersions: 1 };
}

/** Desired families with their GC rules. */
export function desiredFamilies(table: Table): Record<string, GcRule> {
  const rule = gcRuleFor(table);
  return Object.fromEntries(columnFamiliesOf(table).map((id) => [id, rule]));
}

/** A GC rule as the admin API takes and answers it (protobuf: durations as { seconds, nanos }). */
export type ProtoGcRule = protos.google.bigtable.admin.v2.IGcRule;
type Modification = protos.google.bigtable.admin.v2.ModifyColumnFamiliesRequest.IModification;

/** The admin API's rule in the canonical form; union and intersection members in a stable order. */
export function gcRuleOf(rule: ProtoGcRule | null | undefined): GcRule {
  if (!rule) return {};
  const members = (rules: ProtoGcRule[] | null | undefined): GcRule[] => (rules ?? []).map(gcRuleOf).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (rule.union) return { union: members(rule.union.rules) };
  if (rule.intersection) return { intersection: members(rule.intersection.rules) };
  if (rule.maxAge) return { maxAgeSeconds: Number(String(rule.maxAge.seconds ?? 0)) + (rule.maxAge.nanos ?? 0) / 1e9 };
  if (rule.maxNumVersions) return { maxNumVersions: rule.maxNumVersions };
  return {};
}

/** The canonical rule as the admin API takes it. */
export function protoGcRule(rule: GcRule): ProtoGcRule {
  if ('union' in rule) return { union: { rules: rule.union.map(protoGcRule) } };
  if ('intersection' in rule) return { intersection: { rules: rule.intersection.map(protoGcRule) } };
  if ('maxAgeSeconds' in rule) return { maxAge: { seconds: Math.floor(rule.maxAgeSeconds), nanos: Math.round((rule.maxAgeSeconds % 1) * 1e9) } };
  if ('maxNumVersions' in rule) return { maxNumVersions: rule.maxNumVersions };
  return {};
}

const canonical = (rule: GcRule): GcRule => gcRuleOf(protoGcRule(rule));

/** One attribute value of an item, as the row key holds it: strings and numbers as text, binary as bytes. */
export type KeyValue = string | number | Uint8Array;

/** The row key of an item: `partitionKey` or `partitionKey#sortKey`, as bytes. */
export function rowKeyFor(table: Table, item: Readonly<Record<string, KeyValue>>): Buffer {
  const part = (name: string): Buffer => {
    const value = item[name];
    if (value === undefined) throw new Error(`the item has no value for the key attribute "${name}"`);
    return typeof value === 'string' || typeof value === 'number' ? Buffer.from(String(value), 'utf8') : Buffer.from(value);
  };
  const partition = part(table.spec.partitionKey.name);
  return table.spec.sortKey ? Buffer.concat([partition, Buffer.from(ROW_KEY_SEPARATOR), part(table.spec.sortKey.name)]) : partition;
}

/** What the admin API reports about a table that k8or manages. */
export interface ObservedTable {
  families: Record<string, GcRule>;
  deletionProtection: boolean;
}

/**
 * Missing or changed column families, and deletion protection. A family the Table does not declare
 * is left alone (dropping it would delete its data), so it is never a difference.
 */
export function diffTable(table: Table, observed: ObservedTable): FieldDiff[] {
  const diff: FieldDiff[] = [];
  for (const [id, rule] of Object.entries(desiredFamilies(table))) {
    const actual = observed.families[id];
    if (actual === undefined) diff.push({ field: `columnFamilies.${id}`, desired: { gcRule: canonical(rule) }, actual: undefined });
    else if (!isDeepStrictEqual(canonical(rule), actual)) diff.push({ field: `columnFamilies.${id}.gcRule`, desired: canonical(rule), actual });
  }
  const protection = table.spec.deletionProtection ?? false;
  if (protection !== observed.deletionProtection) diff.push({ field: 'spec.deletionProtection', desired: protection, actual: observed.deletionProtection });
  return diff;
}

/**
 * The prefix of the identity marker: the admin API gives a table no creation time or id beyond its
 * name, so k8or creates each table with one empty column family of its own, named with a random
 * part (`k8or-id-<16 hex>`). It holds no cells, is never a difference (families the Table does not
 * declare are left alone), and a table made again under the name, by anyone, lacks it.
 */
export const IDENTITY_FAMILY_PREFIX = 'k8or-id-';

const newIdentityFamily = (): string => `${IDENTITY_FAMILY_PREFIX}${randomBytes(8).toString('hex')}`;

/** The table's identity: its identity marker families (normally one), or none for a table k8or did not create. */
export function identityOf(found: Pick<AdminTable, 'columnFamilies'>): { identity?: ResourceIdentity } {
  const markers = Object.keys(found.columnFamilies ?? {}).filter((id) => id.startsWith(IDENTITY_FAMILY_PREFIX)).sort();
  return markers.length > 0 ? { identity: { marker: markers.join(',') } } : {};
}

/** A table's protection as found: deletion protection, which blocks deletion. */
export function tableProtection(found: Pick<AdminTable, 'deletionProtection'>): ProtectionSetting[] {
  return [{ field: 'spec.deletionProtection', enabled: found.deletionProtection === true, blocksDeletion: true }];
}

// --- the client ---------------------------------------------------------------------------------

type TableAdminClient = ReturnType<Bigtable['admin']['getTableAdminClient']>;

interface BigtableClients {
  bigtable: Bigtable;
  admin: TableAdminClient;
}

interface AdminTable {
  name?: string | null;
  columnFamilies?: Record<string, { gcRule?: ProtoGcRule | null } | null> | null;
  deletionProtection?: boolean | null;
}

/**
 * One attempt per call: the engine retries with its own backoff and deadline (an unreachable instance
 * fails fast, not after a minute); and the RPC is cancelled when the call's signal aborts.
 */
function oneAttempt(signal: AbortSignal): { retry: null; otherArgs: { options: { interceptors: Interceptor[] } } } {
  return { retry: null, otherArgs: { options: { interceptors: [cancelOnAbort(signal)] } } };
}

/** One Bigtable table's client. Fresh per reconcile. */
export class BigtableTableClient implements ExternalClient<Table> {
  readonly #admin: TableAdminClient;
  readonly #context: ConnectionContext;
  readonly #settings: GcpSettings;

  constructor(admin: TableAdminClient, context: ConnectionContext, settings: GcpSettings) {
    this.#admin = admin;
    this.#context = context;
    this.#settings = settings;
  }

  get #instancePath(): string {
    return `projects/${this.#settings.project}/instances/${this.#settings.bigtableInstance ?? ''}`;
  }

  get #tablePath(): string {
    return `${this.#instancePath}/tables/${this.#context.externalName}`;
  }

  #call<T>(call: CallOptions, operation: string, run: (admin: TableAdminClient, options: ReturnType<typeof oneAttempt>) => Promise<T>): Promise<T> {
    return callGoogle(this.#context, { service: bigtableServiceFor(operation), signal: call.signal }, operation, () => run(this.#admin, oneAttempt(call.signal)));
  }

  /** The table, or undefined on a definite NOT_FOUND. PERMISSION_DENIED or a timeout is an error, never absence. */
  async #get(call: CallOptions): Promise<AdminTable | undefined> {
    try {
      const [table] = await this.#call(call, 'GetTable', (admin, options) => admin.getTable({ name: this.#tablePath, view: 'FULL' }, options));
      return table as AdminTable;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async observe(table: Table, call: CallOptions): Promise<Observation> {
    const found = await this.#get(call);
    if (found === undefined) return { exists: false, upToDate: false, ready: false };
    const observed: ObservedTable = {
      families: Object.fromEntries(Object.entries(found.columnFamilies ?? {}).map(([id, family]) => [id, gcRuleOf(family?.gcRule)])),
      deletionProtection: found.deletionProtection === true,
    };
    const diff = diffTable(table, observed);
    const unapplied = unappliedSettings(table);
    return {
      exists: true,
      ready: true,
      upToDate: diff.length === 0,
      diff,
      immutableDiff: [],
      atProvider: { id: this.#tablePath, location: this.#instancePath, state: 'READY' },
      // Bigtable tables carry no labels: ownership rests on the identity marker recorded at creation.
      ownerTags: undefined,
      ...identityOf(found),
      protection: tableProtection(found),
      ...(unapplied.length ? { settingIssues: unapplied } : {}),
    };
  }

  /**
   * Existence, identity and deletion protection: GetTable with the SCHEMA_VIEW (no replication or
   * encryption state read). Bigtable tables carry no labels, so there are no owner tags to read:
   * ownership rests on the identity marker, as with observe.
   */
  async probe(_table: Table, call: CallOptions): Promise<Presence> {
    try {
      const [found] = await this.#call(call, 'GetTable', (admin, options) => admin.getTable({ name: this.#tablePath, view: 'SCHEMA_VIEW' }, options));
      return { exists: true, ...identityOf(found as AdminTable), protection: tableProtection(found as AdminTable) };
    } catch (error) {
      if (isNotFound(error)) return { exists: false };
      throw error;
    }
  }

  /**
   * CreateTable with every declared family and deletion protection. The settings Bigtable cannot
   * apply are named by every observe (the engine observes right after create), so not here too.
   * ALREADY_EXISTS: the name is someone else's. Returns the table's identity (its marker family),
   * for the engine to record with the create.
   */
  async create(table: Table, call: CallOptions): Promise<ApplyResult> {
    const columnFamilies = Object.fromEntries(Object.entries(desiredFamilies(table)).map(([id, rule]) => [id, { gcRule: protoGcRule(rule) }]));
    // The identity marker, made in the same call: an empty family no other table has.
    const marker = newIdentityFamily();
    columnFamilies[marker] = { gcRule: protoGcRule({ maxNumVersions: 1 }) };
    try {
      await this.#call(call, 'CreateTable', (admin, options) =>
        admin.createTable({ parent: this.#instancePath, tableId: this.#context.externalName, table: { columnFamilies, deletionProtection: table.spec.deletionProtection ?? false } }, options),
      );
    } catch (error) {
      if (answerOf(error).grpc !== 'ALREADY_EXISTS') throw error;
      throw this.#taken(error);
    }
    return { identity: { marker } };
  }

  /** The name exists: with no labels on Bigtable tables, nothing proves it ours, so it is someone else's until adopted. */
  #taken(cause?: unknown): NotOwnedError {
    return new NotOwnedError(`CreateTable: Bigtable table "${this.#tablePath}" already exists and k8or did not create it for this object (ALREADY_EXISTS); adopt it with the k8or.io/adopt annotation`, {
      code: 'ALREADY_EXISTS',
      cause,
    });
  }

  /**
   * ModifyColumnFamilies for missing or changed families; UpdateTable (started, not awaited) for
   * deletion protection where the spec given asks for another value than the table has (a
   * protection the engine holds comes with the table's own value, and is left as it is). The
   * settings Bigtable cannot apply are already in the observation's issues.
   */
  async update(table: Table, observation: Observation, call: CallOptions): Promise<void> {
    const diff = observation.diff ?? [];
    const families = desiredFamilies(table);
    const modifications = Object.entries(families).flatMap(([id, rule]): Modification[] => {
      if (diff.some((d) => d.field === `columnFamilies.${id}`)) return [{ id, create: { gcRule: protoGcRule(rule) } }];
      if (diff.some((d) => d.field === `columnFamilies.${id}.gcRule`)) return [{ id, update: { gcRule: protoGcRule(rule) } }];
      return [];
    });
    if (modifications.length > 0) await this.#call(call, 'ModifyColumnFamilies', (admin, options) => admin.modifyColumnFamilies({ name: this.#tablePath, modifications }, options));
    const protection = table.spec.deletionProtection ?? false;
    const found = diff.find((d) => d.field === 'spec.deletionProtection');
    if (found && found.actual !== protection) await this.#setDeletionProtection(protection, call);
  }

  /** Starts the UpdateTable operation; the next observe sees its effect. */
  async #setDeletionProtection(deletionProtection: boolean, call: CallOptions): Promise<void> {
    await this.#call(call, 'UpdateTable', (admin, options) => admin.updateTable({ table: { name: this.#tablePath, deletionProtection }, updateMask: { paths: ['deletion_protection'] } }, options));
  }

  /**
   * DeleteTable. A delete never removes a protection: a table with deletion protection on, whoever
   * set it, stops with DeletionBlockedError naming the setting. Missing is success.
   */
  async delete(table: Table, call: CallOptions): Promise<void> {
    const found = await this.#get(call);
    if (found === undefined) return;
    if (found.deletionProtection) throw this.#protected(table);
    try {
      await this.#call(call, 'DeleteTable', (admin, options) => admin.deleteTable({ name: this.#tablePath }, options));
    } catch (error) {
      if (isNotFound(error)) return;
      // Bigtable refuses to delete a protected table: protection turned on since the read above.
      if (answerOf(error).grpc === 'FAILED_PRECONDITION') throw this.#protected(table, error);
      throw error;
    }
  }

  #protected(table: Table, cause?: unknown): DeletionBlockedError {
    const why = table.spec.deletionProtection ? 'spec.deletionProtection: true' : 'set outside k8or: the spec does not ask for it';
    return new DeletionBlockedError(
      `Bigtable table "${this.#tablePath}" has deletion protection on (deletionProtection; ${why}), and a delete never turns a protection off: turn it off in Bigtable to delete the table, or use deletionPolicy: Retain to keep it`,
      { code: 'DeletionProtectionEnabled', cause },
    );
  }
}

// --- the connector ------------------------------------------------------------------------------

/** The longest the gRPC channel waits between reconnect attempts (jittered by 20 %). */
const MAX_RECONNECT_BACKOFF_MS = 5_000;

function newBigtable(settings: GcpSettings): BigtableClients {
  // The channel option passes through to grpc-js; BigtableOptions does not list it.
  const options: BigtableOptions & { 'grpc.max_reconnect_backoff_ms': number } = {
    projectId: settings.project,
    // k8or counts its own calls; Bigtable's client-side metrics would need Cloud Monitoring write access.
    metricsEnabled: false,
    // An emulator takes no credentials; naming the universe spares the auth library its metadata-server probe.
    ...(settings.bigtableEmulatorHost ? { apiEndpoint: settings.bigtableEmulatorHost, universeDomain: 'googleapis.com' } : {}),
    ...(settings.serviceAccountKey ? { credentials: settings.serviceAccountKey } : {}),
    // grpc-js backs off reconnecting up to 120 s; the calls made meanwhile fail at once without
    // reaching Bigtable, so after an outage the client stayed unusable up to two minutes after
    // Bigtable was back. The engine already backs off its calls; the channel only has to notice.
    'grpc.max_reconnect_backoff_ms': MAX_RECONNECT_BACKOFF_MS,
  };
  const bigtable = new Bigtable(options);
  return { bigtable, admin: bigtable.admin.getTableAdminClient() };
}

const clients = new ClientCache<BigtableClients>(newBigtable, async ({ bigtable, admin }) => {
  await admin.close();
  await bigtable.close();
});

/** Builds (or reuses) the Bigtable admin client for the ProviderConfig's project, instance, emulator host and credentials. */
export const tableConnector: Connector<Table> = {
  connect(_table: Table, context: ConnectionContext): Promise<ExternalClient<Table>> {
    const settings = gcpSettings(context.providerConfig, context.credentials, 'Table');
    return Promise.resolve(new BigtableTableClient(clients.get(settings).admin, context, settings));
  },

  /**
   * Every table of the ProviderConfig's Bigtable instance (ListTables, names only). A Bigtable
   * table has one row key of bytes and no key schema: it becomes a binary partition key.
   */
  async list(context: InventoryContext, call: CallOptions): Promise<InventoryItem<Table>[]> {
    const settings = gcpSettings(context.providerConfig, context.credentials, 'Table');
    const { admin } = clients.get(settings);
    const parent = `projects/${settings.project}/instances/${settings.bigtableInstance ?? ''}`;
    // One call per page, so each page takes its rate-limit token (the client's own paging would send the later pages unpaced).
    const tables: { name?: string | null }[] = [];
    let pageToken: string | undefined;
    do {
      const request = { parent, view: 'NAME_ONLY' as const, ...(pageToken ? { pageToken } : {}) };
      const [page, next] = await callGoogle(context, { service: GcpServices.bigtableTableReads, signal: call.signal }, 'ListTables', () =>
        admin.listTables(request, { ...oneAttempt(call.signal), autoPaginate: false }),
      );
      tables.push(...page);
      pageToken = next?.pageToken ?? undefined;
    } while (pageToken);
    return tables.flatMap((listed): InventoryItem<Table>[] => {
      const id = listed.name?.slice(`${parent}/tables/`.length);
      return id ? [{ externalName: id, spec: { partitionKey: { ...BIGTABLE_ROW_KEY } } }] : [];
    });
  },
};

/** Closes every cached Bigtable client (their gRPC channels). */
export async function destroyBigtableClients(): Promise<void> {
  await clients.closeAll();
}
