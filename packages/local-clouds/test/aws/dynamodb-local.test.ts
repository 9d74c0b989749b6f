import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { waitFor } from '@k8or/core/testing';
import { startDynamoDbLocal } from '@k8or/local-clouds';
import { isListening, isRunning, startOwningParent } from '../process-helpers.ts';

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

  it('leaves no JVM and no bound port behind when its parent is killed with SIGKILL', async () => {
    const { parent, backend } = await startOwningParent('dynamodb');
    try {
      assert.ok(isRunning(backend.pid), 'the JVM runs');
      assert.ok(await isListening(backend.port), 'DynamoDB Local listens');
      parent.kill('SIGKILL');
      await waitFor('the JVM to end after its parent was killed', () => !isRunning(backend.pid));
      await waitFor('the DynamoDB Local port to be free', async () => !(await isListening(backend.port)));
    } finally {
      parent.kill('SIGKILL');
      if (isRunning(backend.pid)) process.kill(backend.pid, 'SIGKILL');
    }
  });
});
