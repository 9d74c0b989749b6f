import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, GetItemCommand, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '@k8or/local-clouds';
import { assertBackendEndsWithItsKilledParent } from '../process-helpers.ts';
import { isLoopback, listeningAddresses } from './listening-addresses.ts';

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

  it('listens on 127.0.0.1 only, never on every interface', async () => {
    const local = await startDynamoDbLocal();
    try {
      const port = Number(new URL(local.endpoint).port);
      const addresses = listeningAddresses(port);
      assert.ok(addresses.length > 0, `a listening socket on port ${port}`);
      assert.deepEqual(addresses.filter((address) => !isLoopback(address)), [], `DynamoDB Local listens on ${addresses.join(', ')}`);
      assert.equal(local.listensOn, '127.0.0.1');
    } finally {
      await local.stop();
    }
  });

  it('resolves only once DynamoDB calls are answered, not when its HTTP server first answers', async () => {
    // The JVM's HTTP server answers seconds before its DynamoDB request path has loaded; that first
    // call must not land in a caller's wait (it made Table tests time out on a loaded machine).
    const local = await startDynamoDbLocal({ javaPath: fileURLToPath(new URL('../fixtures/slow-dynamodb-java.mjs', import.meta.url)) });
    const dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint: local.endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, maxAttempts: 1 });
    try {
      assert.deepEqual((await dynamodb.send(new ListTablesCommand({}))).TableNames, []);
    } finally {
      dynamodb.destroy();
      await local.stop();
    }
  });

  it('says what is missing when Java cannot be run', async () => {
    await assert.rejects(startDynamoDbLocal({ javaPath: '/nonexistent/bin/java' }), /DynamoDB Local needs Java 17 or later: cannot run \/nonexistent\/bin\/java/);
  });

  it('leaves no JVM and no bound port behind when its parent is killed with SIGKILL', async () => {
    await assertBackendEndsWithItsKilledParent('dynamodb');
  });


  it('keeps tables and items in dataDir across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8or-dynamodb-local-'));
    const connect = (endpoint: string): DynamoDBClient => new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    try {
      const first = await startDynamoDbLocal({ dataDir });
      const dynamodb = connect(first.endpoint);
      await dynamodb.send(
        new CreateTableCommand({
          TableName: 'kept-table',
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      await dynamodb.send(new PutItemCommand({ TableName: 'kept-table', Item: { id: { S: 'order-1' }, total: { N: '42' } } }));
      dynamodb.destroy();
      await first.stop();

      const second = await startDynamoDbLocal({ dataDir });
      const again = connect(second.endpoint);
      try {
        assert.deepEqual((await again.send(new ListTablesCommand({}))).TableNames, ['kept-table']);
        const item = await again.send(new GetItemCommand({ TableName: 'kept-table', Key: { id: { S: 'order-1' } } }));
        assert.deepEqual(item.Item, { id: { S: 'order-1' }, total: { N: '42' } });
      } finally {
        again.destroy();
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
