import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Bigtable } from '@google-cloud/bigtable';
import { findCbtemulator, startBigtableEmulator, startGrpcCountingProxy, type BigtableEmulator, type GrpcCountingProxy } from '@k8or/local-clouds';

const located = findCbtemulator();
const ONE_ATTEMPT = { retry: null };

describe('gRPC counting proxy in front of the Bigtable emulator, driven by the real @google-cloud/bigtable', { skip: 'missing' in located ? located.missing : false }, () => {
  let emulator: BigtableEmulator;
  let proxy: GrpcCountingProxy;
  let bigtable: Bigtable;

  before(async () => {
    emulator = await startBigtableEmulator();
    proxy = await startGrpcCountingProxy(emulator.host);
    bigtable = new Bigtable({ projectId: 'proxy-project', apiEndpoint: proxy.host, universeDomain: 'googleapis.com', metricsEnabled: false });
  });
  after(async () => {
    await bigtable?.close();
    await proxy?.close();
    await emulator?.stop();
  });

  it('forwards answers, errors (trailers-only) and messages unchanged, and records each RPC by method', async () => {
    const admin = bigtable.admin.getTableAdminClient();
    const parent = 'projects/proxy-project/instances/proxy-instance';
    await assert.rejects(admin.getTable({ name: `${parent}/tables/absent` }, ONE_ATTEMPT), (error: unknown) => (error as { code?: unknown }).code === 5);
    await admin.createTable({ parent, tableId: 'present', table: { columnFamilies: { cf: {} } } }, ONE_ATTEMPT);
    const [table] = await admin.getTable({ name: `${parent}/tables/present`, view: 'FULL' }, ONE_ATTEMPT);
    assert.deepEqual(Object.keys(table.columnFamilies ?? {}), ['cf']);
    const [tables] = await admin.listTables({ parent }, { ...ONE_ATTEMPT, autoPaginate: false });
    assert.deepEqual(tables.map((t) => t.name), [`${parent}/tables/present`]);

    assert.deepEqual(proxy.arrivals.map((a) => a.method), ['GetTable', 'CreateTable', 'GetTable', 'ListTables']);
    const times = proxy.arrivals.map((a) => a.at);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'in order of arrival');
  });
});
