// The gRPC fault proxy passes on a whole answer only: one whose stream ended without a grpc-status
// (the backend's stream closed under it) is no answer, and the client must not take it for one.
import assert from 'node:assert/strict';
import { connect, constants, createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startGrpcFaultProxy, type GrpcFaultProxy, type GrpcProxiedCall } from '@k8or/local-clouds';

/** A gRPC-framed message: a compressed flag byte, a 4-byte length, then the bytes. */
const framed = (bytes: Buffer): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from([0, 0, 0, bytes.length]), bytes]);

/** What one client saw of one RPC through the proxy. */
interface Seen {
  status: string | undefined;
  rstCode: number;
}

function call(host: string, method: string): Promise<Seen> {
  return new Promise((resolve) => {
    const session = connect(`http://${host}`);
    session.on('error', () => undefined);
    const stream = session.request({ ':method': 'POST', ':path': `/google.bigtable.admin.v2.BigtableTableAdmin/${method}`, 'content-type': 'application/grpc' });
    let status: string | undefined;
    stream.on('response', (headers) => (status ??= headers['grpc-status'] as string | undefined));
    stream.on('trailers', (trailers) => (status = trailers['grpc-status'] as string | undefined));
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.on('close', () => {
      resolve({ status, rstCode: stream.rstCode ?? 0 });
      session.close();
    });
    stream.end(framed(Buffer.alloc(0)));
  });
}

describe('gRPC fault proxy: whole answers only', () => {
  let backend: Http2Server;
  let proxy: GrpcFaultProxy;
  const answered: GrpcProxiedCall[] = [];

  before(async () => {
    backend = createServer();
    backend.on('stream', (stream: ServerHttp2Stream, headers) => {
      stream.on('error', () => undefined);
      const method = String(headers[':path']).split('/').pop();
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: method === 'Whole' });
      if (method === 'Whole') {
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(framed(Buffer.from('ok')));
        return;
      }
      // the backend acted and began its answer, then its stream closed with no status
      stream.write(framed(Buffer.from('half')), () => stream.close(constants.NGHTTP2_NO_ERROR));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const { port } = backend.address() as AddressInfo;
    proxy = await startGrpcFaultProxy({ target: `127.0.0.1:${port}`, onAnswered: (c) => void answered.push(c) });
  });
  after(async () => {
    await proxy.stop();
    await new Promise((resolve) => backend.close(resolve));
  });

  it('passes on a whole answer, its status recorded', async () => {
    const seen = await call(proxy.host, 'Whole');
    assert.equal(seen.status, '0');
    const record = proxy.calls.find((c) => c.operation === 'Whole');
    assert.equal(record?.grpcStatus, 0);
    assert.ok(answered.some((c) => c.operation === 'Whole'));
  });

  it('an answer that ended without a grpc-status reaches the client as a reset stream, recorded as reaching the backend with no status', async () => {
    const seen = await call(proxy.host, 'Half');
    assert.equal(seen.status, undefined, 'no status passed on');
    assert.notEqual(seen.rstCode, constants.NGHTTP2_NO_ERROR, 'the stream is reset, as a dead endpoint would leave it');
    const record = proxy.calls.find((c) => c.operation === 'Half');
    assert.equal(record?.grpcStatus, undefined);
    assert.equal(record?.reachedBackend, true, 'the backend had the call: whether it acted is unknown');
    assert.ok(!answered.some((c) => c.operation === 'Half'), 'not told as answered');
  });
});
