// Every call path of the GCP provider takes a rate-limit token for each request that reaches Google:
// observe, create, update, delete (emptying a bucket with forceDelete included) and the listings of
// k8or import, for Cloud Storage and Bigtable. Counted on the wire (a recording proxy in front of the
// GCS fake, a gRPC counting proxy in front of the Bigtable emulator) against the tokens the
// limiter gave out, per service.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Storage } from '@google-cloud/storage';
import type { Bucket, Table } from '@k8or/api';
import { CloudRateLimits, type ExternalClient } from '@k8or/core';
import {
  findCbtemulator,
  startBigtableEmulator,
  startFaultProxy,
  startGcsFake,
  startGrpcCountingProxy,
  type BigtableEmulator,
  type FaultProxy,
  type GcsFake,
  type GrpcCountingProxy,
} from '@k8or/local-clouds';
import { COLUMN_FAMILIES_ANNOTATION, bigtableServiceFor, bucketConnector, destroyBigtableClients, destroyStorageClients, gcpProvider, tableConnector } from '@k8or/provider-gcp';
import { PROJECT, bucket, call, connectionContext, gcpProviderConfig, table } from './support.ts';

/** High enough that nothing waits: the test counts tokens, not time. */
const AMPLE = { requestsPerSecond: 10_000, burst: 10_000 };
const located = findCbtemulator();

/** The service a request to the GCS JSON API draws on, from the proxy's operation name. */
function gcsService(operation: string): string {
  if (operation === 'POST /b' || operation === 'DELETE /b/NAME') return 'gcs-bucket-create-delete';
  if (operation.startsWith('GET /b/NAME/o') || operation.startsWith('DELETE /b/NAME/o')) return 'gcs-objects';
  return 'gcs-bucket-metadata';
}

function countBy(items: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

/** Tokens the limiter gave out, per service of the ProviderConfig (services with none left out). */
function tokens(limits: CloudRateLimits, providerConfig: string): Record<string, number> {
  return Object.fromEntries(limits.snapshot().flatMap((s) => (s.providerConfig === providerConfig && s.calls > 0 ? [[s.service, s.calls]] : [])));
}

describe('every call path of the GCP provider takes a token per request that reaches Google', () => {
  let gcs: GcsFake;
  let gcsProxy: FaultProxy;

  before(async () => {
    gcs = await startGcsFake();
    gcsProxy = await startFaultProxy({ target: gcs.endpoint, dialect: 'gcs' });
  });
  after(async () => {
    await destroyStorageClients();
    await gcsProxy?.stop();
    await gcs?.stop();
  });

  it('Cloud Storage: observe, create, update, delete with forceDelete, and list', async () => {
    const limits = new CloudRateLimits();
    const providerConfig = gcpProviderConfig({ bucket: gcsProxy.endpoint }, { rateLimits: { 'gcs-bucket-create-delete': AMPLE, 'gcs-bucket-metadata': AMPLE, 'gcs-objects': AMPLE } });
    providerConfig.metadata.name = 'paced-gcs';
    const connect = async (resource: Bucket): Promise<ExternalClient<Bucket>> => {
      const context = connectionContext(providerConfig, resource);
      return await bucketConnector.connect(resource, { ...context, recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall) });
    };
    gcsProxy.clearCalls();

    const first = bucket('paced-paths-bucket', { versioning: true, labels: { team: 'a' } });
    const client = await connect(first);
    assert.equal((await client.observe(first, call())).exists, false);
    await client.create(first, call());
    assert.equal((await client.observe(first, call())).upToDate, true);
    const changed = bucket('paced-paths-bucket', { versioning: false, labels: { team: 'b' } });
    await client.update(changed, await client.observe(changed, call()), call());
    assert.equal((await client.observe(changed, call())).upToDate, true);
    // Objects written behind the provider's back (straight to the fake, not through the proxy), to empty on delete.
    const direct = new Storage({ apiEndpoint: gcs.endpoint, projectId: PROJECT });
    for (let i = 0; i < 3; i++) await direct.bucket('paced-paths-bucket').file(`o-${i}`).save(`v${i}`, { resumable: false });
    const forced = bucket('paced-paths-bucket', { versioning: false, labels: { team: 'b' }, forceDelete: true });
    assert.equal((await client.probe?.(forced, call()))?.exists, true);
    await client.delete(forced, call());
    assert.equal((await client.observe(forced, call())).exists, false);
    assert.equal((await client.probe?.(forced, call()))?.exists, false);
    await bucketConnector.list?.({ providerConfig, credentials: undefined, recordCall: limits.recorder(gcpProvider, providerConfig, async (_operation, run) => await run()) }, call());

    const atBackend = countBy(gcsProxy.calls.map((c) => gcsService(c.operation)));
    assert.deepEqual(Object.keys(atBackend).sort(), ['gcs-bucket-create-delete', 'gcs-bucket-metadata', 'gcs-objects'], 'every path ran');
    assert.deepEqual(atBackend, tokens(limits, 'paced-gcs'), 'one token per request, per service');
  });

  describe('Bigtable (the emulator behind a gRPC counting proxy)', { skip: 'missing' in located ? located.missing : false }, () => {
    let emulator: BigtableEmulator;
    let proxy: GrpcCountingProxy;

    before(async () => {
      emulator = await startBigtableEmulator();
      proxy = await startGrpcCountingProxy(emulator.host);
    });
    after(async () => {
      await destroyBigtableClients();
      await proxy?.close();
      await emulator?.stop();
    });

    it('observe, create, update (families and deletion protection), delete of a protected table, and list', async () => {
      const limits = new CloudRateLimits();
      const providerConfig = gcpProviderConfig({ table: `http://${proxy.host}` }, { rateLimits: { 'bigtable-table-reads': AMPLE, 'bigtable-table-writes': AMPLE } });
      providerConfig.metadata.name = 'paced-bigtable';
      const connect = async (resource: Table): Promise<ExternalClient<Table>> => {
        const context = connectionContext(providerConfig, resource);
        return await tableConnector.connect(resource, { ...context, recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall) });
      };

      const first = table('paced_paths', {}, { [COLUMN_FAMILIES_ANNOTATION]: 'meta' });
      const client = await connect(first);
      assert.equal((await client.observe(first, call())).exists, false);
      await client.create(first, call());
      assert.equal((await client.observe(first, call())).upToDate, true);
      const changed = table('paced_paths', { deletionProtection: true }, { [COLUMN_FAMILIES_ANNOTATION]: 'meta, stats' });
      await client.update(changed, await client.observe(changed, call()), call());
      assert.equal((await client.observe(changed, call())).upToDate, true);
      // A new generation drops protection (update turns it off), then the resource goes: a delete never turns a protection off itself.
      const unprotected = table('paced_paths', { deletionProtection: false }, { [COLUMN_FAMILIES_ANNOTATION]: 'meta, stats' });
      await client.update(unprotected, await client.observe(unprotected, call()), call());
      assert.equal((await client.probe?.(unprotected, call()))?.exists, true);
      await client.delete(unprotected, call());
      assert.equal((await client.observe(unprotected, call())).exists, false);
      assert.equal((await client.probe?.(unprotected, call()))?.exists, false);
      await tableConnector.list?.({ providerConfig, credentials: undefined, recordCall: limits.recorder(gcpProvider, providerConfig, async (_operation, run) => await run()) }, call());

      const methods = proxy.arrivals.map((a) => a.method);
      assert.deepEqual(
        [...new Set(methods)].sort(),
        ['CreateTable', 'DeleteTable', 'GetTable', 'ListTables', 'ModifyColumnFamilies', 'UpdateTable'],
        'every path ran',
      );
      assert.deepEqual(countBy(methods.map((method) => bigtableServiceFor(method))), tokens(limits, 'paced-bigtable'), 'one token per RPC, per service');
    });
  });
});
