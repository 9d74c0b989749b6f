import { startGrpcFaultProxy } from './grpc-fault-proxy.js';

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

/**
 * Starts a plaintext HTTP/2 proxy on a free port of 127.0.0.1 in front of a gRPC backend at `target`
 * (`host:port`, such as the Bigtable emulator's) that records when each RPC arrived and which method
 * it called, and forwards it unchanged: headers, messages and trailers (a trailers-only answer too).
 * The Google clients speak h2c to an emulator, one HTTP/2 stream per RPC, so counting streams here
 * counts calls where they reach the backend, the clients' own retries included. It is the gRPC fault
 * proxy with no faults, timed on the monotonic clock.
 */
export async function startGrpcCountingProxy(target: string): Promise<GrpcCountingProxy> {
  const arrivals: GrpcArrival[] = [];
  const proxy = await startGrpcFaultProxy({ target, onArrival: (method) => arrivals.push({ at: performance.now(), method }) });
  return { host: proxy.host, arrivals, close: () => proxy.stop() };
}
