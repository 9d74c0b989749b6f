// A throttling storm leaves the Google clients whole: no retry budget to drain, no backoff carried
// over. The real @google-cloud/storage against the GCS fake behind the HTTP fault proxy (429
// rateLimitExceeded), and the real Bigtable admin client against cbtemulator behind the gRPC fault
// proxy (RESOURCE_EXHAUSTED): one request per call during the storm, each with its token, and the
// first call after it is one request that succeeds at once.
import assert from 'node:assert/strict';
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
      // The Storage client takes no signal: its request stays open until the stall ends (its own timeout is 60 s), and is not sent twice.
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
