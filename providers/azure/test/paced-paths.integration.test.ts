// Every call path of the Azure provider takes a rate-limit token for each request that reaches the
// storage account: observe, create, update, delete (emptying a container with forceDelete included)
// and the listings of k8or import, for Blob containers and tables. Counted on the wire (a recording
// proxy in front of each Azurite service) against the tokens the limiter gave out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BlobServiceClient } from '@azure/storage-blob';
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import { CloudRateLimits, type ExternalClient } from '@k8or/core';
import { startAzurite, startFaultProxy, type Azurite, type FaultProxy } from '@k8or/local-clouds';
import { azureProvider, bucketConnector, clearAzureClients, tableConnector } from '@k8or/provider-azure';
import { accountKeySecret, azureProviderConfig, bucket, connectionContext, table } from './support.ts';

/** High enough that nothing waits: the test counts tokens, not time. */
const AMPLE = { requestsPerSecond: 10_000, burst: 10_000 };
const call = { signal: new AbortController().signal };

describe('every call path of the Azure provider takes a token per request that reaches the account', () => {
  let azurite: Azurite;
  let blobProxy: FaultProxy;
  let tableProxy: FaultProxy;

  before(async () => {
    azurite = await startAzurite();
    blobProxy = await startFaultProxy({ target: azurite.blobEndpoint, dialect: 'azure-blob' });
    tableProxy = await startFaultProxy({ target: azurite.tableEndpoint, dialect: 'azure-table' });
  });
  after(async () => {
    clearAzureClients();
    await blobProxy?.stop();
    await tableProxy?.stop();
    await azurite?.stop();
  });

  function paced(name: string, endpoints: { bucket?: string; table?: string }): { limits: CloudRateLimits; providerConfig: ProviderConfig } {
    const providerConfig = azureProviderConfig(endpoints);
    providerConfig.metadata.name = name;
    providerConfig.spec.rateLimits = { 'blob-containers': AMPLE, 'table-service': AMPLE };
    return { limits: new CloudRateLimits(), providerConfig };
  }
  const listContext = (limits: CloudRateLimits, providerConfig: ProviderConfig) => ({
    providerConfig,
    credentials: accountKeySecret(azurite),
    recordCall: limits.recorder(azureProvider, providerConfig, async (_operation, run) => await run()),
  });

  it('Blob: observe, create, update, delete with forceDelete, and list', async () => {
    const { limits, providerConfig } = paced('paced-blob', { bucket: blobProxy.endpoint });
    const connect = async (resource: Bucket): Promise<ExternalClient<Bucket>> => {
      const context = connectionContext(providerConfig, resource, accountKeySecret(azurite));
      return await bucketConnector.connect(resource, { ...context, recordCall: limits.recorder(azureProvider, providerConfig, context.recordCall) });
    };
    blobProxy.clearCalls();

    const first = bucket('paced-paths', { labels: { team: 'a' } });
    const client = await connect(first);
    assert.equal((await client.observe(first, call)).exists, false);
    await client.create(first, call);
    const changed = bucket('paced-paths', { labels: { team: 'b' }, publicAccess: 'Allowed' });
    await client.update(changed, await client.observe(changed, call), call);
    assert.equal((await client.observe(changed, call)).upToDate, true);
    // Blobs written behind the provider's back (straight to Azurite, not through the proxy), to empty on delete.
    const direct = BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient('paced-paths');
    for (let i = 0; i < 3; i++) await direct.getBlockBlobClient(`o-${i}`).upload('data', 4);
    assert.equal((await client.probe?.(first, call))?.exists, true);
    await client.delete(bucket('paced-paths', { forceDelete: true }), call);
    assert.equal((await client.observe(first, call)).exists, false);
    assert.equal((await client.probe?.(first, call))?.exists, false);
    await bucketConnector.list?.(listContext(limits, providerConfig), call);

    const operations = new Set(blobProxy.calls.map((c) => c.operation));
    assert.ok(['PUT /container', 'DELETE /container', 'GET /?comp=list'].every((o) => operations.has(o)), `every path ran: ${[...operations].join(', ')}`);
    assert.equal(limits.state('paced-blob', 'blob-containers')?.calls, blobProxy.calls.length, 'one token per request');
  });

  it('Table: observe, create, delete of a protected table, and list', async () => {
    const { limits, providerConfig } = paced('paced-table', { table: tableProxy.endpoint });
    const connect = async (resource: Table): Promise<ExternalClient<Table>> => {
      const context = connectionContext(providerConfig, resource, accountKeySecret(azurite));
      return await tableConnector.connect(resource, { ...context, recordCall: limits.recorder(azureProvider, providerConfig, context.recordCall) });
    };
    tableProxy.clearCalls();

    const protectedTable = table('pacedpaths', { deletionProtection: true });
    const client = await connect(protectedTable);
    assert.equal((await client.observe(protectedTable, call)).exists, false);
    await client.create(protectedTable, call);
    assert.equal((await client.observe(protectedTable, call)).exists, true);
    await assert.rejects(client.delete(protectedTable, call));
    assert.equal((await client.probe?.(protectedTable, call))?.exists, true);
    await client.delete(table('pacedpaths', { deletionProtection: false }), call);
    assert.equal((await client.observe(protectedTable, call)).exists, false);
    assert.equal((await client.probe?.(protectedTable, call))?.exists, false);
    await tableConnector.list?.(listContext(limits, providerConfig), call);

    const operations = new Set(tableProxy.calls.map((c) => c.operation));
    assert.ok(['POST Tables', 'DELETE Tables(NAME)', 'GET Tables'].every((o) => operations.has(o)), `every path ran: ${[...operations].join(', ')}`);
    assert.equal(limits.state('paced-table', 'table-service')?.calls, tableProxy.calls.length, 'one token per request');
  });
});
