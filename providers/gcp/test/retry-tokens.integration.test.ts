// Every attempt the GCP clients make takes a rate-limit token. The AWS and Azure SDKs retry inside a
// call (and take a token per retry through beforeCloudAttempt); the GCP provider turns the Google
// clients' retries off (Storage `autoRetry: false`, Bigtable admin `retry: null`), so the engine's
// backoff, which goes through the limiter, is the only retry. Checked on the wire: a throttled or
// failing backend sees exactly one request per token the limiter gave out.
import assert from 'node:assert/strict';
import { createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CloudRateLimits, ProviderError } from '@k8or/core';
import { startGcsFake, type GcsFake } from '@k8or/local-clouds';
import { bucketConnector, destroyBigtableClients, destroyStorageClients, gcpProvider, tableConnector } from '@k8or/provider-gcp';
import { bucket, call, connectionContext, gcpProviderConfig, table } from './support.ts';

const LIMIT = { requestsPerSecond: 100, burst: 100 };

/**
 * A Bigtable admin endpoint that answers every RPC with one gRPC status (trailers-only, as a busy
 * Bigtable does) and counts the RPCs: plaintext HTTP/2, as the client speaks to an emulator.
 */
async function failingGrpcServer(grpcStatus: number): Promise<{ host: string; rpcs: string[]; stop(): Promise<void> }> {
  const rpcs: string[] = [];
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    rpcs.push(String(headers[':path']));
    stream.on('error', () => undefined);
    stream.resume();
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(grpcStatus), 'grpc-message': 'the service is busy' }, { endStream: true });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    rpcs,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('every attempt of the GCP clients takes a rate-limit token (no client retries behind the limiter)', () => {
  let gcs: GcsFake;

  before(async () => {
    gcs = await startGcsFake();
  });
  after(async () => {
    await destroyStorageClients();
    await destroyBigtableClients();
    await gcs?.stop();
  });

  for (const status of [429, 503] as const) {
    it(`GCS: a ${status} is one request at the backend for one token, and a retryable error for the engine`, async () => {
      const limits = new CloudRateLimits();
      const providerConfig = gcpProviderConfig({ bucket: gcs.endpoint }, { rateLimits: { 'gcs-bucket-metadata': LIMIT } });
      providerConfig.metadata.name = `gcs-${status}`;
      const context = connectionContext(providerConfig, bucket('busy-bucket'));
      const client = await bucketConnector.connect(bucket('busy-bucket'), { ...context, recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall) });
      const before = gcs.requests.length;
      gcs.failNext(5, status);

      await assert.rejects(client.observe(bucket('busy-bucket'), call()), (error: unknown) => error instanceof ProviderError && error.retryable);

      const requests = gcs.requests.slice(before);
      assert.deepEqual(
        requests.map((r) => r.status),
        [status],
        'the Storage client sent the call once: no retry of its own',
      );
      assert.equal(limits.state(`gcs-${status}`, 'gcs-bucket-metadata')?.calls, requests.length, 'each request took a token');
      gcs.failNext(0, status);
    });
  }

  for (const [name, grpcStatus] of [
    ['UNAVAILABLE', 14],
    ['RESOURCE_EXHAUSTED', 8],
  ] as const) {
    it(`Bigtable: ${name} is one RPC at the backend for one token, and a retryable error for the engine`, async () => {
      const backend = await failingGrpcServer(grpcStatus);
      try {
        const limits = new CloudRateLimits();
        const providerConfig = gcpProviderConfig({ table: `http://${backend.host}` }, { rateLimits: { 'bigtable-table-reads': LIMIT } });
        providerConfig.metadata.name = `bigtable-${name}`;
        const context = connectionContext(providerConfig, table('busy-table'));
        const client = await tableConnector.connect(table('busy-table'), { ...context, recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall) });

        await assert.rejects(client.observe(table('busy-table'), call()), (error: unknown) => error instanceof ProviderError && error.retryable && error.code === name);

        assert.deepEqual(backend.rpcs, ['/google.bigtable.admin.v2.BigtableTableAdmin/GetTable'], 'the admin client sent the RPC once: no retry of its own');
        assert.equal(limits.state(`bigtable-${name}`, 'bigtable-table-reads')?.calls, backend.rpcs.length, 'each RPC took a token');
      } finally {
        await backend.stop();
      }
    });
  }
});
