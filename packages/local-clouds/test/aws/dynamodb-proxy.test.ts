// DynamoDB Local behind the proxy, driven by the real @aws-sdk/client-dynamodb: tags, point-in-time
// recovery and signature checks as DynamoDB answers them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeContinuousBackupsCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  ListTagsOfResourceCommand,
  PutItemCommand,
  TagResourceCommand,
  UntagResourceCommand,
  UpdateContinuousBackupsCommand,
  type Tag,
} from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal, startDynamoDbProxy, type DynamoDbLocal, type DynamoDbProxy } from '@k8or/local-clouds';

const ACCESS_KEY = 'AKIAPROXYTEST0000001';
const SECRET = 'proxy-test-secret';

/** Matches an SDK error by its DynamoDB name and HTTP status. */
const dynamoDbError =
  (name: string, status = 400) =>
  (error: unknown): boolean =>
    error instanceof Error && error.name === name && (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === status;

/** Why the AWS CLI cannot be run here, if it cannot. */
const awsCliMissing = await new Promise<string | undefined>((resolve) =>
  execFile('aws', ['--version'], (error) => resolve(error ? `the AWS CLI is not installed (apt-get install awscli): ${error.message}` : undefined)),
);

const byKey = (tags: Tag[] | undefined): Tag[] => [...(tags ?? [])].sort((a, b) => String(a.Key).localeCompare(String(b.Key)));

describe('DynamoDB Local behind the proxy, driven by the real @aws-sdk/client-dynamodb', () => {
  let local: DynamoDbLocal;
  let proxy: DynamoDbProxy;
  const dataDir = mkdtempSync(join(tmpdir(), 'k8or-dynamodb-proxy-'));
  const clients: DynamoDBClient[] = [];
  const client = (endpoint: string, accessKeyId = ACCESS_KEY, secretAccessKey = SECRET): DynamoDBClient => {
    const dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
    clients.push(dynamodb);
    return dynamodb;
  };
  const createTable = async (dynamodb: DynamoDBClient, TableName: string, Tags?: Tag[]): Promise<string> => {
    const created = await dynamodb.send(
      new CreateTableCommand({
        TableName,
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        ...(Tags ? { Tags } : {}),
      }),
    );
    return created.TableDescription?.TableArn ?? '';
  };

  before(async () => {
    local = await startDynamoDbLocal();
    proxy = await startDynamoDbProxy({ target: local.endpoint, credentials: { [ACCESS_KEY]: SECRET }, dataDir });
  });
  after(async () => {
    for (const dynamodb of clients) dynamodb.destroy();
    await proxy?.stop();
    await local?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the Tags of CreateTable, and serves TagResource, UntagResource and ListTagsOfResource', async () => {
    const dynamodb = client(proxy.endpoint);
    const arn = await createTable(dynamodb, 'tagged-orders', [{ Key: 'team', Value: 'shop' }, { Key: 'k8or.io/name', Value: 'orders' }]);
    assert.deepEqual(byKey((await dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: arn }))).Tags), [
      { Key: 'k8or.io/name', Value: 'orders' },
      { Key: 'team', Value: 'shop' },
    ]);
    await dynamodb.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: 'team', Value: 'billing' }, { Key: 'cost-centre', Value: '42' }] }));
    await dynamodb.send(new UntagResourceCommand({ ResourceArn: arn, TagKeys: ['k8or.io/name'] }));
    assert.deepEqual(byKey((await dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: arn }))).Tags), [
      { Key: 'cost-centre', Value: '42' },
      { Key: 'team', Value: 'billing' },
    ]);

    // Items still go to DynamoDB Local.
    await dynamodb.send(new PutItemCommand({ TableName: 'tagged-orders', Item: { id: { S: 'o-1' }, total: { N: '12' } } }));
    assert.deepEqual((await dynamodb.send(new GetItemCommand({ TableName: 'tagged-orders', Key: { id: { S: 'o-1' } } }))).Item, { id: { S: 'o-1' }, total: { N: '12' } });

    // The tags go with the table: the same name made again starts with none.
    await dynamodb.send(new DeleteTableCommand({ TableName: 'tagged-orders' }));
    await assert.rejects(dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: arn })), dynamoDbError('ResourceNotFoundException'));
    const again = await createTable(dynamodb, 'tagged-orders');
    assert.deepEqual((await dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: again }))).Tags, []);
  });

  it('answers tagging mistakes as DynamoDB does', async () => {
    const dynamodb = client(proxy.endpoint);
    const missing = 'arn:aws:dynamodb:ddblocal:000000000000:table/no-such-table';
    await assert.rejects(dynamodb.send(new TagResourceCommand({ ResourceArn: missing, Tags: [{ Key: 'a', Value: 'b' }] })), (error: Error) =>
      dynamoDbError('ResourceNotFoundException')(error) && error.message === `Requested resource not found: ResourcArn: ${missing} not found`,
    );
    await assert.rejects(dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: 'not-an-arn' })), (error: Error) =>
      dynamoDbError('ValidationException')(error) && /Invalid TableArn/.test(error.message),
    );
    const arn = await createTable(dynamodb, 'strict-tags');
    await assert.rejects(dynamodb.send(new TagResourceCommand({ ResourceArn: arn, Tags: [] })), dynamoDbError('ValidationException'));
    await assert.rejects(dynamodb.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: 'aws:reserved', Value: 'x' }] })), dynamoDbError('ValidationException'));
    // A CreateTable whose tags DynamoDB refuses creates nothing.
    await assert.rejects(createTable(dynamodb, 'refused-table', [{ Key: 'k'.repeat(129), Value: 'v' }]), dynamoDbError('ValidationException'));
    assert.ok(!(await dynamodb.send(new ListTablesCommand({}))).TableNames?.includes('refused-table'));
  });

  it('serves DescribeContinuousBackups and UpdateContinuousBackups (point-in-time recovery)', async () => {
    const dynamodb = client(proxy.endpoint);
    const arn = await createTable(dynamodb, 'recoverable');
    const before = await dynamodb.send(new DescribeContinuousBackupsCommand({ TableName: 'recoverable' }));
    assert.equal(before.ContinuousBackupsDescription?.ContinuousBackupsStatus, 'ENABLED');
    assert.equal(before.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus, 'DISABLED');

    const enabled = await dynamodb.send(new UpdateContinuousBackupsCommand({ TableName: 'recoverable', PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }));
    const recovery = enabled.ContinuousBackupsDescription?.PointInTimeRecoveryDescription;
    assert.equal(recovery?.PointInTimeRecoveryStatus, 'ENABLED');
    assert.equal(recovery?.RecoveryPeriodInDays, 35);
    assert.ok(recovery?.EarliestRestorableDateTime instanceof Date);
    // By ARN too, as DynamoDB accepts it.
    assert.equal((await dynamodb.send(new DescribeContinuousBackupsCommand({ TableName: arn }))).ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus, 'ENABLED');

    await dynamodb.send(new UpdateContinuousBackupsCommand({ TableName: 'recoverable', PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: false } }));
    assert.equal((await dynamodb.send(new DescribeContinuousBackupsCommand({ TableName: 'recoverable' }))).ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus, 'DISABLED');
    await assert.rejects(dynamodb.send(new DescribeContinuousBackupsCommand({ TableName: 'no-such-table' })), (error: Error) =>
      dynamoDbError('TableNotFoundException')(error) && error.message === 'Table not found: no-such-table',
    );
  });

  it('refuses credentials it does not know: UnrecognizedClientException for an unknown key, InvalidSignatureException for a wrong secret', async () => {
    await assert.rejects(client(proxy.endpoint, 'AKIANOBODY0000000001', SECRET).send(new ListTablesCommand({})), (error: Error) =>
      dynamoDbError('UnrecognizedClientException')(error) && error.message === 'The security token included in the request is invalid.',
    );
    await assert.rejects(client(proxy.endpoint, ACCESS_KEY, 'not-the-secret').send(new ListTablesCommand({})), dynamoDbError('InvalidSignatureException'));
    const unsigned = await fetch(proxy.endpoint, { method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.ListTables', 'content-type': 'application/x-amz-json-1.0' }, body: '{}' });
    assert.equal(unsigned.status, 400);
    assert.equal(((await unsigned.json()) as { __type?: string }).__type, 'com.amazon.coral.service#MissingAuthenticationTokenException');
  });

  it('refuses a request dated more than 15 minutes off (InvalidSignatureException, Signature expired), by whose Date the SDK corrects its clock', async () => {
    const skewed = new DynamoDBClient({ region: 'us-east-1', endpoint: proxy.endpoint, credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }, maxAttempts: 1, systemClockOffset: -3_600_000 });
    clients.push(skewed);
    await assert.rejects(skewed.send(new ListTablesCommand({})), (error: Error) => dynamoDbError('InvalidSignatureException')(error) && /^Signature expired: /.test(error.message));
    assert.ok(Array.isArray((await skewed.send(new ListTablesCommand({}))).TableNames));
  });

  it('answers the AWS CLI too: tags, continuous backups, and InvalidSignatureException for a wrong secret', { skip: awsCliMissing ?? false }, async () => {
    const aws = (args: readonly string[], secretAccessKey = SECRET): Promise<{ code: number; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          AWS_ACCESS_KEY_ID: ACCESS_KEY,
          AWS_SECRET_ACCESS_KEY: secretAccessKey,
          AWS_DEFAULT_REGION: 'us-east-1',
          AWS_CONFIG_FILE: join(dataDir, 'no-config'),
          AWS_SHARED_CREDENTIALS_FILE: join(dataDir, 'no-credentials'),
          AWS_MAX_ATTEMPTS: '1',
        };
        delete env['AWS_SESSION_TOKEN'];
        delete env['AWS_PROFILE'];
        execFile('aws', ['--endpoint-url', proxy.endpoint, '--output', 'json', ...args], { env, timeout: 120_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        );
      });
    const arn = await createTable(client(proxy.endpoint), 'cli-table', [{ Key: 'team', Value: 'shop' }]);
    const tagged = await aws(['dynamodb', 'tag-resource', '--resource-arn', arn, '--tags', 'Key=stage,Value=dev']);
    assert.equal(tagged.code, 0, tagged.stderr);
    const listed = await aws(['dynamodb', 'list-tags-of-resource', '--resource-arn', arn]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(byKey((JSON.parse(listed.stdout) as { Tags?: Tag[] }).Tags), [{ Key: 'stage', Value: 'dev' }, { Key: 'team', Value: 'shop' }]);
    const enabled = await aws(['dynamodb', 'update-continuous-backups', '--table-name', 'cli-table', '--point-in-time-recovery-specification', 'PointInTimeRecoveryEnabled=true']);
    assert.equal(enabled.code, 0, enabled.stderr);
    const described = await aws(['dynamodb', 'describe-continuous-backups', '--table-name', 'cli-table']);
    const description = JSON.parse(described.stdout) as { ContinuousBackupsDescription?: { PointInTimeRecoveryDescription?: { PointInTimeRecoveryStatus?: string } } };
    assert.equal(description.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus, 'ENABLED');
    const refused = await aws(['dynamodb', 'list-tables'], 'not-the-secret');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /\(InvalidSignatureException\)/);
  });

  it('forwards a chunked request body whole to DynamoDB Local', async () => {
    const open = await startDynamoDbProxy({ target: local.endpoint });
    try {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"Lim'));
          controller.enqueue(new TextEncoder().encode('it":1}'));
          controller.close();
        },
      });
      const response = await fetch(open.endpoint, {
        method: 'POST',
        body,
        duplex: 'half',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.ListTables',
          authorization: 'AWS4-HMAC-SHA256 Credential=AKIAPROXYTEST0000001/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
        },
      } as RequestInit);
      assert.equal(response.status, 200, await response.clone().text());
      assert.ok(Array.isArray(((await response.json()) as { TableNames?: unknown }).TableNames));
    } finally {
      await open.stop();
    }
  });

  it('keeps tags and point-in-time recovery in dataDir across a restart of the proxy', async () => {
    const dynamodb = client(proxy.endpoint);
    const arn = await createTable(dynamodb, 'kept-extras', [{ Key: 'team', Value: 'shop' }]);
    await dynamodb.send(new UpdateContinuousBackupsCommand({ TableName: 'kept-extras', PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 7 } }));
    await proxy.stop();
    proxy = await startDynamoDbProxy({ target: local.endpoint, credentials: { [ACCESS_KEY]: SECRET }, dataDir });
    const restarted = client(proxy.endpoint);
    assert.deepEqual((await restarted.send(new ListTagsOfResourceCommand({ ResourceArn: arn }))).Tags, [{ Key: 'team', Value: 'shop' }]);
    const recovery = (await restarted.send(new DescribeContinuousBackupsCommand({ TableName: 'kept-extras' }))).ContinuousBackupsDescription?.PointInTimeRecoveryDescription;
    assert.equal(recovery?.PointInTimeRecoveryStatus, 'ENABLED');
    assert.equal(recovery?.RecoveryPeriodInDays, 7);
  });
});
