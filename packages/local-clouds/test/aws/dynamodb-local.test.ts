import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '@k8or/local-clouds';

describe('DynamoDB Local launcher', () => {
  it('starts the real DynamoDB Local jar, serves the real SDK, and stops it', async () => {
    const local = await startDynamoDbLocal();
    const dynamodb = new DynamoDBClient({ region: 'eu-west-1', endpoint: local.endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    try {
      await dynamodb.send(
        new CreateTableCommand({
          TableName: 'launcher-check',
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      assert.equal((await dynamodb.send(new DescribeTableCommand({ TableName: 'launcher-check' }))).Table?.TableStatus, 'ACTIVE');
      // One shared database: another access key and region see the same tables.
      const other = new DynamoDBClient({ region: 'us-east-1', endpoint: local.endpoint, credentials: { accessKeyId: 'c', secretAccessKey: 'd' } });
      assert.deepEqual((await other.send(new ListTablesCommand({}))).TableNames, ['launcher-check']);
      other.destroy();
    } finally {
      dynamodb.destroy();
      await local.stop();
    }
    await assert.rejects(fetch(local.endpoint, { method: 'POST' }));
  });

  it('says what is missing when Java cannot be run', async () => {
    await assert.rejects(startDynamoDbLocal({ javaPath: '/nonexistent/bin/java' }), /DynamoDB Local needs Java 17 or later: cannot run \/nonexistent\/bin\/java/);
  });
});
