// A throttling storm leaves the Google clients whole: no retry budget to drain, no backoff carried
// over. The real @google-cloud/storage against the GCS fake behind the HTTP fault proxy (429
// rateLimitExceeded), and the real Bigtable admin client against cbtemulator behind the gRPC fault
// proxy (RESOURCE_EXHAUSTED): one request per call during the storm, each with its token, and the
// first call after it is one request that succeeds at once. And an outage of the Bigtable endpoint
// leaves no reconnect backoff that outlasts it by more than a few seconds.
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Bucket, Table } from '@k8or/api';
import { CloudRateLimits, RetryableError, type ExternalClient } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { bucketConnector, destroyBigtableClients, destroyStorageClients, gcpProvider, tableConnector } from '@k8or/provider-gcp';
import {
  findCbtemulator,
  startBigtableEmulator,
  startFaultProxy,
  startGcsFake,
  startGrpcFaultProxy,
  type BigtableEmulator,
  type FaultPlan,
  type GcsFake,
} from '@k8or/local-clouds';
import { connectionContext, gcpProviderConfig, bucket, table } from './support.ts';

const LIMIT = { requestsPerSecond: 100, burst: 100 };
const STORM = 10;
const located = findCbtemulator();

interface Proxy {
  readonly calls: readonly { outcome: string }[];
  setFaults(plan: FaultPlan): void;
  clearCalls(): void;
}

const OUTAGE_MS = 30_000;
/** The client's reconnect backoff is capped at 5 s (providers/gcp/src/table.ts), jittered by 20 %; grpc-js's own cap is 120 s. */
const MAX_GAP_S = 7.5;
const RECOVERY_S = 8;

/**
 * A TCP link to `target` that can be cut: while cut, every connection is reset as it opens (the
 * backend unreachable) and the time of each attempt is kept; restored, connections pass again.
 */
async function tcpLink(target: string): Promise<{ host: string; attempts: number[]; cut(): void; restore(): void; close(): Promise<void> }> {
  const [targetHost, targetPort] = target.split(':');
  let sockets: Socket[] = [];
  let down = false;
  const attempts: number[] = [];
  const server: Server = createServer((socket) => {
    if (down) {
      attempts.push(performance.now());
      socket.destroy();
      return;
    }
    const upstream = connect(Number(targetPort), targetHost);
    sockets.push(socket, upstream);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const resetAll = (): void => {
    for (const socket of sockets) socket.destroy();
    sockets = [];
  };
  return {
    host: `127.0.0.1:${(server.address() as { port: number }).port}`,
    attempts,
    cut: () => {
      down = true;
      resetAll();
    },
    restore: () => {
      down = false;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      resetAll();
      await closed;
    },
  };
}

/** A storm of throttled observes, then one observe with the faults off. */
async function stormThenCalm<R extends Bucket | Table>(proxy: Proxy, client: ExternalClient<R>, resource: R, tokens: () => number): Promise<void> {
  proxy.setFaults({ throttle: 1 });
  proxy.clearCalls();
  const before = tokens();
  try {
    const storm = await Promise.allSettled(Array.from({ length: STORM }, () => client.observe(resource, { signal: AbortSignal.timeout(30_000) })));
    assert.ok(storm.every((outcome) => outcome.status === 'rejected' && outcome.reason instanceof RetryableError), 'every call of the storm failed retryable');
  } finally {
    proxy.setFaults({});
  }
  assert.equal(proxy.calls.length, STORM, 'one request per call: no client retry');
  assert.ok(proxy.calls.every((c) => c.outcome === 'throttled'));
  assert.equal(tokens() - before, STORM, 'each request took a token');
  proxy.clearCalls();
  const started = performance.now();
  const observation = await client.observe(resource, { signal: AbortSignal.timeout(30_000) });
  assert.equal(observation.exists, true);
  assert.equal(proxy.calls.length, 1, 'one request');
  assert.ok(performance.now() - started < 2_000, 'no backoff left over from the storm');
}

describe('after a throttling storm the GCP clients are whole', () => {
  let gcs: GcsFake;

  before(async () => {
    gcs = await startGcsFake();
  });
  after(async () => {
    await destroyStorageClients();
    await destroyBigtableClients();
    await gcs?.stop();
  });

  it('Cloud Storage: ten 429s are ten requests, and the next call is one request that succeeds', async () => {
    const proxy = await startFaultProxy({ target: gcs.endpoint, dialect: 'gcs' });
    try {
      const limits = new CloudRateLimits();
      const providerConfig = gcpProviderConfig({ bucket: proxy.endpoint }, { rateLimits: { 'gcs-bucket-metadata': LIMIT } });
      providerConfig.metadata.name = 'gcs-storm';
      const resource = bucket('after-storm');
      const context = connectionContext(providerConfig, resource);
      const client = await bucketConnector.connect(resource, { ...context, recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall) });
      await client.create(resource, { signal: AbortSignal.timeout(30_000) });
      await stormThenCalm(proxy, client, resource, () => limits.state('gcs-storm', 'gcs-bucket-metadata')?.calls ?? 0);
    } finally {
      await proxy.stop();
    }
  });

  it('Cloud Storage: a stalled request ends with the call\'s deadline as a retryable error (never absence), and is not sent again', async () => {
    const proxy = await startFaultProxy({ target: gcs.endpoint, dialect: 'gcs' });
    try {
      const resource = bucket('stalled');
      const client = await bucketConnector.connect(resource, connectionContext(gcpProviderConfig({ bucket: proxy.endpoint }), resource));
      proxy.setFaults({ script: ['stall'], stallMs: 5_000, stallAfterForward: 0 });
      const started = performance.now();
      await assert.rejects(client.observe(resource, { signal: AbortSignal.timeout(1_500) }), (error: unknown) => error instanceof RetryableError);
      assert.ok(performance.now() - started < 4_000, 'the call ended with its deadline');
      // The Storage client takes no signal and bounds no request (src/abort.ts withinTimeout): its request stays open until the stall ends, and is not sent twice.
      await waitFor('the stalled request to be answered', () => proxy.calls[0]?.status !== undefined, 30_000);
      assert.equal(proxy.calls.length, 1);
    } finally {
      await proxy.stop();
    }
  });

  describe('Bigtable (cbtemulator behind the gRPC fault proxy)', { skip: 'missing' in located ? located.missing : false }, () => {
    let emulator: BigtableEmulator;

    before(async () => {
      emulator = await startBigtableEmulator();
    });
    after(async () => {
      await destroyBigtableClients();
      await emulator?.stop();
    });

    it(
      'after a 30 s outage the client reaches Bigtable again within seconds of its return, not after a reconnect backoff of its own',
      { timeout: 120_000 },
      async () => {
        const link = await tcpLink(emulator.host);
        try {
          const resource = table('after-outage');
          const client = await tableConnector.connect(resource, connectionContext(gcpProviderConfig({ table: `http://${link.host}` }), resource));
          await client.create(resource, { signal: AbortSignal.timeout(30_000) });
          link.cut();
          const outage = performance.now();
          // Calls during the outage fail (retryable), as the engine's would, and keep the channel reconnecting.
          while (performance.now() - outage < OUTAGE_MS) {
            await assert.rejects(client.observe(resource, { signal: AbortSignal.timeout(5_000) }), (error: unknown) => error instanceof RetryableError);
            await new Promise((resolve) => setTimeout(resolve, 1_000));
          }
          link.restore();
          const gaps = [...link.attempts, performance.now()].map((at, i, all) => (i === 0 ? at - outage : at - (all[i - 1] ?? at)) / 1000);
          const longest = Math.max(...gaps);
          assert.ok(longest < MAX_GAP_S, `the client tried to reconnect at most every ${MAX_GAP_S} s during the outage (gaps: ${gaps.map((g) => g.toFixed(1)).join(', ')} s)`);
          const back = performance.now();
          await waitFor(
            'an observe to succeed once Bigtable is back',
            () => client.observe(resource, { signal: AbortSignal.timeout(5_000) }).then((observation) => observation.exists, () => false),
            60_000,
            200,
          );
          const seconds = (performance.now() - back) / 1000;
          assert.ok(seconds < RECOVERY_S, `Bigtable reached ${seconds.toFixed(1)} s after its return; at most ${RECOVERY_S} s expected`);
        } finally {
          await link.close();
        }
      },
    );

    it('ten RESOURCE_EXHAUSTED are ten RPCs, and the next call is one RPC that succeeds', async () => {
      const proxy = await startGrpcFaultProxy({ target: emulator.host });
      try {
        const limits = new CloudRateLimits();
        const providerConfig = gcpProviderConfig({ table: proxy.endpoint }, { rateLimits: { 'bigtable-table-reads': LIMIT, 'bigtable-table-writes': LIMIT } });
        providerConfig.metadata.name = 'bigtable-storm';
        const resource = table('after-storm');
        const context = connectionContext(providerConfig, resource);
        const client = await tableConnector.connect(resource, { ...context, recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall) });
        await client.create(resource, { signal: AbortSignal.timeout(30_000) });
        await stormThenCalm(proxy, client, resource, () => limits.state('bigtable-storm', 'bigtable-table-reads')?.calls ?? 0);
      } finally {
        await proxy.stop();
      }
    });
  });
});
