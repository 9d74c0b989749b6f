// Every call path of the AWS provider takes a rate-limit token for each request that reaches AWS:
// observe, create, update, delete (emptying a bucket with forceDelete included) and the listings of
// k8or import, for S3 and DynamoDB. Counted on the wire (the S3 fake's request log, a recording proxy
// in front of DynamoDB Local) against the tokens the limiter gave out, per service.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import { CloudRateLimits, type ExternalClient } from '@k8or/core';
import { startDynamoDbLocal, startFaultProxy, startS3Fake, type DynamoDbLocal, type FaultProxy, type S3Fake } from '@k8or/local-clouds';
import { awsProvider, bucketConnector, destroyDynamoDbClients, destroyS3Clients, s3ServiceFor, tableConnector } from '@k8or/provider-aws';
import { awsProviderConfig, bucket, call, connectionContext, credentials, table } from './support.ts';

/** High enough that nothing waits: the test counts tokens, not time. */
const AMPLE = { requestsPerSecond: 10_000, burst: 10_000 };

function paced(name: string, endpoints: { bucket?: string; table?: string }): { limits: CloudRateLimits; providerConfig: ProviderConfig } {
  const providerConfig = awsProviderConfig(endpoints);
  providerConfig.metadata.name = name;
  providerConfig.spec.rateLimits = { 's3-buckets': AMPLE, 's3-objects': AMPLE, 'dynamodb-control-plane': AMPLE };
  return { limits: new CloudRateLimits(), providerConfig };
}

function connectPaced<R extends Bucket | Table>(limits: CloudRateLimits, providerConfig: ProviderConfig, connector: { connect(resource: R, context: ReturnType<typeof connectionContext>): Promise<ExternalClient<R>> }) {
  return async (resource: R): Promise<ExternalClient<R>> => {
    const context = connectionContext(providerConfig, resource);
    return await connector.connect(resource, { ...context, recordCall: limits.recorder(awsProvider, providerConfig, context.recordCall) });
  };
}

const listContext = (limits: CloudRateLimits, providerConfig: ProviderConfig) => ({
  providerConfig,
  credentials,
  recordCall: limits.recorder(awsProvider, providerConfig, async (_operation, run) => await run()),
});

/** Tokens the limiter gave out, per service of the ProviderConfig (services with none left out). */
function tokens(limits: CloudRateLimits, providerConfig: string): Record<string, number> {
  return Object.fromEntries(limits.snapshot().flatMap((s) => (s.providerConfig === providerConfig && s.calls > 0 ? [[s.service, s.calls]] : [])));
}

describe('every call path of the AWS provider takes a token per request that reaches AWS', () => {
  let s3Fake: S3Fake;

  before(async () => {
    s3Fake = await startS3Fake();
  });
  after(async () => {
    destroyS3Clients();
    destroyDynamoDbClients();
    await s3Fake?.stop();
  });

  it('S3: observe, create, update, delete with forceDelete, and list', async () => {
    const { limits, providerConfig } = paced('paced-s3', { bucket: s3Fake.endpoint });
    const connect = connectPaced(limits, providerConfig, bucketConnector);
    const since = s3Fake.requests.length;

    const first = bucket('paced-paths-bucket', { versioning: true, labels: { team: 'a' } });
    const client = await connect(first);
    assert.equal((await client.observe(first, call)).exists, false);
    await client.create(first, call);
    const changed = bucket('paced-paths-bucket', { versioning: true, labels: { team: 'b' } });
    await client.update(changed, await client.observe(changed, call), call);
    assert.equal((await client.observe(changed, call)).upToDate, true);
    const direct = new S3Client({ endpoint: s3Fake.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    for (let i = 0; i < 3; i++) await direct.send(new PutObjectCommand({ Bucket: 'paced-paths-bucket', Key: `o-${i}`, Body: `v${i}` }));
    direct.destroy();
    assert.equal((await client.probe?.(first, call))?.exists, true);
    await client.delete(bucket('paced-paths-bucket', { versioning: true, forceDelete: true }), call);
    assert.equal((await client.observe(first, call)).exists, false);
    assert.equal((await client.probe?.(first, call))?.exists, false);
    await bucketConnector.list?.(listContext(limits, providerConfig), call);

    // The uploads (requests for an object key) went straight to the fake, outside the provider.
    const requests = s3Fake.requests.slice(since).filter((r) => !r.key);
    const byService: Record<string, number> = {};
    // The S3 fake logs the subresource of each request; ListObjectVersions (?versions) and DeleteObjects (POST ?delete) are object calls.
    for (const r of requests) {
      const operation = r.subresource === 'versions' ? 'ListObjectVersions' : r.subresource === 'delete' ? 'DeleteObjects' : r.method;
      const service = s3ServiceFor(operation);
      byService[service] = (byService[service] ?? 0) + 1;
    }
    assert.deepEqual(Object.keys(byService).sort(), ['s3-buckets', 's3-objects'], 'every path ran');
    assert.deepEqual(byService, tokens(limits, 'paced-s3'), 'one token per request, per service');
  });

  describe('DynamoDB (DynamoDB Local behind a recording proxy)', () => {
    let local: DynamoDbLocal | undefined;
    let proxy: FaultProxy | undefined;

    before(async () => {
      local = await startDynamoDbLocal().catch(() => undefined);
      if (local) proxy = await startFaultProxy({ target: local.endpoint, dialect: 'dynamodb' });
    });
    after(async () => {
      await proxy?.stop();
      await local?.stop();
    });

    it('observe, create, update, delete of a protected table, and list', async (t) => {
      if (!local || !proxy) return t.skip('DynamoDB Local did not start (Java 17 is needed)');
      const { limits, providerConfig } = paced('paced-dynamodb', { table: proxy.endpoint });
      const connect = connectPaced(limits, providerConfig, tableConnector);

      const first = table('paced_paths', { deletionProtection: true });
      const client = await connect(first);
      assert.equal((await client.observe(first, call)).exists, false);
      await client.create(first, call);
      const changed = table('paced_paths', { deletionProtection: true, ttlAttribute: 'expires', billing: { mode: 'provisioned', readCapacity: 2, writeCapacity: 2 } });
      await client.update(changed, await client.observe(changed, call), call);
      // k8or never turns a protection off: the user does, in DynamoDB (straight to DynamoDB Local, outside the proxy).
      const direct = new DynamoDBClient({ region: 'us-east-1', endpoint: local.endpoint, credentials });
      await direct.send(new UpdateTableCommand({ TableName: 'paced_paths', DeletionProtectionEnabled: false }));
      direct.destroy();
      const unprotected = table('paced_paths', { deletionProtection: false, ttlAttribute: 'expires' });
      await client.update(unprotected, await client.observe(unprotected, call), call);
      assert.equal((await client.probe?.(unprotected, call))?.exists, true);
      await client.delete(unprotected, call);
      assert.equal((await client.probe?.(unprotected, call))?.exists, false);
      await tableConnector.list?.(listContext(limits, providerConfig), call);

      const operations = new Set(proxy.calls.map((c) => c.operation));
      assert.ok(['CreateTable', 'DescribeTable', 'UpdateTable', 'DeleteTable', 'ListTables', 'UpdateTimeToLive'].every((o) => operations.has(o)), `every path ran: ${[...operations].join(', ')}`);
      assert.deepEqual({ 'dynamodb-control-plane': proxy.calls.length }, tokens(limits, 'paced-dynamodb'), 'one token per request');
    });
  });
});
