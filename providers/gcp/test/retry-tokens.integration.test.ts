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
import { Storage } from '@google-cloud/storage';
import { INSTANCE, PROJECT, bucket, call, connectionContext, gcpProviderConfig, table } from './support.ts';

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

/** Protocol-buffer bytes of one length-delimited field. */
function lengthDelimited(field: number, bytes: Buffer): Buffer {
  const varint: number[] = [];
  for (let n = bytes.length; ; n >>>= 7) {
    if (n < 0x80) {
      varint.push(n);
      break;
    }
    varint.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint]), bytes]);
}

/**
 * A Bigtable admin endpoint whose ListTables answers in pages: the tables of `pages[i]`, with a
 * next_page_token while pages remain (google.bigtable.admin.v2.ListTablesResponse: tables = 1,
 * next_page_token = 2; Table.name = 1). Counts the RPCs.
 */
async function pagingGrpcServer(parent: string, pages: string[][]): Promise<{ host: string; rpcs: string[]; stop(): Promise<void> }> {
  const rpcs: string[] = [];
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    rpcs.push(String(headers[':path']));
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const request = Buffer.concat(chunks).toString('latin1');
      const index = pages.findIndex((_, i) => i > 0 && request.includes(`page-${i}`));
      const page = Math.max(0, index);
      const tables = (pages[page] ?? []).map((id) => lengthDelimited(1, lengthDelimited(1, Buffer.from(`${parent}/tables/${id}`))));
      const token = page + 1 < pages.length ? [lengthDelimited(2, Buffer.from(`page-${page + 1}`))] : [];
      const message = Buffer.concat([...tables, ...token]);
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      message.copy(frame, 5);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame);
    });
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

  it('GCS: each page of buckets.list (k8or import) is a request of its own, and takes a token', async () => {
    const paged = await startGcsFake({ bucketsPageSize: 2 });
    try {
      const storage = new Storage({ apiEndpoint: paged.endpoint, projectId: PROJECT });
      const names = ['estate-a', 'estate-b', 'estate-c', 'estate-d', 'estate-e'];
      for (const name of names) await storage.createBucket(name);
      const limits = new CloudRateLimits();
      const providerConfig = gcpProviderConfig({ bucket: paged.endpoint }, { rateLimits: { 'gcs-bucket-metadata': LIMIT } });
      providerConfig.metadata.name = 'gcs-paged';
      const before = paged.requests.length;

      const items = await bucketConnector.list?.({ providerConfig, credentials: undefined, recordCall: limits.recorder(gcpProvider, providerConfig, async (_operation, run) => await run()) }, call());

      assert.deepEqual(items?.map((item) => item.externalName).sort(), names);
      const listings = paged.requests.slice(before).filter((r) => r.method === 'GET' && r.path === '/storage/v1/b');
      assert.equal(listings.length, 3, 'five buckets in pages of two');
      assert.equal(limits.state('gcs-paged', 'gcs-bucket-metadata')?.calls, listings.length, 'each page took a token');
    } finally {
      await paged.stop();
    }
  });

  it('Bigtable: each page of ListTables (k8or import) is an RPC of its own, and takes a token', async () => {
    const parent = `projects/${PROJECT}/instances/${INSTANCE}`;
    const backend = await pagingGrpcServer(parent, [['estate-a', 'estate-b'], ['estate-c', 'estate-d'], ['estate-e']]);
    try {
      const limits = new CloudRateLimits();
      const providerConfig = gcpProviderConfig({ table: `http://${backend.host}` }, { rateLimits: { 'bigtable-table-reads': LIMIT } });
      providerConfig.metadata.name = 'bigtable-paged';

      const items = await tableConnector.list?.({ providerConfig, credentials: undefined, recordCall: limits.recorder(gcpProvider, providerConfig, async (_operation, run) => await run()) }, call());

      assert.deepEqual(items?.map((item) => item.externalName), ['estate-a', 'estate-b', 'estate-c', 'estate-d', 'estate-e']);
      assert.equal(backend.rpcs.length, 3, 'three pages');
      assert.equal(limits.state('bigtable-paged', 'bigtable-table-reads')?.calls, backend.rpcs.length, 'each page took a token');
    } finally {
      await backend.stop();
    }
  });
});
