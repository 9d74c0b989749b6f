import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal, startS3Fake, type DynamoDbLocal, type S3Fake } from '@k8or/local-clouds';
import { bucketConnector, tableConnector } from '@k8or/provider-aws';
import { awsProviderConfig, call, credentials } from './support.ts';

describe('Connector.list (k8or import): what the account holds, read only', () => {
  let s3Fake: S3Fake;
  let dynamoDbLocal: DynamoDbLocal | undefined;

  before(async () => {
    s3Fake = await startS3Fake();
    dynamoDbLocal = await startDynamoDbLocal().catch(() => undefined);
  });
  after(async () => {
    await dynamoDbLocal?.stop();
    await s3Fake.stop();
  });

  const inventoryContext = (endpoints: { bucket?: string; table?: string }, calls: string[]) => ({
    providerConfig: awsProviderConfig(endpoints, 'eu-west-1'),
    credentials,
    recordCall: async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
      calls.push(operation);
      return await run();
    },
  });

  it('lists every S3 bucket with its region, through ListBuckets and GetBucketLocation only', async () => {
    const s3 = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    await s3.send(new CreateBucketCommand({ Bucket: 'inventory-east' }));
    const west = new S3Client({ endpoint: s3Fake.endpoint, region: 'eu-west-1', forcePathStyle: true, credentials });
    await west.send(new CreateBucketCommand({ Bucket: 'inventory-west', CreateBucketConfiguration: { LocationConstraint: 'eu-west-1' } }));
    const calls: string[] = [];
    const before = s3Fake.requests.length;
    const items = await bucketConnector.list?.(inventoryContext({ bucket: s3Fake.endpoint }, calls), call);
    assert.deepEqual(
      items?.filter((i) => i.externalName.startsWith('inventory-')).sort((a, b) => a.externalName.localeCompare(b.externalName)),
      [
        { externalName: 'inventory-east', spec: { location: 'us-east-1' } },
        { externalName: 'inventory-west', spec: { location: 'eu-west-1' } },
      ],
    );
    assert.ok(calls.every((c) => c === 'ListBuckets' || c === 'GetBucketLocation'), calls.join(','));
    assert.deepEqual(s3Fake.requests.slice(before).filter((r) => r.method !== 'GET' && r.method !== 'HEAD'), []);
    s3.destroy();
    west.destroy();
  });

  it('lists every DynamoDB table of the region with its keys and billing', async (t) => {
    if (!dynamoDbLocal) {
      t.skip('DynamoDB Local did not start (Java 17 missing)');
      return;
    }
    const dynamodb = new DynamoDBClient({ endpoint: dynamoDbLocal.endpoint, region: 'eu-west-1', credentials });
    await dynamodb.send(
      new CreateTableCommand({
        TableName: 'InventoryEvents',
        KeySchema: [{ AttributeName: 'device', KeyType: 'HASH' }, { AttributeName: 'at', KeyType: 'RANGE' }],
        AttributeDefinitions: [{ AttributeName: 'device', AttributeType: 'S' }, { AttributeName: 'at', AttributeType: 'N' }],
        ProvisionedThroughput: { ReadCapacityUnits: 2, WriteCapacityUnits: 1 },
      }),
    );
    const calls: string[] = [];
    const items = await tableConnector.list?.(inventoryContext({ table: dynamoDbLocal.endpoint }, calls), call);
    assert.deepEqual(
      items?.find((i) => i.externalName === 'InventoryEvents'),
      {
        externalName: 'InventoryEvents',
        spec: { partitionKey: { name: 'device', type: 'string' }, sortKey: { name: 'at', type: 'number' }, billing: { mode: 'provisioned', readCapacity: 2, writeCapacity: 1 } },
      },
    );
    assert.ok(calls.every((c) => c === 'ListTables' || c === 'DescribeTable'), calls.join(','));
    dynamodb.destroy();
  });
});
