// Data a user keeps in the buckets and tables, written with the real SDKs before the faults and read
// back after: `Retain`, `forceDelete: false`, `deletionProtection` and `k8or.io/protect` must lose none.
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient, GetItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { SANDBOX_CREDENTIALS } from '../../support/backends.ts';
import type { Entry } from './resources.ts';

export interface CloudClients {
  s3: S3Client;
  dynamodb: DynamoDBClient;
}

/** SDK clients straight to the backends (not through the operator's proxies). */
export function cloudClients(endpoints: { s3: string; dynamodb: string }): CloudClients {
  const credentials = SANDBOX_CREDENTIALS;
  return {
    s3: new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials }),
    dynamodb: new DynamoDBClient({ endpoint: endpoints.dynamodb, region: 'us-east-1', credentials }),
  };
}

const OBJECTS_PER_BUCKET = 3;
const ITEMS_PER_TABLE = 3;

const objectBody = (bucket: string, i: number): string => `object ${i} of ${bucket}: ${'x'.repeat(100 + i)}`;

/** Writes the data of one resource (objects or items) and marks it in the ledger. */
export async function writeData(clients: CloudClients, entry: Entry): Promise<void> {
  if (entry.kind === 'Bucket') {
    for (let i = 0; i < OBJECTS_PER_BUCKET; i++) {
      await clients.s3.send(new PutObjectCommand({ Bucket: entry.externalName, Key: `data/${i}.txt`, Body: objectBody(entry.externalName, i) }));
    }
  } else {
    for (let i = 0; i < ITEMS_PER_TABLE; i++) {
      await clients.dynamodb.send(new PutItemCommand({ TableName: entry.externalName, Item: { id: { S: `item-${i}` }, value: { N: String(i * 7) }, owner: { S: entry.name } } }));
    }
  }
  entry.holdsData = true;
}

/** Reads the data back; a list of what is missing or changed (empty: nothing lost). */
export async function lostData(clients: CloudClients, entry: Entry): Promise<string[]> {
  const lost: string[] = [];
  if (entry.kind === 'Bucket') {
    const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: entry.externalName })).catch((error: Error) => error);
    if (listed instanceof Error) return [`bucket ${entry.externalName}: ${listed.name} ${listed.message}`];
    for (let i = 0; i < OBJECTS_PER_BUCKET; i++) {
      const key = `data/${i}.txt`;
      const got = await clients.s3.send(new GetObjectCommand({ Bucket: entry.externalName, Key: key })).catch((error: Error) => error);
      if (got instanceof Error) lost.push(`s3://${entry.externalName}/${key}: ${got.name}`);
      else if ((await got.Body?.transformToString()) !== objectBody(entry.externalName, i)) lost.push(`s3://${entry.externalName}/${key}: content changed`);
    }
    if ((listed.KeyCount ?? 0) !== OBJECTS_PER_BUCKET) lost.push(`bucket ${entry.externalName} lists ${listed.KeyCount} objects, not ${OBJECTS_PER_BUCKET}`);
  } else {
    const scanned = await clients.dynamodb.send(new ScanCommand({ TableName: entry.externalName })).catch((error: Error) => error);
    if (scanned instanceof Error) return [`table ${entry.externalName}: ${scanned.name} ${scanned.message}`];
    for (let i = 0; i < ITEMS_PER_TABLE; i++) {
      const got = await clients.dynamodb.send(new GetItemCommand({ TableName: entry.externalName, Key: { id: { S: `item-${i}` } }, ConsistentRead: true }));
      if (!got.Item) lost.push(`${entry.externalName}[item-${i}]: missing`);
      else if (got.Item['value']?.N !== String(i * 7) || got.Item['owner']?.S !== entry.name) lost.push(`${entry.externalName}[item-${i}]: changed`);
    }
    if ((scanned.Count ?? 0) !== ITEMS_PER_TABLE) lost.push(`table ${entry.externalName} holds ${scanned.Count} items, not ${ITEMS_PER_TABLE}`);
  }
  return lost;
}
