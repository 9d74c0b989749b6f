// The fault proxy in front of each backend: the real SDKs read its throttles as throttles and its
// 5xx as server errors (their own classification, their own retries), a stall outlasts the client's
// deadline, calls are counted per resource, and the same seed draws the same faults.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreateBucketCommand, HeadBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { waitFor } from '@k8or/core/testing';
import {
  seededRandom,
  startAzurite,
  startDynamoDbLocal,
  startFaultProxy,
  startGcsFake,
  startS3Fake,
  type Azurite,
  type DynamoDbLocal,
  type FaultProxy,
  type GcsFake,
  type S3Fake,
} from '@k8or/local-clouds';

const credentials = { accessKeyId: 'AKIAFAULTPROXYTEST00', secretAccessKey: 'fault-proxy-test-secret' };
const s3Client = (endpoint: string, maxAttempts = 1): S3Client => new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials, maxAttempts });
const dynamoDbClient = (endpoint: string, maxAttempts = 1): DynamoDBClient => new DynamoDBClient({ endpoint, region: 'us-east-1', credentials, maxAttempts });

interface SdkError {
  name?: string;
  code?: string;
  statusCode?: number;
  $metadata?: { httpStatusCode?: number; attempts?: number };
  details?: { errorCode?: string; odataError?: { code?: string } };
}

/** The error a call rejects with. */
async function failure(call: Promise<unknown>): Promise<SdkError> {
  try {
    await call;
  } catch (error) {
    return error as SdkError;
  }
  assert.fail('the call succeeded through a proxy that fails every call');
}

const tableDefinition = (TableName: string) => ({
  TableName,
  AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' as const }],
  KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' as const }],
  BillingMode: 'PAY_PER_REQUEST' as const,
});

describe('fault proxy', () => {
  const proxies: FaultProxy[] = [];
  const proxy = async (...args: Parameters<typeof startFaultProxy>): Promise<FaultProxy> => {
    const started = await startFaultProxy(...args);
    proxies.push(started);
    return started;
  };
  let s3: S3Fake;
  let dynamodb: DynamoDbLocal;
  let gcs: GcsFake;
  let azurite: Azurite;

  before(async () => {
    [s3, dynamodb, gcs, azurite] = await Promise.all([startS3Fake(), startDynamoDbLocal(), startGcsFake(), startAzurite()]);
  });
  after(async () => {
    await Promise.all(proxies.map((p) => p.stop()));
    await Promise.all([s3?.stop(), dynamodb?.stop(), gcs?.stop(), azurite?.stop()]);
  });

  it('passes every call through unchanged when no fault is planned (SigV4 and all)', async () => {
    const faultless = await proxy({ target: s3.endpoint, dialect: 's3' });
    const client = s3Client(faultless.endpoint);
    await client.send(new CreateBucketCommand({ Bucket: 'passes-through' }));
    await client.send(new HeadBucketCommand({ Bucket: 'passes-through' }));
    const listed = await client.send(new ListBucketsCommand({}));
    assert.ok(listed.Buckets?.some((b) => b.Name === 'passes-through'));
    assert.deepEqual(
      faultless.calls.map((c) => [c.resource, c.outcome, c.status]),
      [['passes-through', 'forwarded', 200], ['passes-through', 'forwarded', 200], ['', 'forwarded', 200]],
    );
  });

  it('keeps its call log live: `calls` read once shows later calls, clearCalls empties it, its methods work off the proxy', async () => {
    const logging = await proxy({ target: s3.endpoint, dialect: 's3' });
    const { callsFor, clearCalls, setFaults } = logging;
    const client = s3Client(logging.endpoint);
    await client.send(new CreateBucketCommand({ Bucket: 'logged' }));
    assert.equal(logging.calls.length, 1);
    await client.send(new HeadBucketCommand({ Bucket: 'logged' }));
    assert.deepEqual(logging.calls.map((c) => c.operation), ['PUT /bucket', 'HEAD /bucket']);
    assert.equal(callsFor('logged').length, 2);
    setFaults({ script: ['throttle'] });
    await client.send(new HeadBucketCommand({ Bucket: 'logged' })).catch(() => undefined);
    assert.equal(logging.calls.at(-1)?.outcome, 'throttled');
    clearCalls();
    assert.equal(logging.calls.length, 0);
    await client.send(new HeadBucketCommand({ Bucket: 'logged' }));
    assert.deepEqual(logging.calls.map((c) => [c.resource, c.outcome]), [['logged', 'forwarded']]);
    assert.equal(typeof logging.seed, 'number');
  });

  it('S3: SlowDown 503 is a throttling error to the AWS SDK, which retries it maxAttempts times', async () => {
    const throttling = await proxy({ target: s3.endpoint, dialect: 's3', throttle: 1 });
    const error = await failure(s3Client(throttling.endpoint, 3).send(new CreateBucketCommand({ Bucket: 'throttled' })));
    assert.equal(error.name, 'SlowDown');
    assert.equal(error.$metadata?.httpStatusCode, 503);
    assert.equal(error.$metadata?.attempts, 3);
    assert.deepEqual(throttling.callsFor('throttled').map((c) => c.outcome), ['throttled', 'throttled', 'throttled']);
    assert.equal(new Set(throttling.callsFor('throttled').map((c) => c.operationId)).size, 1, 'the three attempts carry one operation id');
    // HEAD answers carry no body, as S3's do: the SDK names the error by its status
    const head = await failure(s3Client(throttling.endpoint).send(new HeadBucketCommand({ Bucket: 'throttled' })));
    assert.equal(head.$metadata?.httpStatusCode, 503);
  });

  it("S3: a 5xx is S3's InternalError or ServiceUnavailable", async () => {
    const failing = await proxy({ target: s3.endpoint, dialect: 's3', serverError: 1, seed: 7 });
    const names = new Set<string | undefined>();
    for (let i = 0; i < 12; i++) names.add((await failure(s3Client(failing.endpoint).send(new CreateBucketCommand({ Bucket: 'failing' })))).name);
    assert.deepEqual([...names].sort(), ['InternalError', 'ServiceUnavailable']);
    await assert.rejects(s3Client(s3.endpoint).send(new HeadBucketCommand({ Bucket: 'failing' })), 'no failed call reached the backend');
  });

  it('DynamoDB: ThrottlingException and ProvisionedThroughputExceededException (400) are throttling errors to the AWS SDK', async () => {
    const throttling = await proxy({ target: dynamodb.endpoint, dialect: 'dynamodb', throttle: 1, seed: 3 });
    const names = new Set<string | undefined>();
    for (let i = 0; i < 8; i++) {
      // The SDK retries a 400 only when it reads it as a throttle: two attempts say it did
      const error = await failure(dynamoDbClient(throttling.endpoint, 2).send(new DescribeTableCommand({ TableName: 'orders' })));
      assert.equal(error.$metadata?.httpStatusCode, 400);
      assert.equal(error.$metadata?.attempts, 2, `${error.name} is retried as a throttle`);
      names.add(error.name);
    }
    assert.deepEqual([...names].sort(), ['ProvisionedThroughputExceededException', 'ThrottlingException']);
    const retried = await failure(dynamoDbClient(throttling.endpoint, 3).send(new CreateTableCommand(tableDefinition('orders'))));
    assert.equal(retried.$metadata?.attempts, 3);
    // while DynamoDB Local's own 400 ValidationException, through the same proxy without faults, is not retried
    throttling.setFaults({});
    const invalid = await failure(dynamoDbClient(throttling.endpoint, 3).send(new CreateTableCommand({ ...tableDefinition('orders'), KeySchema: [] })));
    assert.equal(invalid.name, 'ValidationException');
    assert.equal(invalid.$metadata?.attempts, 1);
    assert.deepEqual(new Set(throttling.callsFor('orders').map((c) => c.operation)), new Set(['DescribeTable', 'CreateTable']));
  });

  it('DynamoDB: a 5xx is InternalServerError or ServiceUnavailable, retried by the SDK', async () => {
    const failing = await proxy({ target: dynamodb.endpoint, dialect: 'dynamodb', serverError: 1, seed: 5 });
    const error = await failure(dynamoDbClient(failing.endpoint, 2).send(new DescribeTableCommand({ TableName: 'orders' })));
    assert.ok(['InternalServerError', 'ServiceUnavailableException'].includes(error.name ?? ''), String(error.name));
    assert.ok((error.$metadata?.httpStatusCode ?? 0) >= 500);
    assert.equal(error.$metadata?.attempts, 2);
  });

  it("GCS: 429 rateLimitExceeded and 503 backendError in GCS's error JSON, retried by the Storage client", async () => {
    const throttling = await proxy({ target: gcs.endpoint, dialect: 'gcs', throttle: 1 });
    const storage = (endpoint: string, autoRetry: boolean): Storage =>
      new Storage({ projectId: 'k8or-faults', apiEndpoint: endpoint, retryOptions: { autoRetry, maxRetries: 2, retryDelayMultiplier: 1, totalTimeout: 60, maxRetryDelay: 0.05 } });
    const throttled = await failure(storage(throttling.endpoint, false).createBucket('gcs-throttled'));
    assert.equal(throttled.code, 429 as unknown as string);
    assert.match(String((throttled as { errors?: Array<{ reason?: string }> }).errors?.[0]?.reason), /rateLimitExceeded/);
    const failing = await proxy({ target: gcs.endpoint, dialect: 'gcs', serverError: 1 });
    await failure(storage(failing.endpoint, true).bucket('gcs-failing').getMetadata());
    assert.equal(failing.callsFor('gcs-failing').length, 3, 'the client retried its 5xx twice');
    assert.ok(failing.callsFor('gcs-failing').every((c) => c.status === 500 || c.status === 503));
  });

  it('Azure Blob: 503 ServerBusy, the Storage SDK retries it and reports the code', async () => {
    const throttling = await proxy({ target: azurite.blobEndpoint, dialect: 'azure-blob', throttle: 1 });
    const service = new BlobServiceClient(throttling.endpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey), {
      retryOptions: { maxTries: 3, retryDelayInMs: 10, maxRetryDelayInMs: 20 },
    });
    const error = await failure(service.getContainerClient('busy').create());
    assert.equal(error.statusCode, 503);
    assert.equal(error.code, 'ServerBusy');
    assert.equal(throttling.callsFor('busy').length, 3);
  });

  it('Azure Table: 503 ServerBusy in the OData error JSON, retried by the Tables SDK', async () => {
    const throttling = await proxy({ target: azurite.tableEndpoint, dialect: 'azure-table', throttle: 1 });
    const service = new TableServiceClient(throttling.endpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), {
      allowInsecureConnection: true,
      retryOptions: { maxRetries: 2, retryDelayInMs: 10, maxRetryDelayInMs: 20 },
    });
    const error = await failure(service.createTable('busytable'));
    assert.equal(error.statusCode, 503);
    assert.equal(error.details?.errorCode, 'ServerBusy');
    assert.equal(error.details?.odataError?.code, 'ServerBusy');
    assert.equal(new Set(throttling.callsFor('busytable').map((c) => c.operationId)).size, 1, 'the retries carry one client request id');
    assert.equal(throttling.callsFor('busytable').length, 3);
    // a table found by a query is counted as that table's call
    throttling.setFaults({});
    for await (const table of service.listTables({ queryOptions: { filter: "TableName eq 'busytable'" } })) assert.fail(`no table yet: ${table.name}`);
    assert.equal(throttling.callsFor('busytable').length, 4);
  });

  it('stalls a call past the client deadline: never forwarded when the client gives up first', async () => {
    const stalling = await proxy({ target: s3.endpoint, dialect: 's3', stall: 1, stallAfterForward: 0, stallMs: 120_000 });
    const error = await failure(s3Client(stalling.endpoint).send(new CreateBucketCommand({ Bucket: 'stalled-unsent' }), { abortSignal: AbortSignal.timeout(300) }));
    assert.equal(error.name, 'AbortError');
    await waitFor('the proxy to see the client leave', () => stalling.callsFor('stalled-unsent')[0]?.status === undefined && stalling.calls.length === 1);
    await assert.rejects(s3Client(s3.endpoint).send(new HeadBucketCommand({ Bucket: 'stalled-unsent' })));
    assert.equal(stalling.callsFor('stalled-unsent')[0]?.reachedBackend, undefined);
  });

  it('stalls after forwarding: the write is done, only its answer never comes', async () => {
    const stalling = await proxy({ target: s3.endpoint, dialect: 's3', stall: 1, stallAfterForward: 1, stallMs: 120_000 });
    await failure(s3Client(stalling.endpoint).send(new CreateBucketCommand({ Bucket: 'stalled-done' }), { abortSignal: AbortSignal.timeout(1_000) }));
    await waitFor('the write to reach the backend', () => stalling.callsFor('stalled-done')[0]?.reachedBackend === true);
    await s3Client(s3.endpoint).send(new HeadBucketCommand({ Bucket: 'stalled-done' }));
  });

  it('answers a stalled call late when the client still waits', async () => {
    const stalling = await proxy({ target: s3.endpoint, dialect: 's3', stall: 1, stallAfterForward: 0, stallMs: 200 });
    await s3Client(stalling.endpoint).send(new CreateBucketCommand({ Bucket: 'stalled-late' }));
    assert.equal(stalling.callsFor('stalled-late')[0]?.status, 200);
    stalling.setFaults({});
    await s3Client(stalling.endpoint).send(new HeadBucketCommand({ Bucket: 'stalled-late' }));
    assert.deepEqual(stalling.callsFor('stalled-late').map((c) => c.outcome), ['stalled', 'forwarded']);
  });

  it('runs a script of faults first, then the shares', async () => {
    const scripted = await proxy({ target: s3.endpoint, dialect: 's3', script: ['throttle', 'pass', 'serverError', 'stall'], stallMs: 50, stallAfterForward: 0 });
    const client = s3Client(scripted.endpoint);
    for (let i = 0; i < 5; i++) await client.send(new HeadBucketCommand({ Bucket: 'scripted' })).catch(() => undefined);
    assert.deepEqual(scripted.calls.map((c) => c.outcome), ['throttled', 'forwarded', 'server-error', 'stalled', 'forwarded']);
    scripted.setFaults({ script: ['throttle'] });
    await client.send(new HeadBucketCommand({ Bucket: 'scripted' })).catch(() => undefined);
    assert.equal(scripted.calls.at(-1)?.outcome, 'throttled');
  });

  it('adds Retry-After to throttling answers when asked, and logs each call\'s path and query', async () => {
    const throttling = await proxy({ target: gcs.endpoint, dialect: 'gcs', throttle: 1, retryAfterSeconds: 7 });
    const answer = await fetch(`${throttling.endpoint}/storage/v1/b?project=p&pageToken=next`);
    await answer.body?.cancel();
    assert.equal(answer.status, 429);
    assert.equal(answer.headers.get('retry-after'), '7');
    assert.equal(throttling.calls[0]?.url, '/storage/v1/b?project=p&pageToken=next');
    throttling.setFaults({ throttle: 1 });
    const plain = await fetch(`${throttling.endpoint}/storage/v1/b?project=p`);
    await plain.body?.cancel();
    assert.equal(plain.headers.get('retry-after'), null, 'no Retry-After unless the plan says so');
  });

  it('draws the same faults from the same seed, and about the planned shares', async () => {
    const outcomes = async (seed: number): Promise<string[]> => {
      const mixed = await proxy({ target: dynamodb.endpoint, dialect: 'dynamodb', seed, throttle: 0.2, serverError: 0.1 });
      // plain requests, one each: an SDK may add calls of its own (a retry on a reset socket)
      for (let i = 0; i < 200; i++) {
        const response = await fetch(mixed.endpoint, { method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.DescribeTable' }, body: '{"TableName":"absent"}' });
        await response.arrayBuffer();
      }
      return mixed.calls.map((c) => c.outcome);
    };
    const first = await outcomes(42);
    assert.deepEqual(await outcomes(42), first);
    const count = (outcome: string): number => first.filter((o) => o === outcome).length;
    // 200 draws: binomial spreads of about ±4 sd around 40 and 20
    assert.ok(count('throttled') > 15 && count('throttled') < 65, `throttled ${count('throttled')}`);
    assert.ok(count('server-error') > 3 && count('server-error') < 40, `server errors ${count('server-error')}`);
    const random = seededRandom(1);
    assert.notDeepEqual([random(), random()], [seededRandom(2)(), seededRandom(2)()]);
  });
});
