import { connect, constants, createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface GrpcArrival {
  /** performance.now() when the RPC's stream opened at the proxy. */
  at: number;
  /** The RPC method, such as `GetTable`. */
  method: string;
}

export interface GrpcCountingProxy {
  /** `127.0.0.1:PORT`, to use in place of the backend's host. */
  host: string;
  readonly arrivals: GrpcArrival[];
  close(): Promise<void>;
}

/** Headers that describe the connection, not the RPC: HTTP/2 sets them per hop. */
const PER_HOP = new Set([':status', ':method', ':path', ':authority', ':scheme', 'connection', 'keep-alive', 'transfer-encoding']);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_HOP.has(name)));
}

/**
 * Starts a plaintext HTTP/2 proxy on a free port of 127.0.0.1 in front of a gRPC backend at `target`
 * (`host:port`, such as the Bigtable emulator's) that records when each RPC arrived and which method
 * it called, and forwards it unchanged: headers, messages and trailers (a trailers-only answer too).
 * The Google clients speak h2c to an emulator, one HTTP/2 stream per RPC, so counting streams here
 * counts calls where they reach the backend, the clients' own retries included.
 */
export async function startGrpcCountingProxy(target: string): Promise<GrpcCountingProxy> {
  const upstream = connect(`http://${target}`);
  upstream.on('error', () => undefined);
  const arrivals: GrpcArrival[] = [];
  const server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const path = String(headers[':path'] ?? '');
    arrivals.push({ at: performance.now(), method: path.split('/').pop() ?? path });
    const forwarded = upstream.request({ ...forwardable(headers), ':method': String(headers[':method'] ?? 'POST'), ':path': path });
    stream.pipe(forwarded);
    forwarded.on('response', (answer) => {
      const status = Number(answer[':status'] ?? 200);
      if (forwarded.readableEnded || 'grpc-status' in answer) {
        // Trailers-only: the status is in the headers and nothing follows.
        stream.respond({ ...forwardable(answer), ':status': status }, { endStream: true });
        return;
      }
      stream.respond({ ...forwardable(answer), ':status': status }, { waitForTrailers: true });
      let trailers: OutgoingHttpHeaders = {};
      forwarded.on('trailers', (received) => (trailers = forwardable(received)));
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      forwarded.pipe(stream);
    });
    const fail = (): void => {
      if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    };
    forwarded.on('error', fail);
    stream.on('error', () => forwarded.close(constants.NGHTTP2_CANCEL));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        upstream.close();
        server.close(() => resolve());
      }),
  };
}
