// S3 buckets and DynamoDB tables, straight at the S3 fake and DynamoDB Local.
import { createHash } from 'node:crypto';
import { GetBucketTaggingCommand, GetBucketVersioningCommand, HeadBucketCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient, GetItemCommand, ListTablesCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { SANDBOX_CREDENTIALS } from '../../../support/backends.ts';
import { DATA_PER_HOLDER, isNotFound, objectBody, type Store } from './store.ts';

// (each client gets a copy of the credentials: the SDK marks the object it is given with a `$source`,
// which would then travel into the credentials Secret the admin applies again in a later phase)
export function s3Buckets(endpoint: string): Store {
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { ...SANDBOX_CREDENTIALS } });
  return {
    cloud: 'aws',
    kind: 'Bucket',
    dialect: 's3',
    writes: { create: 'PUT /bucket', delete: 'DELETE /bucket', settings: ['PUT /bucket?versioning', 'PUT /bucket?tagging'] },
    // an observe: GetBucketLocation, then versioning, public access block, encryption, lifecycle and
    // tagging read (6); an update: at most those five put (17 with the observes). (A create: CreateBucket,
    // GetBucketTagging, tags, public access, encryption, versioning, lifecycle: 1 + 7 + 6 = 14; a delete:
    // DeleteBucket, 6 + 1 + 6.)
    callsPerReconcile: 17,
    editable: true,
    exists: async (name) => {
      try {
        await s3.send(new HeadBucketCommand({ Bucket: name }));
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    names: async () => ((await s3.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name ?? ''),
    settingsProblems: async (entry) => {
      const problems: string[] = [];
      const status = (await s3.send(new GetBucketVersioningCommand({ Bucket: entry.externalName }))).Status;
      const want = entry.desired.versioning ? 'Enabled' : status === undefined ? undefined : 'Suspended';
      if (status !== want) problems.push(`versioning ${status ?? 'never enabled'} in S3, spec says ${entry.desired.versioning}`);
      const tags = await s3.send(new GetBucketTaggingCommand({ Bucket: entry.externalName })).then(
        (answer) => answer.TagSet ?? [],
        (error: { name?: string }) => (error.name === 'NoSuchTagSet' ? [] : Promise.reject(error)),
      );
      const round = tags.find((tag) => tag.Key === 'round')?.Value;
      if (round !== entry.desired.round) problems.push(`label round ${round ?? 'unset'} in the bucket's tags, spec says ${entry.desired.round ?? 'unset'}`);
      return problems;
    },
    writeData: async (entry) => {
      for (let i = 0; i < DATA_PER_HOLDER; i++) await s3.send(new PutObjectCommand({ Bucket: entry.externalName, Key: `data/${i}.txt`, Body: objectBody(entry.externalName, i) }));
    },
    lostData: async (entry) => {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: entry.externalName })).catch((error: Error) => error);
      if (listed instanceof Error) return [`bucket ${entry.externalName}: ${listed.name} ${listed.message}`];
      // the S3 fake keeps each object's size and MD5 (its ETag), not its bytes: those are what is compared
      const lost: string[] = [];
      for (let i = 0; i < DATA_PER_HOLDER; i++) {
        const key = `data/${i}.txt`;
        const body = objectBody(entry.externalName, i);
        const found = listed.Contents?.find((o) => o.Key === key);
        if (!found) lost.push(`s3://${entry.externalName}/${key}: missing`);
        else if (found.ETag !== `"${createHash('md5').update(body).digest('hex')}"` || found.Size !== Buffer.byteLength(body)) lost.push(`s3://${entry.externalName}/${key}: content changed`);
      }
      if ((listed.KeyCount ?? 0) !== DATA_PER_HOLDER) lost.push(`bucket ${entry.externalName} lists ${listed.KeyCount} objects, not ${DATA_PER_HOLDER}`);
      return lost;
    },
  };
}

export function dynamoDbTables(endpoint: string): Store {
  const dynamodb = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { ...SANDBOX_CREDENTIALS } });
  return {
    cloud: 'aws',
    kind: 'Table',
    dialect: 'dynamodb',
    writes: { create: 'CreateTable', delete: 'DeleteTable', settings: ['UpdateTable', 'UpdateTimeToLive'] },
    // an observe: DescribeTable, DescribeTimeToLive, DescribeContinuousBackups, ListTagsOfResource (4);
    // an update: UpdateTable, UpdateTimeToLive twice (the old attribute off, the new on), DescribeTable
    // and UntagResource and TagResource for tags, UpdateContinuousBackups (7): 4 + 7 + 4. (A create:
    // CreateTable, DescribeTable and ListTagsOfResource when the name is taken, UpdateTimeToLive,
    // UpdateContinuousBackups: 1 + 5 + 4; a delete: DescribeTable, UpdateTable, DeleteTable: 4 + 3 + 4.)
    callsPerReconcile: 15,
    editable: true,
    exists: async (name) => {
      try {
        return (await dynamodb.send(new DescribeTableCommand({ TableName: name }))).Table !== undefined;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    names: async () => {
      const names: string[] = [];
      let start: string | undefined;
      do {
        const page = await dynamodb.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
        names.push(...(page.TableNames ?? []));
        start = page.LastEvaluatedTableName;
      } while (start);
      return names;
    },
    settingsProblems: async (entry) => {
      const ttl = (await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: entry.externalName }))).TimeToLiveDescription;
      const actual = ttl?.TimeToLiveStatus === 'ENABLED' ? ttl.AttributeName : undefined;
      return actual === entry.desired.ttlAttribute ? [] : [`TTL attribute ${actual ?? 'none'} in DynamoDB, spec says ${entry.desired.ttlAttribute ?? 'none'}`];
    },
    writeData: async (entry) => {
      for (let i = 0; i < DATA_PER_HOLDER; i++) {
        await dynamodb.send(new PutItemCommand({ TableName: entry.externalName, Item: { id: { S: `item-${i}` }, value: { N: String(i * 7) }, owner: { S: entry.name } } }));
      }
    },
    lostData: async (entry) => {
      const scanned = await dynamodb.send(new ScanCommand({ TableName: entry.externalName })).catch((error: Error) => error);
      if (scanned instanceof Error) return [`table ${entry.externalName}: ${scanned.name} ${scanned.message}`];
      const lost: string[] = [];
      for (let i = 0; i < DATA_PER_HOLDER; i++) {
        const got = await dynamodb.send(new GetItemCommand({ TableName: entry.externalName, Key: { id: { S: `item-${i}` } }, ConsistentRead: true }));
        if (!got.Item) lost.push(`${entry.externalName}[item-${i}]: missing`);
        else if (got.Item['value']?.N !== String(i * 7) || got.Item['owner']?.S !== entry.name) lost.push(`${entry.externalName}[item-${i}]: changed`);
      }
      if ((scanned.Count ?? 0) !== DATA_PER_HOLDER) lost.push(`table ${entry.externalName} holds ${scanned.Count} items, not ${DATA_PER_HOLDER}`);
      return lost;
    },
  };
}
