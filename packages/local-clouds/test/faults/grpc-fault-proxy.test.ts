// The gRPC fault proxy in front of the Bigtable emulator, driven by the real @google-cloud/bigtable:
// the client reads a throttle as RESOURCE_EXHAUSTED, a 5xx-like fault as UNAVAILABLE or INTERNAL, a
// stall past its deadline as DEADLINE_EXCEEDED, and every other call passes unchanged; each RPC is
// recorded with the table it names, and the same seed draws the same faults.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Bigtable } from '@google-cloud/bigtable';
import { waitFor } from '@k8or/core/testing';
import { findCbtemulator, GrpcStatus, startBigtableEmulator, startGrpcFaultProxy, type BigtableEmulator, type GrpcFaultProxy, type GrpcFaultProxyOptions } from '@k8or/local-clouds';

const located = findCbtemulator();
const PROJECT = 'faulty-project';
const INSTANCE = 'faulty-instance';
const PARENT = `projects/${PROJECT}/instances/${INSTANCE}`;
const ONE_ATTEMPT = { retry: null };

interface GrpcError {
  code?: number;
  details?: string;
  message?: string;
}

/** The gRPC error a call rejects with. */
async function failure(call: Promise<unknown>): Promise<GrpcError> {
  try {
    await call;
  } catch (error) {
    return error as GrpcError;
  }
  assert.fail('the call succeeded through a proxy that faults it');
}

describe('gRPC fault proxy in front of the Bigtable emulator, driven by the real @google-cloud/bigtable', { skip: 'missing' in located ? located.missing : false }, () => {
  let emulator: BigtableEmulator;
  let straight: Bigtable;
  const opened: Array<{ proxy: GrpcFaultProxy; client: Bigtable }> = [];

  /** A proxy with its own client (its own channel), closed after the suite. */
  const through = async (options: Omit<GrpcFaultProxyOptions, 'target'>): Promise<{ proxy: GrpcFaultProxy; client: Bigtable; admin: ReturnType<Bigtable['admin']['getTableAdminClient']> }> => {
    const proxy = await startGrpcFaultProxy({ target: emulator.host, ...options });
    const client = new Bigtable({ projectId: PROJECT, apiEndpoint: proxy.host, universeDomain: 'googleapis.com', metricsEnabled: false });
    opened.push({ proxy, client });
    return { proxy, client, admin: client.admin.getTableAdminClient() };
  };
  const exists = async (tableId: string): Promise<boolean> => {
    try {
      await straight.admin.getTableAdminClient().getTable({ name: `${PARENT}/tables/${tableId}` }, ONE_ATTEMPT);
      return true;
    } catch (error) {
      if ((error as GrpcError).code === 5) return false;
      throw error;
    }
  };

  before(async () => {
    emulator = await startBigtableEmulator();
    straight = new Bigtable({ projectId: PROJECT, apiEndpoint: emulator.host, universeDomain: 'googleapis.com', metricsEnabled: false });
  });
  after(async () => {
    for (const { proxy, client } of opened) {
      await client.close();
      await proxy.stop();
    }
    await straight?.close();
    await emulator?.stop();
  });

  it('passes calls unchanged with faults off, and records each RPC with the table it names', async () => {
    const { proxy, client, admin } = await through({});
    await admin.createTable({ parent: PARENT, tableId: 'plain', table: { columnFamilies: { d: { gcRule: { maxNumVersions: 1 } } } } }, ONE_ATTEMPT);
    const [table] = await admin.getTable({ name: `${PARENT}/tables/plain`, view: 'FULL' }, ONE_ATTEMPT);
    assert.deepEqual(table.columnFamilies?.['d']?.gcRule, { maxNumVersions: 1, rule: 'maxNumVersions' });
    await admin.modifyColumnFamilies({ name: `${PARENT}/tables/plain`, modifications: [{ id: 'e', create: { gcRule: { maxNumVersions: 2 } } }] }, ONE_ATTEMPT);
    await admin.updateTable({ table: { name: `${PARENT}/tables/plain`, deletionProtection: true }, updateMask: { paths: ['deletion_protection'] } }, ONE_ATTEMPT);
    await admin.updateTable({ table: { name: `${PARENT}/tables/plain`, deletionProtection: false }, updateMask: { paths: ['deletion_protection'] } }, ONE_ATTEMPT);
    const [tables] = await admin.listTables({ parent: PARENT }, { ...ONE_ATTEMPT, autoPaginate: false });
    assert.ok(tables.some((t) => t.name === `${PARENT}/tables/plain`));
    // the data API: MutateRows and ReadRows (server-streaming) carry the rows both ways
    await client.instance(INSTANCE).table('plain').insert([{ key: 'r1', data: { d: { v: 'one' } } }, { key: 'r2', data: { d: { v: 'two' } } }]);
    const [rows] = await client.instance(INSTANCE).table('plain').getRows();
    assert.deepEqual(
      rows.map((row) => [row.id, (row.data as Record<string, Record<string, Array<{ value: string }>>>)['d']?.['v']?.[0]?.value]),
      [['r1', 'one'], ['r2', 'two']],
    );
    await admin.deleteTable({ name: `${PARENT}/tables/plain` }, ONE_ATTEMPT);
    assert.equal(await exists('plain'), false);

    const adminCalls = proxy.calls.filter((c) => !['MutateRows', 'ReadRows', 'PingAndWarm'].includes(c.operation));
    assert.deepEqual(
      adminCalls.map((c) => [c.operation, c.resource, c.outcome, c.grpcStatus]),
      [
        ['CreateTable', 'plain', 'forwarded', 0],
        ['GetTable', 'plain', 'forwarded', 0],
        ['ModifyColumnFamilies', 'plain', 'forwarded', 0],
        ['UpdateTable', 'plain', 'forwarded', 0],
        ['UpdateTable', 'plain', 'forwarded', 0],
        ['ListTables', '', 'forwarded', 0],
        ['DeleteTable', 'plain', 'forwarded', 0],
      ],
    );
    assert.deepEqual(proxy.callsFor('plain').filter((c) => c.operation === 'MutateRows' || c.operation === 'ReadRows').map((c) => [c.operation, c.grpcStatus]), [['MutateRows', 0], ['ReadRows', 0]]);
    const times = proxy.calls.map((c) => c.at);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'in order of arrival');
  });

  it('holds an answer while onAnswered runs: the emulator acted, the client has not heard; its log stays live through clearCalls', async () => {
    let release: () => void = () => undefined;
    const seen: string[] = [];
    const proxy = await startGrpcFaultProxy({
      target: emulator.host,
      onAnswered: (call) => {
        seen.push(`${call.operation} ${call.resource} ${call.grpcStatus}`);
        if (call.operation === 'CreateTable') return new Promise<void>((resolve) => (release = resolve));
        return undefined;
      },
    });
    const client = new Bigtable({ projectId: PROJECT, apiEndpoint: proxy.host, universeDomain: 'googleapis.com', metricsEnabled: false });
    opened.push({ proxy, client });
    const admin = client.admin.getTableAdminClient();
    let answered = false;
    const creating = admin.createTable({ parent: PARENT, tableId: 'held-answer', table: {} }, ONE_ATTEMPT).then(() => (answered = true));
    await waitFor('the hook to see the CreateTable answered', () => seen.length === 1);
    assert.deepEqual(seen, ['CreateTable held-answer 0']);
    assert.equal(await exists('held-answer'), true, 'the emulator made the table');
    assert.equal(answered, false, 'the client has not heard yet');
    release();
    await creating;
    const { clearCalls } = proxy;
    assert.deepEqual(proxy.calls.map((c) => [c.operation, c.resource, c.grpcStatus]), [['CreateTable', 'held-answer', 0]]);
    clearCalls();
    assert.equal(proxy.calls.length, 0);
    await admin.deleteTable({ name: `${PARENT}/tables/held-answer` }, ONE_ATTEMPT);
    assert.deepEqual(proxy.calls.map((c) => c.operation), ['DeleteTable']);
    assert.deepEqual(proxy.callsFor('held-answer').map((c) => c.operation), ['DeleteTable']);
  });

  it('answers a throttled call RESOURCE_EXHAUSTED with the quota message, and the call never reaches the emulator', async () => {
    const { proxy, admin } = await through({ script: ['throttle'] });
    const error = await failure(admin.createTable({ parent: PARENT, tableId: 'throttled', table: {} }, ONE_ATTEMPT));
    assert.equal(error.code, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.match(error.details ?? '', /^Quota exceeded for quota metric 'Table admin requests' .* of service 'bigtableadmin\.googleapis\.com'/);
    assert.equal(await exists('throttled'), false);
    assert.deepEqual(proxy.calls.map((c) => [c.operation, c.resource, c.outcome, c.grpcStatus]), [['CreateTable', 'throttled', 'throttled', 8]]);
    // the script is spent: the next call passes
    await admin.createTable({ parent: PARENT, tableId: 'throttled', table: {} }, ONE_ATTEMPT);
    assert.equal(await exists('throttled'), true);
  });

  it('answers a 5xx-like fault UNAVAILABLE or INTERNAL, as Google does, both drawn from the seed', async () => {
    const { proxy, admin } = await through({ seed: 42, script: Array.from({ length: 8 }, () => 'serverError' as const) });
    const codes: Array<number | undefined> = [];
    for (let i = 0; i < 8; i++) {
      const error = await failure(admin.getTable({ name: `${PARENT}/tables/throttled` }, ONE_ATTEMPT));
      codes.push(error.code);
      if (error.code === GrpcStatus.UNAVAILABLE) assert.equal(error.details, 'The service is currently unavailable.');
      else assert.equal(error.details, 'Internal error encountered.');
    }
    assert.ok(codes.every((code) => code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.INTERNAL), `codes ${codes.join(',')}`);
    assert.ok(codes.includes(GrpcStatus.UNAVAILABLE) && codes.includes(GrpcStatus.INTERNAL), `both codes drawn: ${codes.join(',')}`);
    assert.deepEqual(proxy.calls.map((c) => c.grpcStatus), codes);
    assert.ok(proxy.calls.every((c) => c.outcome === 'server-error'));
  });

  it('holds a stalled call past the client deadline (DEADLINE_EXCEEDED): forwarded first, the table is made; held first, it never is', async () => {
    const forwardedFirst = await through({ script: ['stall'], stallMs: 120_000, stallAfterForward: 1 });
    const late = await failure(forwardedFirst.admin.createTable({ parent: PARENT, tableId: 'stalled-made', table: {} }, { ...ONE_ATTEMPT, timeout: 1_500 }));
    assert.equal(late.code, GrpcStatus.DEADLINE_EXCEEDED);
    assert.equal(await exists('stalled-made'), true, 'the write was done; only its answer never came');
    await waitFor('the proxy saw the client leave', () => forwardedFirst.proxy.calls[0]?.clientLeft === true);
    assert.deepEqual(forwardedFirst.proxy.calls.map((c) => [c.operation, c.resource, c.outcome, c.reachedBackend, c.grpcStatus]), [['CreateTable', 'stalled-made', 'stalled', true, undefined]]);

    const heldFirst = await through({ script: ['stall'], stallMs: 120_000, stallAfterForward: 0 });
    const lost = await failure(heldFirst.admin.createTable({ parent: PARENT, tableId: 'stalled-lost', table: {} }, { ...ONE_ATTEMPT, timeout: 1_500 }));
    assert.equal(lost.code, GrpcStatus.DEADLINE_EXCEEDED);
    assert.equal(await exists('stalled-lost'), false, 'the client gave up before the stall ended');
    await waitFor('the proxy saw the client leave', () => heldFirst.proxy.calls[0]?.clientLeft === true);
    assert.deepEqual(heldFirst.proxy.calls.map((c) => [c.outcome, c.reachedBackend]), [['stalled', undefined]]);
  });

  it('forwards a stalled call whose client still waits when the stall ends', async () => {
    const { proxy, admin } = await through({ script: ['stall'], stallMs: 300, stallAfterForward: 0 });
    await admin.createTable({ parent: PARENT, tableId: 'stalled-then-made', table: {} }, { ...ONE_ATTEMPT, timeout: 60_000 });
    assert.equal(await exists('stalled-then-made'), true);
    await waitFor('the stalled call recorded as answered', () => proxy.calls[0]?.grpcStatus === 0);
    assert.deepEqual(proxy.calls.map((c) => [c.outcome, c.reachedBackend, c.clientLeft]), [['stalled', true, undefined]]);
  });

  it('faults a seeded share of calls, the same calls for the same seed, and passes the rest unchanged', async () => {
    const plan = { throttle: 0.25, serverError: 0.25, seed: 7 };
    const outcomes: string[][] = [];
    for (const run of [0, 1]) {
      const { proxy, admin } = await through(plan);
      const seen: string[] = [];
      for (let i = 0; i < 24; i++) {
        try {
          const [table] = await admin.getTable({ name: `${PARENT}/tables/throttled` }, ONE_ATTEMPT);
          assert.equal(table.name, `${PARENT}/tables/throttled`);
          seen.push('ok');
        } catch (error) {
          seen.push(String((error as GrpcError).code));
        }
      }
      assert.deepEqual(
        proxy.calls.map((c) => (c.outcome === 'forwarded' ? 'ok' : String(c.grpcStatus))),
        seen,
        `run ${run}: the client saw what the proxy recorded`,
      );
      outcomes.push(seen);
    }
    assert.deepEqual(outcomes[1], outcomes[0], 'the same seed draws the same faults');
    const counts = (outcomes[0] ?? []).reduce<Record<string, number>>((all, o) => ({ ...all, [o]: (all[o] ?? 0) + 1 }), {});
    assert.ok((counts['ok'] ?? 0) > 0 && (counts['8'] ?? 0) > 0 && (counts['13'] ?? 0) + (counts['14'] ?? 0) > 0, JSON.stringify(counts));
  });
});
