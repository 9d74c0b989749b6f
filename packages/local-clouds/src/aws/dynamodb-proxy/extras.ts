import type { ExtrasStore, TableExtras, TableTag } from './state.js';
import { DynamoDbErrors } from './errors.js';

// The DynamoDB operations DynamoDB Local does not serve, as DynamoDB documents and answers them:
// TagResource, UntagResource, ListTagsOfResource, DescribeContinuousBackups, UpdateContinuousBackups.

/** A table's CreationDateTime (epoch milliseconds) from DynamoDB Local: undefined when there is no such table. */
export type DescribeTable = (table: string) => Promise<{ created: number } | undefined>;

export interface ExtrasContext {
  store: ExtrasStore;
  describe: DescribeTable;
  now: () => Date;
}

const MAX_TAGS = 50;
const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[^:]*:[^:]*:table\/([A-Za-z0-9_.-]{3,255})$/;
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

type Input = Record<string, unknown>;

const tableOfArn = (arn: unknown): string => {
  if (typeof arn !== 'string' || arn === '') throw DynamoDbErrors.validation('Invalid TableArn');
  const name = TABLE_ARN.exec(arn)?.[1];
  if (name === undefined) throw DynamoDbErrors.validation(`Invalid TableArn: Invalid ResourceArn provided as input ${arn}`);
  return name;
};

/** TableName of the continuous-backups calls: a name or a table ARN. */
const tableOfNameOrArn = (value: unknown): string => {
  if (typeof value !== 'string') throw DynamoDbErrors.validation("1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null");
  const name = TABLE_ARN.exec(value)?.[1] ?? value;
  if (!TABLE_NAME.test(name)) {
    throw DynamoDbErrors.validation(`1 validation error detected: Value '${value}' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+`);
  }
  return name;
};

/**
 * Tags as DynamoDB accepts them: keys of 1 to 128 characters, values up to 256, none starting with
 * the reserved `aws:`, no key twice.
 */
export function validTags(value: unknown, parameter: string): TableTag[] {
  if (!Array.isArray(value)) throw DynamoDbErrors.validation(`1 validation error detected: Value null at '${parameter}' failed to satisfy constraint: Member must not be null`);
  const tags: TableTag[] = [];
  for (const [index, entry] of value.entries()) {
    const tag = entry as { Key?: unknown; Value?: unknown };
    if (typeof tag.Key !== 'string' || typeof tag.Value !== 'string') {
      throw DynamoDbErrors.validation(`1 validation error detected: Value null at '${parameter}.${index + 1}.member.${typeof tag.Key !== 'string' ? 'key' : 'value'}' failed to satisfy constraint: Member must not be null`);
    }
    if (tag.Key.length < 1 || tag.Key.length > 128) {
      throw DynamoDbErrors.validation(`1 validation error detected: Value '${tag.Key}' at '${parameter}.${index + 1}.member.key' failed to satisfy constraint: Member must have length less than or equal to 128`);
    }
    if (tag.Value.length > 256) {
      throw DynamoDbErrors.validation(`1 validation error detected: Value '${tag.Value}' at '${parameter}.${index + 1}.member.value' failed to satisfy constraint: Member must have length less than or equal to 256`);
    }
    if (tag.Key.startsWith('aws:')) throw DynamoDbErrors.validation(`Tag key '${tag.Key}' is reserved: tag keys starting with 'aws:' are for AWS use`);
    if (tags.some((t) => t.Key === tag.Key)) throw DynamoDbErrors.validation(`Duplicate tag keys found: ${tag.Key}`);
    tags.push({ Key: tag.Key, Value: tag.Value });
  }
  return tags;
}

async function extrasOf(context: ExtrasContext, table: string, missing: () => Error): Promise<TableExtras> {
  const described = await context.describe(table);
  if (!described) throw missing();
  return context.store.get(table, described.created);
}

async function tagResource(context: ExtrasContext, input: Input): Promise<object> {
  const arn = input['ResourceArn'];
  const table = tableOfArn(arn);
  const tags = validTags(input['Tags'], 'tags');
  if (tags.length === 0) throw DynamoDbErrors.validation('Atleast one Tag needs to be provided as Input.');
  const extras = await extrasOf(context, table, () => DynamoDbErrors.resourceNotFound(String(arn)));
  const merged = [...extras.tags.filter((t) => !tags.some((n) => n.Key === t.Key)), ...tags];
  if (merged.length > MAX_TAGS) throw DynamoDbErrors.validation(`The number of tags on the resource exceeds the limit of ${MAX_TAGS}`);
  context.store.set(table, { ...extras, tags: merged });
  return {};
}

async function untagResource(context: ExtrasContext, input: Input): Promise<object> {
  const arn = input['ResourceArn'];
  const table = tableOfArn(arn);
  const keys = input['TagKeys'];
  if (!Array.isArray(keys)) throw DynamoDbErrors.validation("1 validation error detected: Value null at 'tagKeys' failed to satisfy constraint: Member must not be null");
  if (keys.length === 0) throw DynamoDbErrors.validation('Atleast one Tag Key needs to be provided as Input.');
  const extras = await extrasOf(context, table, () => DynamoDbErrors.resourceNotFound(String(arn)));
  context.store.set(table, { ...extras, tags: extras.tags.filter((t) => !keys.includes(t.Key)) });
  return {};
}

async function listTagsOfResource(context: ExtrasContext, input: Input): Promise<object> {
  const arn = input['ResourceArn'];
  const table = tableOfArn(arn);
  const extras = await extrasOf(context, table, () => DynamoDbErrors.resourceNotFound(String(arn)));
  return { Tags: extras.tags };
}

function continuousBackupsDescription(extras: TableExtras, now: Date): object {
  const recovery = extras.pointInTimeRecovery;
  const nowSeconds = now.getTime() / 1000;
  return {
    ContinuousBackupsDescription: {
      ContinuousBackupsStatus: 'ENABLED',
      PointInTimeRecoveryDescription: recovery
        ? {
            PointInTimeRecoveryStatus: 'ENABLED',
            RecoveryPeriodInDays: recovery.recoveryPeriodInDays,
            EarliestRestorableDateTime: Math.max(recovery.since, nowSeconds - recovery.recoveryPeriodInDays * 86_400),
            // DynamoDB can restore to about five minutes ago.
            LatestRestorableDateTime: Math.max(recovery.since, nowSeconds - 300),
          }
        : { PointInTimeRecoveryStatus: 'DISABLED' },
    },
  };
}

async function describeContinuousBackups(context: ExtrasContext, input: Input): Promise<object> {
  const table = tableOfNameOrArn(input['TableName']);
  const extras = await extrasOf(context, table, () => DynamoDbErrors.tableNotFound(table));
  return continuousBackupsDescription(extras, context.now());
}

async function updateContinuousBackups(context: ExtrasContext, input: Input): Promise<object> {
  const table = tableOfNameOrArn(input['TableName']);
  const specification = input['PointInTimeRecoverySpecification'] as { PointInTimeRecoveryEnabled?: unknown; RecoveryPeriodInDays?: unknown } | undefined;
  if (typeof specification?.PointInTimeRecoveryEnabled !== 'boolean') {
    throw DynamoDbErrors.validation(
      "1 validation error detected: Value null at 'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled' failed to satisfy constraint: Member must not be null",
    );
  }
  const days = specification.RecoveryPeriodInDays ?? 35;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 35) {
    throw DynamoDbErrors.validation('RecoveryPeriodInDays must be an integer between 1 and 35');
  }
  if (!specification.PointInTimeRecoveryEnabled && specification.RecoveryPeriodInDays !== undefined) {
    throw DynamoDbErrors.validation('RecoveryPeriodInDays can only be set when PointInTimeRecoveryEnabled is true');
  }
  const extras = await extrasOf(context, table, () => DynamoDbErrors.tableNotFound(table));
  const now = context.now();
  const { pointInTimeRecovery: current, ...rest } = extras;
  const updated: TableExtras = specification.PointInTimeRecoveryEnabled
    ? { ...rest, pointInTimeRecovery: { since: current?.since ?? now.getTime() / 1000, recoveryPeriodInDays: days } }
    : rest;
  context.store.set(table, updated);
  return continuousBackupsDescription(updated, now);
}

/** The operations this proxy answers itself, by X-Amz-Target operation name. */
export const EXTRA_OPERATIONS: Readonly<Record<string, (context: ExtrasContext, input: Input) => Promise<object>>> = {
  TagResource: tagResource,
  UntagResource: untagResource,
  ListTagsOfResource: listTagsOfResource,
  DescribeContinuousBackups: describeContinuousBackups,
  UpdateContinuousBackups: updateContinuousBackups,
};
