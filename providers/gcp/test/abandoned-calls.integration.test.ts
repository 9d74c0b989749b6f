// A Bigtable admin call the reconcile gave up on (its signal aborted at the deadline) must not land
// at Bigtable later. Found with the gRPC fault proxy of the cloud-faults suite: the Google clients
// take no AbortSignal, and the generated admin methods return a plain promise (their `.then` drops
// gax's `cancel`), so `underSignal` rejected at once while the RPC stayed open until gax's own timeout
// for the method (CreateTable: none shorter than the stall here). A stall that ended with the client
// still waiting forwarded it then: the table appeared after the operator decided it had not made it,
// and had it landed between the next reconcile's GetTable and CreateTable, that CreateTable would meet
// ALREADY_EXISTS and the provider would call the table someone else's (NotOwned, terminal until the
// resync). The RPC is now cancelled with the signal (`cancelOnAbort`, a gRPC interceptor).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Bigtable } from '@google-cloud/bigtable';
import { RetryableError } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { destroyBigtableClients, tableConnector } from '@k8or/provider-gcp';
import { findCbtemulator, startBigtableEmulator, startGrpcFaultProxy, type BigtableEmulator, type GrpcFaultProxy } from '@k8or/local-clouds';
import { INSTANCE, PROJECT, connectionContext, gcpProviderConfig, table } from './support.ts';

const located = findCbtemulator();
const skip = 'missing' in located ? `${located.missing} (these tests need it)` : false;

describe('Bigtable calls cut short by the reconcile deadline, through the gRPC fault proxy', { skip }, () => {
  let emulator: BigtableEmulator;
  let proxy: GrpcFaultProxy;
  let straight: Bigtable;

  before(async () => {
    emulator = await startBigtableEmulator();
    proxy = await startGrpcFaultProxy({ target: emulator.host });
    straight = new Bigtable({ projectId: PROJECT, apiEndpoint: emulator.host, metricsEnabled: false, universeDomain: 'googleapis.com' });
  });
  after(async () => {
    await destroyBigtableClients();
    await straight?.close();
    await proxy?.stop();
    await emulator?.stop();
  });

  it(
    'a CreateTable the reconcile gave up on never reaches Bigtable afterwards',
    async () => {
      proxy.setFaults({ script: ['stall'], stallMs: 2_000, stallAfterForward: 0 });
      const resource = table('late-create');
      const client = await tableConnector.connect(resource, connectionContext(gcpProviderConfig({ table: proxy.endpoint }), resource));
      await assert.rejects(client.create(resource, { signal: AbortSignal.timeout(300) }), (error: unknown) => error instanceof RetryableError);
      const [held] = proxy.callsFor('late-create');
      assert.equal(held?.operation, 'CreateTable');
      await waitFor('the stalled CreateTable to end at the proxy', () => held?.clientLeft === true || held?.reachedBackend === true, 60_000);
      const [tables] = await straight.instance(INSTANCE).getTables();
      assert.deepEqual(
        tables.map((t) => t.id).filter((id) => id === 'late-create'),
        [],
        'the table appeared after the reconcile had given up on its create',
      );
      assert.equal(held?.clientLeft, true, 'the RPC was cancelled when the reconcile gave up');
    },
  );
});
