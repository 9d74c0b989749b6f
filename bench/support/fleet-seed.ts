// Seeding a sharded fleet at scale (bench/sharding.bench.ts `--template`): the rest of the objects
// become copies of ones the fleet made itself, as `operator-memory.bench.ts` seeds Buckets. Each copy
// is the template's object (spec and status, renamed; without its shard labels, which the assigner
// gives), and its cloud resource: the template's S3 bucket copied in the S3 fake's state folder,
// or a DynamoDB table created with the template's key schema, billing mode, deletion protection,
// tags (renamed), point-in-time recovery and TTL. A copy that differs from what the engine would
// have made shows as cloud or API writes once the replicas check it.
import { readFile, writeFile } from 'node:fs/promises';
import {
  CreateTableCommand,
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTagsOfResourceCommand,
  UpdateContinuousBackupsCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { isAlreadyExists, k8orPath, type KubeRest } from '@k8or/core';
import { s3BucketFile } from '@k8or/local-clouds';
import { specDigest } from '@k8or/core/policy';
import { SANDBOX_CREDENTIALS } from '../../test/support/backends.ts';
import { DRAIN_LABEL, OBJECT_NAMESPACE, SHARD_LABEL, externalNameOf, inBatches, type Fleet, type FleetKind, type FleetProviderConfig } from '../../test/reliability/support/shard-fleet.ts';

type FleetObject = { kind: FleetKind; name: string; providerConfig: FleetProviderConfig };
type Stored = { metadata: Record<string, unknown> & { name: string; generation?: number; labels?: Record<string, string> }; spec: Record<string, unknown>; status?: Record<string, unknown> };

/** `text` with the template's name (`b-0`, and so `k8or-fleet-b-0`) as `name`. */
const renamed = (text: string, template: string, name: string) => text.replace(new RegExp(`\\b${template}\\b`, 'g'), name);

/** The template of each kind and ProviderConfig: the first of `templates` that matches. */
function templateFor(templates: readonly FleetObject[], object: FleetObject): FleetObject {
  const template = templates.find((t) => t.kind === object.kind && t.providerConfig === object.providerConfig);
  if (!template) throw new Error(`no template ${object.kind} on ${object.providerConfig}`);
  return template;
}

/** Writes every object of `seeds` through the API: the template's object renamed, then its status as the engine would have written it. */
export async function seedObjects(admin: KubeRest, templates: readonly FleetObject[], seeds: readonly FleetObject[]): Promise<void> {
  const texts = new Map<string, { object: string; status: string }>();
  for (const template of templates) {
    const stored = await admin.get<Stored>(k8orPath(template.kind, OBJECT_NAMESPACE, template.name));
    if (!stored?.status) throw new Error(`template ${template.kind} ${template.name} missing or without status`);
    const { uid: _u, resourceVersion: _r, creationTimestamp: _c, managedFields: _m, generation: _g, labels, ...metadata } = stored.metadata;
    const { [SHARD_LABEL[template.kind]]: _shard, [DRAIN_LABEL[template.kind]]: _drain, ...kept } = labels ?? {};
    const object = { ...stored, metadata: { ...metadata, ...(Object.keys(kept).length > 0 ? { labels: kept } : {}) }, status: undefined };
    texts.set(`${template.kind}/${template.name}`, { object: JSON.stringify(object), status: JSON.stringify(stored.status) });
  }
  await inBatches(seeds, async (seed) => {
    const template = templateFor(templates, seed);
    const text = texts.get(`${template.kind}/${template.name}`)!;
    let created: Stored;
    try {
      created = await admin.create<Stored>(k8orPath(seed.kind, OBJECT_NAMESPACE), JSON.parse(renamed(text.object, template.name, seed.name)));
    } catch (error) {
      // A create retried after a reset connection that had gone through: take the stored object.
      const stored = isAlreadyExists(error) ? await admin.get<Stored>(k8orPath(seed.kind, OBJECT_NAMESPACE, seed.name)) : undefined;
      if (!stored) throw error;
      created = stored;
    }
    const status = JSON.parse(renamed(text.status, template.name, seed.name)) as Record<string, unknown> & { conditions?: Array<Record<string, unknown>> };
    const generation = created.metadata.generation;
    await admin.update(k8orPath(seed.kind, OBJECT_NAMESPACE, seed.name, 'status'), {
      ...created,
      status: { ...status, observedGeneration: generation, appliedSpecDigest: specDigest(created.spec), conditions: status.conditions?.map((c) => ({ ...c, observedGeneration: generation })) },
    });
  });
}

/** Copies each template's bucket to every Bucket of `seeds`, as files of the S3 fake's state folder (the fake restarted around it). */
export async function seedBuckets(fleet: Fleet, templates: readonly FleetObject[], seeds: readonly FleetObject[]): Promise<void> {
  const dataDir = fleet.s3DataDir;
  if (!dataDir) throw new Error('the fleet keeps no S3 state folder (keepS3State)');
  const buckets = seeds.filter((s) => s.kind === 'Bucket');
  if (buckets.length === 0) return;
  // The fake writes a bucket's file after each change to it: stopped, the files are as they last were, and are read again at its start.
  await fleet.restartS3(async () => {
    const texts = new Map<string, string>();
    for (const template of templates.filter((t) => t.kind === 'Bucket')) texts.set(template.name, await readFile(s3BucketFile(dataDir, externalNameOf('Bucket', template.name)), 'utf8'));
    await inBatches(buckets, async (seed) => {
      const template = templateFor(templates, seed);
      const text = texts.get(template.name);
      if (text === undefined) throw new Error(`template bucket ${externalNameOf('Bucket', template.name)} missing`);
      await writeFile(s3BucketFile(dataDir, externalNameOf('Bucket', seed.name)), renamed(text, template.name, seed.name));
    });
  });
}

/** Creates each Table of `seeds` in DynamoDB (not through the recording proxies) as its template's table is. */
export async function seedTables(fleet: Fleet, templates: readonly FleetObject[], seeds: readonly FleetObject[], parallel = 8): Promise<void> {
  const tables = seeds.filter((s) => s.kind === 'Table');
  if (tables.length === 0) return;
  const client = new DynamoDBClient({ endpoint: fleet.dynamodbEndpoint, region: 'us-east-1', credentials: { accessKeyId: SANDBOX_CREDENTIALS.accessKeyId, secretAccessKey: SANDBOX_CREDENTIALS.secretAccessKey } });
  try {
    const copies = new Map<string, { create: string; pitr: boolean; ttl: string | undefined }>();
    for (const template of templates.filter((t) => t.kind === 'Table')) {
      const TableName = externalNameOf('Table', template.name);
      const table = (await client.send(new DescribeTableCommand({ TableName }))).Table;
      if (!table?.TableArn) throw new Error(`template table ${TableName} missing`);
      const tags = (await client.send(new ListTagsOfResourceCommand({ ResourceArn: table.TableArn }))).Tags ?? [];
      const pitr = (await client.send(new DescribeContinuousBackupsCommand({ TableName }))).ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus === 'ENABLED';
      const ttl = (await client.send(new DescribeTimeToLiveCommand({ TableName }))).TimeToLiveDescription;
      const billing = table.BillingModeSummary?.BillingMode ?? 'PROVISIONED';
      const create: CreateTableCommandInput = {
        TableName,
        KeySchema: table.KeySchema,
        AttributeDefinitions: table.AttributeDefinitions,
        BillingMode: billing,
        ...(billing === 'PROVISIONED' ? { ProvisionedThroughput: { ReadCapacityUnits: table.ProvisionedThroughput?.ReadCapacityUnits ?? 1, WriteCapacityUnits: table.ProvisionedThroughput?.WriteCapacityUnits ?? 1 } } : {}),
        DeletionProtectionEnabled: table.DeletionProtectionEnabled ?? false,
        Tags: tags,
      };
      copies.set(template.name, { create: JSON.stringify(create), pitr, ttl: ttl?.TimeToLiveStatus === 'ENABLED' ? ttl.AttributeName : undefined });
    }
    await inBatches(tables, async (seed) => {
      const template = templateFor(templates, seed);
      const copy = copies.get(template.name)!;
      const input = JSON.parse(renamed(copy.create, template.name, seed.name)) as CreateTableCommandInput;
      try {
        await client.send(new CreateTableCommand(input));
      } catch (error) {
        // A create retried after a reset connection that had gone through.
        if ((error as { name?: string }).name !== 'ResourceInUseException') throw error;
      }
      if (copy.pitr) await client.send(new UpdateContinuousBackupsCommand({ TableName: input.TableName, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }));
      if (copy.ttl) await client.send(new UpdateTimeToLiveCommand({ TableName: input.TableName, TimeToLiveSpecification: { AttributeName: copy.ttl, Enabled: true } }));
    }, parallel);
  } finally {
    client.destroy();
  }
}
