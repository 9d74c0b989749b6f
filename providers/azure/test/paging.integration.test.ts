// Connector.list reads every page of an Azure listing, following the continuation tokens, with the
// real SDKs against Azurite (behind the fault proxy, which counts the requests). Azurite pages only
// after 5,000 items, so the connectors are made with a small internal page size. And the Table
// client's existence check pages the same way, past a page Azure answers empty with a token.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { CloudRateLimits, type CloudCallRecorder } from '@k8or/core';
import { azureBucketConnector, azureProvider, azureTableConnector, clearAzureClients } from '@k8or/provider-azure';
import { startAzurite, startFaultProxy, type Azurite, type FaultProxy } from '@k8or/local-clouds';
import { accountKeySecret, azureProviderConfig, connectionContext, startCannedProxy, table } from './support.ts';

const PAGE_SIZE = 3;
/** Seven items in pages of three: three pages, the last one short. */
const COUNT = 7;
const LIMIT = { requestsPerSecond: 100, burst: 100 };

describe('Connector.list on Azure reads every page, each request with its rate-limit token', () => {
  let azurite: Azurite;
  let blobProxy: FaultProxy;
  let tableProxy: FaultProxy;
  let configs = 0;

  before(async () => {
    azurite = await startAzurite();
    blobProxy = await startFaultProxy({ target: azurite.blobEndpoint, dialect: 'azure-blob' });
    tableProxy = await startFaultProxy({ target: azurite.tableEndpoint, dialect: 'azure-table' });
    const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey));
    const tables = new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true });
    for (let i = 0; i < COUNT; i += 1) {
      await blobs.createContainer(`estate-${i}`);
      await tables.createTable(`Estate${i}`);
    }
  });
  after(async () => {
    clearAzureClients();
    await blobProxy?.stop();
    await tableProxy?.stop();
    await azurite?.stop();
  });

  /** An inventory context under a rate-limit bucket of its own, recording each call's operation. */
  function inventoryContext(endpoints: { bucket?: string; table?: string }, service: string) {
    const limits = new CloudRateLimits();
    const providerConfig = azureProviderConfig(endpoints);
    providerConfig.metadata.name = `paging-${(configs += 1)}`;
    providerConfig.spec.rateLimits = { [service]: LIMIT };
    const operations: string[] = [];
    const inner: CloudCallRecorder = async (operation, run) => {
      operations.push(operation);
      return await run();
    };
    return {
      context: { providerConfig, credentials: accountKeySecret(azurite), recordCall: limits.recorder(azureProvider, providerConfig, inner) },
      operations,
      tokens: () => limits.state(providerConfig.metadata.name ?? '', service)?.calls ?? 0,
    };
  }

  const expectedContainers = Array.from({ length: COUNT }, (_, i) => `estate-${i}`);
  const expectedTables = Array.from({ length: COUNT }, (_, i) => `Estate${i}`);

  it('Blob: List Containers in pages of three: three requests, the later ones with the marker, each a recorded call with its token', async () => {
    const { context, operations, tokens } = inventoryContext({ bucket: blobProxy.endpoint }, 'blob-containers');
    blobProxy.clearCalls();
    const items = await azureBucketConnector({ listPageSize: PAGE_SIZE }).list?.(context, { signal: AbortSignal.timeout(30_000) });
    assert.deepEqual(items?.map((item) => item.externalName).sort(), expectedContainers);
    const requests = blobProxy.calls.filter((c) => c.operation === 'GET /?comp=list');
    assert.equal(requests.length, 3, 'three pages');
    assert.equal(blobProxy.calls.length, requests.length, 'nothing but the listing');
    assert.deepEqual(requests.map((r) => /[?&]marker=/.test(r.url)), [false, true, true], 'the later pages continue from the marker');
    assert.ok(requests.every((r) => /[?&]maxresults=3(&|$)/.test(r.url)));
    assert.deepEqual(operations, ['ListContainers', 'ListContainers', 'ListContainers'], 'one recorded call per page');
    assert.equal(tokens(), 3, 'one token per page request');
  });

  it('Tables: Query Tables in pages of three: three requests, the later ones with NextTableName, each a recorded call with its token', async () => {
    const { context, operations, tokens } = inventoryContext({ table: tableProxy.endpoint }, 'table-service');
    tableProxy.clearCalls();
    const items = await azureTableConnector({ listPageSize: PAGE_SIZE }).list?.(context, { signal: AbortSignal.timeout(30_000) });
    assert.deepEqual(items?.map((item) => item.externalName).sort(), expectedTables);
    assert.equal(tableProxy.calls.length, 3, 'three pages');
    assert.deepEqual(tableProxy.calls.map((r) => /[?&]NextTableName=/.test(r.url)), [false, true, true], 'the later pages continue from NextTableName');
    assert.ok(tableProxy.calls.every((r) => /[?&]%24top=3(&|$)|[?&]\$top=3(&|$)/.test(r.url)));
    assert.deepEqual(operations, ['QueryTables', 'QueryTables', 'QueryTables'], 'one recorded call per page');
    assert.equal(tokens(), 3, 'one token per page request');
  });

  it('a throttled middle page is retried by the SDK from its continuation token, the retry with a token of its own, and no item is lost or doubled', async () => {
    for (const [proxy, list, service, expected] of [
      [blobProxy, () => azureBucketConnector({ listPageSize: PAGE_SIZE }), 'blob-containers', expectedContainers],
      [tableProxy, () => azureTableConnector({ listPageSize: PAGE_SIZE }), 'table-service', expectedTables],
    ] as const) {
      const { context, operations, tokens } = inventoryContext(service === 'blob-containers' ? { bucket: proxy.endpoint } : { table: proxy.endpoint }, service);
      proxy.clearCalls();
      proxy.setFaults({ script: ['pass', 'throttle', 'pass', 'pass'] });
      try {
        const items = await list().list?.(context, { signal: AbortSignal.timeout(30_000) });
        assert.deepEqual(items?.map((item) => item.externalName), [...expected].sort(), `${service}: every item once`);
      } finally {
        proxy.setFaults({});
      }
      assert.deepEqual(proxy.calls.map((c) => c.outcome), ['forwarded', 'throttled', 'forwarded', 'forwarded']);
      assert.equal(proxy.calls[1]?.operationId, proxy.calls[2]?.operationId, 'the second page was retried by the SDK, not started over');
      assert.equal(operations.length, 3, 'three pages, three recorded calls');
      assert.equal(tokens(), 4, 'three pages and one retry, a token each');
    }
  });

  it("Tables: the existence check reads past an empty Query Tables page that carries NextTableName, each page a recorded call with its token", async () => {
    const isQueryTables = (url: string): boolean => /^\/[^/?]+\/Tables(\?|$)/.test(url);
    let answered = false;
    // Azure may answer a query with no table and a NextTableName (a page cut short on its side); Azurite never does.
    const proxy = await startCannedProxy(azurite.tableEndpoint, (url) => {
      if (!isQueryTables(url) || answered) return undefined;
      answered = true;
      return {
        status: 200,
        headers: { 'content-type': 'application/json;odata=nometadata;streaming=true;charset=utf-8', 'x-ms-version': '2025-01-05', 'x-ms-continuation-nexttablename': 'Estate3' },
        body: JSON.stringify({ value: [] }),
      };
    });
    try {
      const { context, operations, tokens } = inventoryContext({ table: proxy.endpoint }, 'table-service');
      const resource = table('Estate3');
      const client = await azureTableConnector().connect(resource, { ...connectionContext(context.providerConfig, resource, context.credentials), recordCall: context.recordCall });
      const observation = await client.observe(resource, { signal: AbortSignal.timeout(30_000) });
      assert.equal(observation.exists, true, 'the table is found on the second page');
      const queries = proxy.requests.filter(isQueryTables);
      assert.equal(queries.length, 2, 'two pages');
      assert.ok(/[?&]NextTableName=Estate3(&|$)/.test(queries[1] ?? ''), `the second page continues from NextTableName (${queries[1]})`);
      // Then the table's ACL, for its identity marker (none here: Azurite's table, not k8or's).
      assert.deepEqual(operations, ['QueryTables', 'QueryTables', 'GetTableACL'], 'one recorded call per page, then the ACL');
      assert.equal(tokens(), 3, 'one token per request');
    } finally {
      await proxy.close();
    }
  });
});
