/**
 * Table -> Amazon DynamoDB: the mapping from the portable spec, observe/diff, and create/update/delete.
 */
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  ListTagsOfResourceCommand,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type AttributeDefinition,
  type BillingMode as DynamoDbBillingMode,
  type KeySchemaElement,
  type ProvisionedThroughput,
  type ScalarAttributeType,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { isDeepStrictEqual } from 'node:util';
import { type KeyAttribute, type KeyType, type Table, type TableBilling } from '@k8or/api';
import {
  DeletionBlockedError,
  NotOwnedError,
  ProviderError,
  RetryableError,
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
  type SettingIssue,
} from '@k8or/core';
import { ClientCache } from './client-cache.js';
import { clientSettings, DEFAULT_REGION } from './config.js';
import { afterEffect, callAws, hasCode } from './errors.js';
import { takeTokenPerAttempt } from './retry-tokens.js';
import { retryWithoutQuota } from './retry-strategy.js';
import { AwsServices } from './rate-limits.js';
import { carriesOwnerTags, desiredTags, diffTags, fromTagList, ownerTagKeys, ownerTagsIn, toTagList } from './tags.js';

// --- mapping: portable spec -> DynamoDB ---------------------------------------------------------

export const KEY_TYPE_TO_ATTRIBUTE_TYPE: Record<KeyType, ScalarAttributeType> = { string: 'S', number: 'N', binary: 'B' };

/** KeySchema and AttributeDefinitions for the partition key and optional sort key. */
export function keySchemaFor(table: Table): { KeySchema: KeySchemaElement[]; AttributeDefinitions: AttributeDefinition[] } {
  const keys: [KeyAttribute, 'HASH' | 'RANGE'][] = [[table.spec.partitionKey, 'HASH']];
  if (table.spec.sortKey) keys.push([table.spec.sortKey, 'RANGE']);
  return {
    KeySchema: keys.map(([key, KeyType]) => ({ AttributeName: key.name, KeyType })),
    AttributeDefinitions: keys.map(([key]) => ({ AttributeName: key.name, AttributeType: KEY_TYPE_TO_ATTRIBUTE_TYPE[key.type] })),
  };
}

/** BillingMode and, for provisioned tables, the throughput. */
export function billingFor(billing: TableBilling | undefined): { BillingMode: DynamoDbBillingMode; ProvisionedThroughput?: ProvisionedThroughput } {
  if (billing?.mode !== 'provisioned') return { BillingMode: 'PAY_PER_REQUEST' };
  return { BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: billing.readCapacity ?? 1, WriteCapacityUnits: billing.writeCapacity ?? 1 } };
}

// --- observe: DynamoDB -> comparable settings ---------------------------------------------------

/** An endpoint's answer that it has no such operation (DynamoDB Local for tagging and backups). */
class Unsupported {
  constructor(readonly answer: string) {}
}

/** The managed settings of one table, as DynamoDB reports them. */
export interface ObservedTable {
  description: TableDescription;
  /** The attribute TTL is enabled on, or undefined when TTL is off. */
  ttlAttribute: string | undefined;
  /** Undefined where the endpoint has no continuous backups (DynamoDB Local); `unsupported` says why. */
  pointInTimeRecovery: boolean | undefined;
  /** Undefined where the endpoint has no tagging (DynamoDB Local); `unsupported` says why. */
  tags: Record<string, string> | undefined;
  /** The answers of the reads the endpoint does not support, by the spec field they serve. */
  unsupported?: { pointInTimeRecovery?: string; labels?: string };
}

/** The key attributes of a described table, in the portable shape. */
export function keysOf(description: TableDescription): { partitionKey?: KeyAttribute; sortKey?: KeyAttribute } {
  const typeOf = (name: string): KeyType => {
    const type = description.AttributeDefinitions?.find((a) => a.AttributeName === name)?.AttributeType;
    return (Object.entries(KEY_TYPE_TO_ATTRIBUTE_TYPE).find(([, value]) => value === type)?.[0] ?? 'string') as KeyType;
  };
  const key = (kind: 'HASH' | 'RANGE'): KeyAttribute | undefined => {
    const name = description.KeySchema?.find((k) => k.KeyType === kind)?.AttributeName;
    return name === undefined ? undefined : { name, type: typeOf(name) };
  };
  const partitionKey = key('HASH');
  const sortKey = key('RANGE');
  return { ...(partitionKey ? { partitionKey } : {}), ...(sortKey ? { sortKey } : {}) };
}

/** Billing as the portable shape (tables created before on-demand existed have no BillingModeSummary). */
export function billingOf(description: TableDescription): TableBilling {
  if ((description.BillingModeSummary?.BillingMode ?? 'PROVISIONED') === 'PAY_PER_REQUEST') return { mode: 'onDemand' };
  return {
    mode: 'provisioned',
    readCapacity: description.ProvisionedThroughput?.ReadCapacityUnits ?? 0,
    writeCapacity: description.ProvisionedThroughput?.WriteCapacityUnits ?? 0,
  };
}

/** A key attribute in its portable shape, so keys compare by value whatever their field order. */
const keyValue = (key: KeyAttribute | undefined): KeyAttribute | undefined => (key === undefined ? undefined : { name: key.name, type: key.type });

/** Differences DynamoDB can change in place (`diff`) and key schema differences it cannot (`immutableDiff`). */
export function diffTable(table: Table, observed: ObservedTable, ownerTags: Readonly<Record<string, string>>): { diff: FieldDiff[]; immutableDiff: FieldDiff[] } {
  const immutableDiff: FieldDiff[] = [];
  const keys = keysOf(observed.description);
  if (!isDeepStrictEqual(keyValue(table.spec.partitionKey), keyValue(keys.partitionKey))) immutableDiff.push({ field: 'spec.partitionKey', desired: table.spec.partitionKey, actual: keys.partitionKey });
  if (!isDeepStrictEqual(keyValue(table.spec.sortKey), keyValue(keys.sortKey))) immutableDiff.push({ field: 'spec.sortKey', desired: table.spec.sortKey, actual: keys.sortKey });

  const diff: FieldDiff[] = [];
  const desiredBilling = billingFor(table.spec.billing);
  const actualBilling = billingOf(observed.description);
  const desiredMode = table.spec.billing?.mode ?? 'onDemand';
  if (desiredMode !== actualBilling.mode) diff.push({ field: 'spec.billing.mode', desired: desiredMode, actual: actualBilling.mode });
  else if (desiredMode === 'provisioned') {
    const throughput = desiredBilling.ProvisionedThroughput;
    if (throughput?.ReadCapacityUnits !== actualBilling.readCapacity) diff.push({ field: 'spec.billing.readCapacity', desired: throughput?.ReadCapacityUnits, actual: actualBilling.readCapacity });
    if (throughput?.WriteCapacityUnits !== actualBilling.writeCapacity) diff.push({ field: 'spec.billing.writeCapacity', desired: throughput?.WriteCapacityUnits, actual: actualBilling.writeCapacity });
  }
  if ((table.spec.ttlAttribute || undefined) !== observed.ttlAttribute) diff.push({ field: 'spec.ttlAttribute', desired: table.spec.ttlAttribute, actual: observed.ttlAttribute });
  const pitr = table.spec.pointInTimeRecovery ?? false;
  if (observed.pointInTimeRecovery !== undefined && pitr !== observed.pointInTimeRecovery) diff.push({ field: 'spec.pointInTimeRecovery', desired: pitr, actual: observed.pointInTimeRecovery });
  const protection = table.spec.deletionProtection ?? false;
  const actualProtection = observed.description.DeletionProtectionEnabled ?? false;
  if (protection !== actualProtection) diff.push({ field: 'spec.deletionProtection', desired: protection, actual: actualProtection });
  if (observed.tags !== undefined) diff.push(...diffTags(desiredTags(table.spec.labels, ownerTags), observed.tags, ownerTagKeys(ownerTags)));
  return { diff, immutableDiff };
}

/**
 * Settings the spec asks for that this endpoint has no API for (DynamoDB Local: tagging, continuous
 * backups). Named, never skipped in silence: the engine turns them into a condition. A setting the
 * spec leaves off is no issue where the endpoint cannot have it anyway.
 */
export function tableSettingIssues(table: Table, observed: Pick<ObservedTable, 'unsupported'>): SettingIssue[] {
  const issues: SettingIssue[] = [];
  const { labels, pointInTimeRecovery } = observed.unsupported ?? {};
  if (pointInTimeRecovery !== undefined && table.spec.pointInTimeRecovery) {
    issues.push({ field: 'spec.pointInTimeRecovery', problem: 'unapplied', message: `this endpoint has no point-in-time recovery (${pointInTimeRecovery})` });
  }
  if (labels !== undefined && Object.keys(table.spec.labels ?? {}).length > 0) {
    issues.push({ field: 'spec.labels', problem: 'unapplied', message: `this endpoint has no table tags, so labels can be neither applied nor read (${labels})` });
  }
  return issues;
}

/**
 * A table that can be read and written: ACTIVE, or UPDATING (a change in progress, such as a
 * throughput or index change, keeps the table serving).
 */
export const isUsable = (status: string | undefined): boolean => status === 'ACTIVE' || status === 'UPDATING';

/**
 * The table's own identity: its TableId (which DynamoDB Local does not give) and its creation time,
 * both fixed at creation, so a table made again under the same name has others.
 */
export function tableIdentity(description: TableDescription): ResourceIdentity | undefined {
  const identity = {
    ...(description.TableId ? { tableId: description.TableId } : {}),
    ...(description.CreationDateTime ? { createdAt: description.CreationDateTime.toISOString() } : {}),
  };
  return Object.keys(identity).length > 0 ? identity : undefined;
}

/** The table's protections as found: deletion protection (it blocks deletion), and point-in-time recovery where it was read. */
export function tableProtection(description: TableDescription, pointInTimeRecovery: boolean | undefined): ProtectionSetting[] {
  return [
    { field: 'spec.deletionProtection', enabled: description.DeletionProtectionEnabled === true, blocksDeletion: true },
    ...(pointInTimeRecovery === undefined ? [] : [{ field: 'spec.pointInTimeRecovery', enabled: pointInTimeRecovery }]),
  ];
}

// --- the client ---------------------------------------------------------------------------------

/** One DynamoDB table's client. No call waits for the table: observe reports ready once it is ACTIVE. */
export class DynamoDbTableClient implements ExternalClient<Table> {
  readonly #dynamodb: DynamoDBClient;
  readonly #context: ConnectionContext;
  readonly #region: string;

  constructor(dynamodb: DynamoDBClient, context: ConnectionContext, region: string) {
    this.#dynamodb = dynamodb;
    this.#context = context;
    this.#region = region;
  }

  get #name(): string {
    return this.#context.externalName;
  }

  /** One SDK call, recorded and classified, aborted with the engine's signal. */
  #call<T>(call: CallOptions, operation: string, send: (dynamodb: DynamoDBClient, abort: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    return callAws(this.#context, { service: AwsServices.dynamodb, signal: call.signal }, operation, () => send(this.#dynamodb, { abortSignal: call.signal }));
  }

  /** The call's result, or undefined when AWS answers one of `codes` (a resource already gone, an operation the endpoint lacks). */
  async #callOrUndefined<T>(
    call: CallOptions,
    operation: string,
    codes: string[],
    send: (dynamodb: DynamoDBClient, abort: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await this.#call(call, operation, send);
    } catch (error) {
      if (hasCode(error, ...codes)) return undefined;
      throw error;
    }
  }

  async #describe(call: CallOptions): Promise<TableDescription | undefined> {
    const TableName = this.#name;
    const described = await this.#callOrUndefined(call, 'DescribeTable', ['ResourceNotFoundException'], (d, abort) => d.send(new DescribeTableCommand({ TableName }), abort));
    return described?.Table;
  }

  /** Tags, page by page; the endpoint's refusal where it has no tagging (DynamoDB Local answers UnknownOperationException). */
  async #tags(arn: string, call: CallOptions): Promise<Record<string, string> | Unsupported> {
    const tags: { Key?: string; Value?: string }[] = [];
    let NextToken: string | undefined;
    do {
      const page = await this.#supported(this.#call(call, 'ListTagsOfResource', (d, abort) => d.send(new ListTagsOfResourceCommand({ ResourceArn: arn, NextToken }), abort)));
      if (page instanceof Unsupported) return page;
      tags.push(...(page.Tags ?? []));
      NextToken = page.NextToken;
    } while (NextToken);
    return fromTagList(tags);
  }

  /** The call's result, or Unsupported when the endpoint lacks the operation (UnknownOperationException). */
  async #supported<T>(pending: Promise<T>): Promise<T | Unsupported> {
    try {
      return await pending;
    } catch (error) {
      if (hasCode(error, 'UnknownOperationException')) return new Unsupported(error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  async #read(description: TableDescription, call: CallOptions): Promise<ObservedTable> {
    const TableName = this.#name;
    const [ttl, backups, tags] = await Promise.all([
      this.#call(call, 'DescribeTimeToLive', (d, abort) => d.send(new DescribeTimeToLiveCommand({ TableName }), abort)),
      this.#supported(this.#call(call, 'DescribeContinuousBackups', (d, abort) => d.send(new DescribeContinuousBackupsCommand({ TableName }), abort))),
      description.TableArn ? this.#tags(description.TableArn, call) : Promise.resolve(new Unsupported('DescribeTable gave no table ARN to read tags with')),
    ]);
    const ttlStatus = ttl.TimeToLiveDescription?.TimeToLiveStatus;
    return {
      description,
      ttlAttribute: ttlStatus === 'ENABLED' || ttlStatus === 'ENABLING' ? ttl.TimeToLiveDescription?.AttributeName : undefined,
      pointInTimeRecovery:
        backups instanceof Unsupported ? undefined : backups.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus === 'ENABLED',
      tags: tags instanceof Unsupported ? undefined : tags,
      unsupported: {
        ...(backups instanceof Unsupported ? { pointInTimeRecovery: backups.answer } : {}),
        ...(tags instanceof Unsupported ? { labels: tags.answer } : {}),
      },
    };
  }

  async observe(table: Table, call: CallOptions): Promise<Observation> {
    const description = await this.#describe(call);
    if (description === undefined) return { exists: false, upToDate: false, ready: false };
    const atProvider = {
      id: description.TableArn,
      state: description.TableStatus,
      itemCount: description.ItemCount,
      location: this.#region,
      ...(description.CreationDateTime ? { createdTime: description.CreationDateTime.toISOString() } : {}),
    };
    const ready = isUsable(description.TableStatus);
    const identity = tableIdentity(description);
    const facts = { ...(identity ? { identity } : {}) };
    // TTL and backups cannot be read or set before the table is first ACTIVE; report what we know and look again.
    if (!ready) return { exists: true, ready: false, upToDate: true, diff: [], atProvider, ...facts, protection: tableProtection(description, undefined) };
    const observed = await this.#read(description, call);
    const { diff, immutableDiff } = diffTable(table, observed, this.#context.ownerTags);
    const settingIssues = tableSettingIssues(table, observed);
    return {
      exists: true,
      ready,
      upToDate: diff.length === 0,
      diff,
      immutableDiff,
      atProvider,
      ...facts,
      protection: tableProtection(description, observed.pointInTimeRecovery),
      // Undefined where the endpoint has no tags at all: ownership then rests on the engine's create markers.
      ownerTags: observed.tags === undefined ? undefined : ownerTagsIn(observed.tags, ownerTagKeys(this.#context.ownerTags)),
      ...(settingIssues.length > 0 ? { settingIssues } : {}),
    };
  }

  /**
   * Existence and owner tags: DescribeTable, then ListTagsOfResource when the table is usable
   * (ACTIVE or UPDATING). A table in any other state (CREATING, DELETING) exists, its tags unread, as
   * observe reports it; only ResourceNotFoundException is absence.
   */
  async probe(_table: Table, call: CallOptions): Promise<Presence> {
    const description = await this.#describe(call);
    if (description === undefined) return { exists: false };
    const identity = tableIdentity(description);
    // Deletion protection comes with DescribeTable; point-in-time recovery, which blocks nothing, is observe's to read.
    const facts = { ...(identity ? { identity } : {}), protection: tableProtection(description, undefined) };
    if (!isUsable(description.TableStatus) || !description.TableArn) return { exists: true, ...facts };
    const tags = await this.#tags(description.TableArn, call);
    return { exists: true, ...(tags instanceof Unsupported ? {} : { ownerTags: ownerTagsIn(tags, ownerTagKeys(this.#context.ownerTags)) }), ...facts };
  }

  /**
   * Deletion policy Retain: UntagResource of k8or's owner tags, so another cluster or object can
   * adopt the table; nothing else changes. A missing table, or an endpoint without tags (DynamoDB
   * Local), has none to remove.
   */
  async release(_table: Table, call: CallOptions): Promise<void> {
    const ResourceArn = (await this.#describe(call))?.TableArn;
    if (!ResourceArn) return;
    const TagKeys = ownerTagKeys(this.#context.ownerTags);
    await this.#supported(this.#callOrUndefined(call, 'UntagResource', ['ResourceNotFoundException'], (d, abort) => d.send(new UntagResourceCommand({ ResourceArn, TagKeys }), abort)));
  }

  /**
   * CreateTable with keys, billing, deletion protection and the owner tags and labels (CreateTable's
   * Tags), and return: the table is CREATING for a while. TTL and point-in-time recovery need an
   * ACTIVE table, so the update after the observe that finds it ACTIVE sets them.
   */
  async create(table: Table, call: CallOptions): Promise<void> {
    const TableName = this.#name;
    let status: string | undefined;
    try {
      const created = await this.#call(call, 'CreateTable', (d, abort) =>
        d.send(
          new CreateTableCommand({
            TableName,
            ...keySchemaFor(table),
            ...billingFor(table.spec.billing),
            DeletionProtectionEnabled: table.spec.deletionProtection ?? false,
            Tags: toTagList(desiredTags(table.spec.labels, this.#context.ownerTags)),
          }),
          abort,
        ),
      );
      status = created.TableDescription?.TableStatus;
    } catch (error) {
      if (!hasCode(error, 'ResourceInUseException')) throw error;
      status = await this.#ownTableStatus(error, call);
    }
    // Some endpoints (DynamoDB Local) answer ACTIVE at once: then the rest is set now rather than at the next resync.
    if (status !== 'ACTIVE') return;
    try {
      if (table.spec.ttlAttribute) await this.#updateTtl(table, undefined, call);
      // Where the endpoint lacks it, the observe that follows every create names spec.pointInTimeRecovery (once).
      if (table.spec.pointInTimeRecovery) await this.#updatePointInTimeRecovery(table, call);
    } catch (error) {
      // The table exists: whatever failed after CreateTable, the create had its effect.
      throw afterEffect(error);
    }
  }

  /**
   * CreateTable answered that the name is taken. "Already exists" is success only for a table that
   * carries this object's owner tags (a create repeated); anything else, including a table on an
   * endpoint whose tags cannot be read, is never taken for ours here: NotOwnedError, nothing written.
   */
  async #ownTableStatus(inUse: unknown, call: CallOptions): Promise<string | undefined> {
    const description = await this.#describe(call);
    const tags = description?.TableArn ? await this.#tags(description.TableArn, call) : undefined;
    if (description && tags && !(tags instanceof Unsupported) && carriesOwnerTags(tags, this.#context.ownerTags)) return description.TableStatus;
    const why = tags instanceof Unsupported ? `its tags cannot be read here (${tags.answer})` : "it does not carry this object's owner tags";
    throw new NotOwnedError(`CreateTable: DynamoDB table "${this.#name}" already exists and ${why}, so k8or leaves it alone (set k8or.io/adopt: "true" to take it over)`, {
      code: 'ResourceInUseException',
      cause: inUse,
      // A CreateTable the SDK retried may have made the table in an earlier attempt: then the outcome is unknown.
      noEffect: inUse instanceof ProviderError ? inUse.noEffect : false,
    });
  }

  /** UpdateContinuousBackups; an endpoint without it (DynamoDB Local) yields a setting issue instead of a failure. */
  async #updatePointInTimeRecovery(table: Table, call: CallOptions): Promise<ApplyResult | void> {
    const PointInTimeRecoveryEnabled = table.spec.pointInTimeRecovery ?? false;
    const updated = await this.#supported(
      this.#call(call, 'UpdateContinuousBackups', (d, abort) =>
        d.send(new UpdateContinuousBackupsCommand({ TableName: this.#name, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled } }), abort),
      ),
    );
    if (updated instanceof Unsupported && PointInTimeRecoveryEnabled) {
      return { settingIssues: tableSettingIssues(table, { unsupported: { pointInTimeRecovery: updated.answer } }) };
    }
  }

  /**
   * Changes what DynamoDB changes in place: billing and throughput, deletion protection, TTL, PITR,
   * tags, each only where the spec given asks for another value than the table has. What the
   * engine leaves alone (a protection it holds, drift the policy reports or holds) comes with the
   * cloud's value in that spec, so it is never written, even when another setting is.
   */
  async update(table: Table, observation: Observation, call: CallOptions): Promise<ApplyResult | void> {
    if (observation.atProvider?.state !== 'ACTIVE') {
      throw new RetryableError(`DynamoDB table "${this.#name}" is ${observation.atProvider?.state ?? 'not ACTIVE'}; it can be updated once ACTIVE`);
    }
    const diff = observation.diff ?? [];
    // A setting to change: drifted, and the spec given asks for another value than the table has.
    const toChange = (field: string, wanted: unknown): FieldDiff | undefined => {
      const found = diff.find((d) => d.field === field);
      return found !== undefined && !isDeepStrictEqual(wanted, found.actual) ? found : undefined;
    };
    const TableName = this.#name;
    const billing = billingFor(table.spec.billing);
    const changeBilling =
      toChange('spec.billing.mode', table.spec.billing?.mode ?? 'onDemand') ??
      toChange('spec.billing.readCapacity', billing.ProvisionedThroughput?.ReadCapacityUnits) ??
      toChange('spec.billing.writeCapacity', billing.ProvisionedThroughput?.WriteCapacityUnits);
    const protection = table.spec.deletionProtection ?? false;
    const changeProtection = toChange('spec.deletionProtection', protection);
    if (changeBilling || changeProtection) {
      // DeletionProtectionEnabled goes with every UpdateTable (DynamoDB Local resets it when omitted):
      // the spec's value when it is to change; else the table's own, read now, so a protection set
      // since the observe is never lowered by a billing change.
      const DeletionProtectionEnabled = changeProtection || protection ? protection : (await this.#describe(call))?.DeletionProtectionEnabled === true;
      await this.#call(call, 'UpdateTable', (d, abort) =>
        d.send(
          new UpdateTableCommand({
            TableName,
            // Real DynamoDB rejects an UpdateTable that repeats the current throughput, so billing goes only when it changes.
            ...(changeBilling ? billing : {}),
            DeletionProtectionEnabled,
          }), abort,
        ),
      );
    }
    const ttl = toChange('spec.ttlAttribute', table.spec.ttlAttribute || undefined);
    if (ttl) await this.#updateTtl(table, typeof ttl.actual === 'string' ? ttl.actual : undefined, call);
    const desired = desiredTags(table.spec.labels, this.#context.ownerTags);
    const tagKey = (field: string): string => field.replace(/^(spec\.labels|ownerTags)\./, '');
    const tagsToChange = diff.filter((d) => (d.field.startsWith('spec.labels.') || d.field.startsWith('ownerTags.')) && desired[tagKey(d.field)] !== d.actual);
    if (tagsToChange.length > 0) await this.#updateTags(desired, tagsToChange.filter((d) => desired[tagKey(d.field)] === undefined).map((d) => tagKey(d.field)), call);
    if (toChange('spec.pointInTimeRecovery', table.spec.pointInTimeRecovery ?? false)) return await this.#updatePointInTimeRecovery(table, call);
  }

  /** TTL is one attribute at a time: turn the old one off before the new one on. */
  async #updateTtl(table: Table, enabledAttribute: string | undefined, call: CallOptions): Promise<void> {
    const TableName = this.#name;
    if (enabledAttribute !== undefined) {
      await this.#call(call, 'UpdateTimeToLive', (d, abort) => d.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: enabledAttribute, Enabled: false } }), abort));
    }
    const AttributeName = table.spec.ttlAttribute;
    if (AttributeName) {
      await this.#call(call, 'UpdateTimeToLive', (d, abort) => d.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName, Enabled: true } }), abort));
    }
  }

  /** UntagResource of the tags to remove, then TagResource of every tag the table is to carry. */
  async #updateTags(desired: Readonly<Record<string, string>>, removed: string[], call: CallOptions): Promise<void> {
    const ResourceArn = (await this.#describe(call))?.TableArn;
    if (!ResourceArn) return;
    if (removed.length > 0) await this.#call(call, 'UntagResource', (d, abort) => d.send(new UntagResourceCommand({ ResourceArn, TagKeys: removed }), abort));
    await this.#call(call, 'TagResource', (d, abort) => d.send(new TagResourceCommand({ ResourceArn, Tags: toTagList(desired) }), abort));
  }

  /**
   * DeleteTable. A delete never removes a protection: a table with deletion protection on, whoever
   * set it, stops with DeletionBlockedError naming the setting. A table still CREATING or UPDATING is
   * retried; one already DELETING, or missing, is success.
   */
  async delete(table: Table, call: CallOptions): Promise<void> {
    const TableName = this.#name;
    const description = await this.#describe(call);
    if (description === undefined || description.TableStatus === 'DELETING') return;
    if (description.TableStatus === 'CREATING' || description.TableStatus === 'UPDATING') {
      throw new RetryableError(`DynamoDB table "${TableName}" is ${description.TableStatus}; it can be deleted once ACTIVE`, { code: 'ResourceInUseException' });
    }
    if (description.DeletionProtectionEnabled) {
      const why = table.spec.deletionProtection ? 'spec.deletionProtection: true' : 'set outside k8or: the spec does not ask for it';
      throw new DeletionBlockedError(
        `DynamoDB table "${TableName}" has deletion protection on (DeletionProtectionEnabled; ${why}), and a delete never turns a protection off: turn it off in DynamoDB to delete the table, or use deletionPolicy: Retain to keep it`,
        { code: 'DeletionProtectionEnabled' },
      );
    }
    try {
      await this.#callOrUndefined(call, 'DeleteTable', ['ResourceNotFoundException'], (d, abort) => d.send(new DeleteTableCommand({ TableName }), abort));
    } catch (error) {
      if (hasCode(error, 'ResourceInUseException')) throw new RetryableError(`DeleteTable: DynamoDB table "${TableName}" is busy (ResourceInUseException)`, { code: 'ResourceInUseException', cause: error });
      throw error;
    }
  }
}

// --- the connector ------------------------------------------------------------------------------

const clients = new ClientCache((settings) => {
  // Path-style addressing is an S3 notion; DynamoDB has no such setting.
  const { forcePathStyle: _pathStyle, ...dynamoDbSettings } = settings;
  return takeTokenPerAttempt(new DynamoDBClient({ ...dynamoDbSettings, retryStrategy: retryWithoutQuota(dynamoDbSettings.maxAttempts) }));
});

/** Builds (or reuses) the DynamoDB client for the ProviderConfig's region, endpoint and credentials. */
export const tableConnector: Connector<Table> = {
  async connect(_table: Table, context: ConnectionContext): Promise<ExternalClient<Table>> {
    const region = context.providerConfig.spec.region ?? DEFAULT_REGION;
    const dynamodb = clients.get(clientSettings(context.providerConfig, context.credentials, 'Table', region));
    return new DynamoDbTableClient(dynamodb, context, region);
  },

  /** Every table of the ProviderConfig's region (ListTables), with its keys and billing (DescribeTable). */
  async list(context: InventoryContext, call: CallOptions): Promise<InventoryItem<Table>[]> {
    const region = context.providerConfig.spec.region ?? DEFAULT_REGION;
    const dynamodb = clients.get(clientSettings(context.providerConfig, context.credentials, 'Table', region));
    const abort = { abortSignal: call.signal };
    const paced = { service: AwsServices.dynamodb, signal: call.signal };
    const items: InventoryItem<Table>[] = [];
    let ExclusiveStartTableName: string | undefined;
    do {
      const page = await callAws(context, paced, 'ListTables', () => dynamodb.send(new ListTablesCommand({ ...(ExclusiveStartTableName ? { ExclusiveStartTableName } : {}) }), abort));
      for (const TableName of page.TableNames ?? []) {
        const described = await callAws(context, paced, 'DescribeTable', () => dynamodb.send(new DescribeTableCommand({ TableName }), abort));
        if (!described.Table) continue;
        items.push({ externalName: TableName, spec: { ...keysOf(described.Table), billing: billingOf(described.Table) } });
      }
      ExclusiveStartTableName = page.LastEvaluatedTableName;
    } while (ExclusiveStartTableName);
    return items;
  },
};

/** Closes every cached DynamoDB client. */
export function destroyDynamoDbClients(): void {
  clients.destroyAll();
}
