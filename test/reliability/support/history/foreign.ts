// Someone else in the same cloud account: the history suite's second actor, straight at each backend with
// the cloud's own SDK (never through the operator's proxies, so none of its calls count as k8or's). It
// creates names with and without owner tags, turns deletion protection on, changes a setting, deletes
// and re-creates; and it reads a resource back for the checker (settings, protection, tags).
import { CreateBucketCommand, DeleteBucketCommand, GetBucketTaggingCommand, GetBucketVersioningCommand, HeadBucketCommand, ListBucketsCommand, PutBucketTaggingCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient, ListTagsOfResourceCommand, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { Bigtable } from '@google-cloud/bigtable';
import { Storage } from '@google-cloud/storage';
import { OwnerTags, MANAGED_BY } from '@k8or/api';
import { SANDBOX_CREDENTIALS } from '../../../support/backends.ts';
import type { Backends } from '../cluster.ts';
import { dynamoDbTables } from '../stores/aws.ts';
import { azureTables } from '../stores/azure.ts';
import { isNotFound } from '../stores/store.ts';
import type { CloudName, Kind } from '../stores/index.ts';

/** What a direct read finds (only the fields the kind has). */
export interface CloudState {
  versioning?: boolean;
  deletionProtection?: boolean;
  /** DynamoDB's TTL attribute; Bigtable: whether family `d` has the provider's TTL rule (any attribute). */
  ttl?: string | boolean;
  /** Owner tags (`k8or.io/*`) found, where the kind has tags. */
  ownerTags?: Record<string, string>;
}

/** One kind of cloud resource in one place (a Bigtable instance counts as a place of its own). */
export interface ForeignHand {
  cloud: CloudName;
  kind: Kind;
  /** Where the resources live: `aws/Bucket`, `gcp/Table@instance`, ... */
  place: string;
  /** Whether a create can carry another owner's mark: another k8or cluster's owner tags (GCS: another project). */
  taggable: boolean;
  /** Whether the kind has a deletion protection someone can turn on. */
  protectable: boolean;
  create(name: string, ownerTags?: Record<string, string>): Promise<void>;
  /** Deletes it, lowering its own protection first (someone else may do that to their own resource). */
  remove(name: string): Promise<void>;
  protect(name: string, on: boolean): Promise<void>;
  /** Changes a setting k8or manages (versioning, TTL, metadata). */
  change(name: string): Promise<void>;
  /** Whether `change` replaces the owner tags too (Azure's Set Container Metadata replaces all metadata). */
  changeReplacesOwnerTags?: boolean;
  /** undefined when the resource is not there (a definite not-found; anything else throws). */
  read(name: string): Promise<CloudState | undefined>;
  names(): Promise<string[]>;
}

/** The owner tags another k8or cluster writes: a live owner k8or must never override. */
export function otherClusterTags(name: string): Record<string, string> {
  return { [OwnerTags.managedBy]: MANAGED_BY, [OwnerTags.cluster]: 'another-cluster', [OwnerTags.namespace]: 'elsewhere', [OwnerTags.name]: name, [OwnerTags.kind]: 'Bucket' };
}

const ownerTagsIn = (tags: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(tags).filter(([key]) => key.startsWith('k8or.io/')));

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isNotFound(error) || (error as { code?: number }).code === 5) return undefined;
    throw error;
  }
}

function s3Hand(endpoint: string): ForeignHand {
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { ...SANDBOX_CREDENTIALS } });
  return {
    cloud: 'aws',
    kind: 'Bucket',
    place: 'aws/Bucket',
    taggable: true,
    protectable: false,
    create: async (name, ownerTags) => {
      // in us-east-1 a CreateBucket of a bucket the account already has answers 200 (the same account
      // as k8or's): only a bucket not there before is someone else's
      const there = await s3.send(new HeadBucketCommand({ Bucket: name })).then(
        () => true,
        (error: unknown) => (isNotFound(error) ? false : Promise.reject(error)),
      );
      if (there) throw new Error(`BucketAlreadyOwnedByYou: the bucket "${name}" is already there`);
      await s3.send(new CreateBucketCommand({ Bucket: name }));
      if (ownerTags) await s3.send(new PutBucketTaggingCommand({ Bucket: name, Tagging: { TagSet: Object.entries(ownerTags).map(([Key, Value]) => ({ Key, Value })) } }));
    },
    remove: async (name) => {
      await s3.send(new DeleteBucketCommand({ Bucket: name }));
    },
    protect: () => Promise.reject(new Error('S3 buckets have no deletion protection')),
    change: async (name) => {
      const status = (await s3.send(new GetBucketVersioningCommand({ Bucket: name }))).Status;
      await s3.send(new PutBucketVersioningCommand({ Bucket: name, VersioningConfiguration: { Status: status === 'Enabled' ? 'Suspended' : 'Enabled' } }));
    },
    read: (name) =>
      orUndefined(async () => {
        await s3.send(new HeadBucketCommand({ Bucket: name }));
        const versioning = (await s3.send(new GetBucketVersioningCommand({ Bucket: name }))).Status === 'Enabled';
        const tags = await s3.send(new GetBucketTaggingCommand({ Bucket: name })).then(
          (answer) => Object.fromEntries((answer.TagSet ?? []).map((tag) => [tag.Key ?? '', tag.Value ?? ''])),
          (error: { name?: string }) => (error.name === 'NoSuchTagSet' ? {} : Promise.reject(error)),
        );
        return { versioning, ownerTags: ownerTagsIn(tags) };
      }),
    names: async () => ((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name ?? ''),
  };
}

function dynamoDbHand(endpoint: string): ForeignHand {
  const dynamodb = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { ...SANDBOX_CREDENTIALS } });
  const listed = dynamoDbTables(endpoint);
  return {
    cloud: 'aws',
    kind: 'Table',
    place: 'aws/Table',
    // the backend is DynamoDB Local behind the proxy that keeps tags
    taggable: true,
    protectable: true,
    create: async (name, ownerTags) => {
      await dynamodb.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
          ...(ownerTags ? { Tags: Object.entries(ownerTags).map(([Key, Value]) => ({ Key, Value })) } : {}),
        }),
      );
    },
    remove: async (name) => {
      const table = (await dynamodb.send(new DescribeTableCommand({ TableName: name }))).Table;
      if (table?.DeletionProtectionEnabled) await dynamodb.send(new UpdateTableCommand({ TableName: name, DeletionProtectionEnabled: false }));
      await dynamodb.send(new DeleteTableCommand({ TableName: name }));
    },
    protect: async (name, on) => {
      await dynamodb.send(new UpdateTableCommand({ TableName: name, DeletionProtectionEnabled: on }));
    },
    change: async (name) => {
      const ttl = (await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription;
      const enabled = ttl?.TimeToLiveStatus === 'ENABLED';
      await dynamodb.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: enabled ? (ttl.AttributeName ?? 'expiresAt') : 'foreignExpiry', Enabled: !enabled } }));
    },
    read: (name) =>
      orUndefined(async () => {
        const table = (await dynamodb.send(new DescribeTableCommand({ TableName: name }))).Table;
        if (!table) return undefined;
        const ttl = (await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: name }))).TimeToLiveDescription;
        const tags = table.TableArn ? ((await dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: table.TableArn }))).Tags ?? []) : [];
        return {
          deletionProtection: table.DeletionProtectionEnabled === true,
          ...(ttl?.TimeToLiveStatus === 'ENABLED' && ttl.AttributeName ? { ttl: ttl.AttributeName } : {}),
          ownerTags: ownerTagsIn(Object.fromEntries(tags.map((tag) => [tag.Key ?? '', tag.Value ?? '']))),
        };
      }),
    names: () => listed.names(),
  };
}

/** The project someone else's GCS buckets go in when marked: the operator's service account gets 403 there. */
export const ANOTHER_GCP_PROJECT = 'someone-elses-project';

function gcsHand(endpoint: string, project: string): ForeignHand {
  // anonymous: the GCS fake lets a caller without credentials act in any project
  const storage = new Storage({ apiEndpoint: endpoint, projectId: project });
  const elsewhere = new Storage({ apiEndpoint: endpoint, projectId: ANOTHER_GCP_PROJECT });
  return {
    cloud: 'gcp',
    kind: 'Bucket',
    place: 'gcp/Bucket',
    taggable: true,
    protectable: false,
    create: async (name, mark) => {
      await (mark ? elsewhere : storage).createBucket(name);
    },
    remove: async (name) => {
      await storage.bucket(name).delete();
    },
    protect: () => Promise.reject(new Error('GCS buckets have no deletion protection here')),
    change: async (name) => {
      const [metadata] = await storage.bucket(name).getMetadata();
      await storage.bucket(name).setMetadata({ versioning: { enabled: metadata.versioning?.enabled !== true } });
    },
    read: (name) =>
      orUndefined(async () => {
        const [metadata] = await storage.bucket(name).getMetadata();
        return { versioning: metadata.versioning?.enabled === true };
      }),
    names: async () => (await storage.getBuckets())[0].map((bucket) => bucket.name),
  };
}

function bigtableHand(host: string, project: string, instance: string): ForeignHand & { close(): Promise<void> } {
  const bigtable = new Bigtable({ projectId: project, apiEndpoint: host, metricsEnabled: false, universeDomain: 'googleapis.com' });
  const admin = bigtable.admin.getTableAdminClient();
  const path = (name: string): string => `projects/${project}/instances/${instance}/tables/${name}`;
  const once = { retry: null } as const;
  return {
    cloud: 'gcp',
    kind: 'Table',
    place: `gcp/Table@${instance}`,
    taggable: false,
    protectable: true,
    create: async (name) => {
      await admin.createTable({ parent: `projects/${project}/instances/${instance}`, tableId: name, table: { columnFamilies: { d: { gcRule: { maxNumVersions: 1 } } } } }, once);
    },
    remove: async (name) => {
      const [table] = await admin.getTable({ name: path(name) }, once);
      if (table.deletionProtection) {
        const [operation] = await admin.updateTable({ table: { name: path(name), deletionProtection: false }, updateMask: { paths: ['deletion_protection'] } }, once);
        await operation.promise();
      }
      await admin.deleteTable({ name: path(name) }, once);
    },
    protect: async (name, on) => {
      const [operation] = await admin.updateTable({ table: { name: path(name), deletionProtection: on }, updateMask: { paths: ['deletion_protection'] } }, once);
      await operation.promise();
    },
    change: async (name) => {
      await admin.modifyColumnFamilies({ name: path(name), modifications: [{ id: 'd', update: { gcRule: { maxNumVersions: 3 } } }] }, once);
    },
    read: (name) =>
      orUndefined(async () => {
        const [table] = await admin.getTable({ name: path(name), view: 'FULL' }, once);
        return { deletionProtection: table.deletionProtection === true, ttl: table.columnFamilies?.['d']?.gcRule?.union !== undefined && table.columnFamilies['d'].gcRule.union !== null };
      }),
    names: async () => (await bigtable.instance(instance).getTables())[0].map((table) => table.id),
    close: async () => {
      await admin.close();
      await bigtable.close();
    },
  };
}

function azureContainerHand(backends: Backends): ForeignHand {
  const { azurite } = backends;
  const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey));
  return {
    cloud: 'azure',
    kind: 'Bucket',
    place: 'azure/Bucket',
    taggable: true,
    protectable: false,
    // metadata names are C# identifiers: k8or writes `k8or.io/name` as `k8or_name`
    create: async (name, ownerTags) => {
      await blobs.getContainerClient(name).create(ownerTags ? { metadata: Object.fromEntries(Object.entries(ownerTags).map(([key, value]) => [`k8or_${key.replace(/^k8or\.io\//, '').replace(/[^A-Za-z0-9_]/g, '_')}`, value])) } : {});
    },
    remove: async (name) => {
      await blobs.getContainerClient(name).delete();
    },
    protect: () => Promise.reject(new Error('Azure containers have no deletion protection here')),
    change: async (name) => {
      await blobs.getContainerClient(name).setMetadata({ changedby: 'someone-else' });
    },
    changeReplacesOwnerTags: true,
    read: (name) =>
      orUndefined(async () => {
        await blobs.getContainerClient(name).getProperties();
        return {};
      }),
    names: async () => {
      const names: string[] = [];
      for await (const container of blobs.listContainers()) names.push(container.name);
      return names;
    },
  };
}

function azureTableHand(backends: Backends): ForeignHand {
  const { azurite } = backends;
  const tables = new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true });
  const listed = azureTables(azurite);
  const names = (): Promise<string[]> => listed.names();
  return {
    cloud: 'azure',
    kind: 'Table',
    place: 'azure/Table',
    taggable: false,
    protectable: false,
    create: async (name) => {
      // the SDK answers a 409 TableAlreadyExists with success: the answer's status tells
      let status: number | undefined;
      await tables.createTable(name, { onResponse: (response) => void (status = response.status) });
      if (status === 409) throw new Error(`TableAlreadyExists: the table "${name}" already exists`);
    },
    remove: async (name) => {
      await tables.deleteTable(name);
    },
    protect: () => Promise.reject(new Error('Azure tables have no deletion protection')),
    change: () => Promise.resolve(),
    read: async (name) => ((await names()).includes(name) ? {} : undefined),
    names,
  };
}

export interface ForeignHands {
  all: ForeignHand[];
  /** The hand of one place. */
  at(place: string): ForeignHand;
  close(): Promise<void>;
}

/** Someone else's hands on every backend of the cluster; Bigtable in each of `bigtableInstances`. */
export function foreignHands(backends: Backends, gcpProject: string, bigtableInstances: readonly string[]): ForeignHands {
  const bigtables = backends.bigtable ? bigtableInstances.map((instance) => bigtableHand(backends.bigtable!, gcpProject, instance)) : [];
  const all: ForeignHand[] = [s3Hand(backends.s3), dynamoDbHand(backends.dynamodb), gcsHand(backends.gcs, gcpProject), ...bigtables, azureContainerHand(backends), azureTableHand(backends)];
  return {
    all,
    at: (place) => {
      const hand = all.find((h) => h.place === place);
      if (!hand) throw new Error(`no cloud place ${place} in this run`);
      return hand;
    },
    close: async () => {
      for (const hand of bigtables) await hand.close();
    },
  };
}
