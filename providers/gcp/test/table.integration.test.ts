import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Bigtable } from '@google-cloud/bigtable';
import type { Table } from '@k8or/api';
import { DeletionBlockedError, NotOwnedError, RetryableError, type ExternalClient } from '@k8or/core';
import { COLUMN_FAMILIES_ANNOTATION, IDENTITY_FAMILY_PREFIX, destroyBigtableClients, rowKeyFor, tableConnector } from '@k8or/provider-gcp';
import { findCbtemulator, startBigtableEmulator, type BigtableEmulator } from '@k8or/local-clouds';
import { INSTANCE, PROJECT, call, connectionContext, gcpProviderConfig, table } from './support.ts';

const located = findCbtemulator();
const skip = 'missing' in located ? `${located.missing} (these tests need it)` : false;
const run = promisify(execFile);

describe('Table -> Bigtable, with the real @google-cloud/bigtable against the Bigtable emulator', { skip }, () => {
  let emulator: BigtableEmulator;
  let bigtable: Bigtable;
  const admin = () => bigtable.admin.getTableAdminClient();
  const tablePath = (id: string): string => `projects/${PROJECT}/instances/${INSTANCE}/tables/${id}`;

  before(async () => {
    emulator = await startBigtableEmulator();
    bigtable = new Bigtable({ projectId: PROJECT, apiEndpoint: emulator.host, metricsEnabled: false, universeDomain: 'googleapis.com' });
  });
  after(async () => {
    await destroyBigtableClients();
    await bigtable?.close();
    await emulator?.stop();
  });

  async function connect(resource: Table): Promise<ExternalClient<Table> & { calls: string[] }> {
    const context = connectionContext(gcpProviderConfig({ table: `http://${emulator.host}` }), resource);
    return Object.assign(await tableConnector.connect(resource, context), { calls: context.calls });
  }
  const getTable = async (id: string) => (await admin().getTable({ name: tablePath(id), view: 'FULL' }))[0];

  it('creates a table with the default and declared column families, one version per cell, and deletion protection', async () => {
    const resource = table('orders', { sortKey: { name: 'at', type: 'string' }, deletionProtection: true }, { [COLUMN_FAMILIES_ANNOTATION]: 'meta, stats' });
    const client = await connect(resource);
    assert.equal((await client.observe(resource, call())).exists, false);
    await client.create(resource, call());
    const created = await getTable('orders');
    const families = Object.keys(created.columnFamilies ?? {}).sort();
    assert.deepEqual(families.filter((id) => !id.startsWith(IDENTITY_FAMILY_PREFIX)), ['d', 'meta', 'stats']);
    // The identity marker: one empty family of k8or's own, made in the same CreateTable.
    const markers = families.filter((id) => id.startsWith(IDENTITY_FAMILY_PREFIX));
    assert.equal(markers.length, 1);
    assert.match(markers[0] ?? '', /^k8or-id-[0-9a-f]{16}$/);
    assert.equal(created.columnFamilies?.['d']?.gcRule?.maxNumVersions, 1);
    assert.equal(created.deletionProtection, true);

    const observation = await client.observe(resource, call());
    assert.deepEqual(observation.diff, []);
    assert.equal(observation.upToDate, true);
    assert.equal(observation.ownerTags, undefined, 'Bigtable tables carry no labels: ownership rests on the name and the create markers');
    assert.equal(observation.atProvider?.id, tablePath('orders'));
    assert.equal(observation.settingIssues, undefined);

    // The row key mapping, with the real data client: partitionKey#sortKey.
    const key = rowKeyFor(resource, { pk: 'customer-1', at: '2026-11-23' });
    assert.equal(key.toString(), 'customer-1#2026-11-23');
    await bigtable.instance(INSTANCE).table('orders').insert([{ key: key.toString(), data: { d: { total: '42' } } }]);
    const [row] = await bigtable.instance(INSTANCE).table('orders').row('customer-1#2026-11-23').get();
    assert.equal(row.data.d.total[0].value, '42');
  });

  it('shows the table to cbt as the Table asks', async (t) => {
    try {
      await run('cbt', ['version']);
    } catch {
      t.skip('cbt is not installed');
      return;
    }
    const { stdout } = await run('cbt', ['-project', PROJECT, '-instance', INSTANCE, 'ls', 'orders'], { env: { ...process.env, BIGTABLE_EMULATOR_HOST: emulator.host } });
    assert.match(stdout, /^d\s+versions\(\) > 1/m);
    assert.match(stdout, /^meta\s+versions\(\) > 1/m);
  });

  it('maps ttlAttribute to a GC rule that expires cells one second after their timestamp', async () => {
    const resource = table('sessions', { ttlAttribute: 'expiresAt' });
    const client = await connect(resource);
    await client.create(resource, call());
    const rule = (await getTable('sessions')).columnFamilies?.['d']?.gcRule;
    assert.equal(rule?.union?.rules?.length, 2);
    assert.deepEqual((await client.observe(resource, call())).diff, []);
  });

  it('sees a dropped column family and a changed GC rule as drift, and repairs both', async () => {
    const resource = table('drifting', {}, { [COLUMN_FAMILIES_ANNOTATION]: 'meta' });
    const client = await connect(resource);
    await client.create(resource, call());
    await admin().modifyColumnFamilies({ name: tablePath('drifting'), modifications: [{ id: 'meta', drop: true }, { id: 'd', update: { gcRule: { maxNumVersions: 5 } } }] });
    const drifted = await client.observe(resource, call());
    assert.deepEqual(drifted.diff?.map((d) => d.field).sort(), ['columnFamilies.d.gcRule', 'columnFamilies.meta']);
    assert.deepEqual(drifted.diff?.find((d) => d.field === 'columnFamilies.d.gcRule'), { field: 'columnFamilies.d.gcRule', desired: { maxNumVersions: 1 }, actual: { maxNumVersions: 5 } });
    client.calls.length = 0;
    await client.update(resource, drifted, call());
    assert.deepEqual(client.calls, ['ModifyColumnFamilies']);
    assert.deepEqual((await client.observe(resource, call())).diff, []);
  });

  it('leaves a column family it does not declare alone (dropping it would delete data)', async () => {
    const resource = table('shared');
    const client = await connect(resource);
    await client.create(resource, call());
    await admin().modifyColumnFamilies({ name: tablePath('shared'), modifications: [{ id: 'theirs', create: { gcRule: { maxNumVersions: 3 } } }] });
    assert.deepEqual((await client.observe(resource, call())).diff, []);
  });

  it('keeps a protected table: delete stops with DeletionBlocked naming the setting, and never turns protection off', async () => {
    const resource = table('ledger', { deletionProtection: true });
    const client = await connect(resource);
    await client.create(resource, call());
    const blocked = (error: unknown): boolean => {
      assert.ok(error instanceof DeletionBlockedError, String(error));
      assert.equal(error.code, 'DeletionProtectionEnabled');
      assert.match(error.message, /has deletion protection on \(deletionProtection/);
      return true;
    };
    await assert.rejects(client.delete(resource, call()), blocked);
    const unprotected = table('ledger', { deletionProtection: false });
    await assert.rejects(client.delete(unprotected, call()), blocked);
    assert.equal((await getTable('ledger')).deletionProtection, true);

    // Turned off where it was set, the table goes.
    await admin().updateTable({ table: { name: tablePath('ledger'), deletionProtection: false }, updateMask: { paths: ['deletion_protection'] } });
    await client.delete(unprotected, call());
    assert.equal((await client.observe(unprotected, call())).exists, false);
    await client.delete(unprotected, call());
  });

  it('reports deletion protection set outside k8or as drift and as a fact; update keeps it when given the cloud\'s value (a held protection), lowers it when the spec given asks, raises it where the spec asks', async () => {
    const resource = table('guarded', { deletionProtection: false });
    const client = await connect(resource);
    await client.create(resource, call());
    await admin().updateTable({ table: { name: tablePath('guarded'), deletionProtection: true }, updateMask: { paths: ['deletion_protection'] } });
    const drifted = await client.observe(resource, call());
    assert.deepEqual(drifted.diff, [{ field: 'spec.deletionProtection', desired: false, actual: true }]);
    assert.deepEqual(drifted.protection, [{ field: 'spec.deletionProtection', enabled: true, blocksDeletion: true }]);
    client.calls.length = 0;
    await client.update(table('guarded', { deletionProtection: true }), drifted, call());
    assert.deepEqual(client.calls, [], 'held: nothing written');
    assert.equal((await getTable('guarded')).deletionProtection, true);
    await assert.rejects(client.delete(resource, call()), (error: unknown) => error instanceof DeletionBlockedError && /set outside k8or/.test(error.message));

    // A new generation asking for no protection (the engine holds nothing then) lowers it.
    await client.update(resource, drifted, call());
    assert.equal((await getTable('guarded')).deletionProtection, false);

    const wanted = table('guarded', { deletionProtection: true });
    const lacking = await client.observe(wanted, call());
    assert.deepEqual(lacking.diff, [{ field: 'spec.deletionProtection', desired: true, actual: false }]);
    await client.update(wanted, lacking, call());
    assert.equal((await getTable('guarded')).deletionProtection, true);
  });

  it('names the settings Bigtable cannot apply (billing capacities, point-in-time recovery, labels) instead of skipping them', async () => {
    const resource = table('billed', { billing: { mode: 'provisioned', readCapacity: 5, writeCapacity: 5 }, pointInTimeRecovery: true, labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call());
    const fields = (result: { settingIssues?: { field: string }[] }): string[] => (result.settingIssues ?? []).map((issue) => issue.field).sort();
    const observation = await client.observe(resource, call());
    assert.deepEqual(observation.diff, []);
    assert.deepEqual(fields(observation), ['spec.billing', 'spec.labels', 'spec.pointInTimeRecovery']);
    assert.ok(observation.settingIssues?.every((issue) => issue.problem === 'unapplied'));
  });

  it('answers an unreachable Bigtable with a retryable UNAVAILABLE at once (the engine retries, not the client), never absence', async () => {
    const resource = table('elsewhere');
    const unreachable = await tableConnector.connect(resource, connectionContext(gcpProviderConfig({ table: 'http://127.0.0.1:1' }), resource));
    await assert.rejects(unreachable.observe(resource, { signal: AbortSignal.timeout(30_000) }), (error: unknown) => error instanceof RetryableError && error.code === 'UNAVAILABLE');
  });

  it('probes with one GetTable (SCHEMA_VIEW): existence and deletion protection as observe reports it; absence only on NOT_FOUND, an unreachable Bigtable thrown', async () => {
    const resource = table('probed-table', { deletionProtection: true });
    const client = await connect(resource);
    const created = await client.create(resource, call());
    const protection = [{ field: 'spec.deletionProtection', enabled: true, blocksDeletion: true }];
    const observation = await client.observe(resource, call());
    assert.deepEqual(observation.protection, protection);
    // The admin API gives a table no identity beyond its name: the identity is k8or's marker family.
    assert.match(observation.identity?.['marker'] ?? '', /^k8or-id-[0-9a-f]{16}$/);
    assert.deepEqual(created?.identity, observation.identity, 'create reports the identity it made, as observe reads it (the engine records it even when that observe fails)');
    client.calls.length = 0;
    assert.deepEqual(await client.probe?.(resource, call()), { exists: true, identity: observation.identity, protection });
    assert.deepEqual(client.calls, ['GetTable']);
    await admin().updateTable({ table: { name: tablePath('probed-table'), deletionProtection: false }, updateMask: { paths: ['deletion_protection'] } });
    assert.deepEqual(await client.probe?.(resource, call()), { exists: true, identity: observation.identity, protection: [{ ...protection[0], enabled: false }] });
    await client.delete(resource, call());
    assert.deepEqual(await client.probe?.(resource, call()), { exists: false });
    const unreachable = await tableConnector.connect(resource, connectionContext(gcpProviderConfig({ table: 'http://127.0.0.1:1' }), resource));
    await assert.rejects(unreachable.probe?.(resource, { signal: AbortSignal.timeout(30_000) }) ?? Promise.resolve(), (error: unknown) => error instanceof RetryableError && error.code === 'UNAVAILABLE');
  });

  it('never creates over an existing table: ALREADY_EXISTS is NotOwnedError, and the table keeps its families and rows', async () => {
    const resource = table('kept', {}, { [COLUMN_FAMILIES_ANNOTATION]: 'meta' });
    const client = await connect(resource);
    await client.create(resource, call());
    const before = Object.keys((await getTable('kept')).columnFamilies ?? {}).sort();
    await bigtable.instance(INSTANCE).table('kept').insert([{ key: 'row-1', data: { d: { v: '1' } } }]);
    await assert.rejects(client.create(table('kept'), call()), (error: unknown) => error instanceof NotOwnedError && error.code === 'ALREADY_EXISTS' && error.noEffect);
    assert.deepEqual(Object.keys((await getTable('kept')).columnFamilies ?? {}).sort(), before, 'the existing table gains no family (no second identity marker either)');
    const [exists] = await bigtable.instance(INSTANCE).table('kept').row('row-1').exists();
    assert.equal(exists, true);
  });
});
