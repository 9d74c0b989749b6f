import { connect, constants, createServer, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { CallLog } from './call-log.js';
import { faultDraws, holdWhileOpen, type FaultPlan } from './fault-draws.js';
import type { FaultProxy, ProxiedCall } from './fault-proxy.js';

export interface GrpcFaultProxyOptions extends FaultPlan {
  /** The gRPC backend, `host:port` (such as the Bigtable emulator's). */
  target: string;
  /** Seed of the fault draws; a random one when absent (read it back from `seed`). */
  seed?: number;
  /** Called as each RPC's stream opens, before anything else (the counting proxy's clock). */
  onArrival?: (method: string) => void;
  /**
   * Called once the backend has answered a forwarded RPC, before the answer goes on to the client; a
   * returned promise holds the answer until it settles. A test can end the client there: the backend
   * acted, the client never hears (the reliability suite kills the operator so).
   */
  onAnswered?: (call: GrpcProxiedCall) => void | Promise<void>;
}

/** One RPC that reached the proxy: `operation` is the RPC method (`CreateTable`), `resource` the table id it names. */
export interface GrpcProxiedCall extends ProxiedCall {
  /** The `grpc-status` sent to the client (0 OK); undefined while a stall holds it, or when the client gave up first. */
  grpcStatus?: number;
  /** The client ended the RPC (its deadline, a cancel) while a stall held it. */
  clientLeft?: boolean;
}

export interface GrpcFaultProxy extends FaultProxy {
  /** `127.0.0.1:PORT`: the Bigtable client's `apiEndpoint`, or BIGTABLE_EMULATOR_HOST. */
  host: string;
  /** `http://127.0.0.1:PORT`, as a ProviderConfig's `endpoints.table` takes it. */
  endpoint: string;
  readonly calls: readonly GrpcProxiedCall[];
  callsFor(resource: string): GrpcProxiedCall[];
}

/** gRPC status codes the proxy answers with (google.rpc.Code). */
export const GrpcStatus = { OK: 0, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNAVAILABLE: 14 } as const;

interface GrpcFault {
  code: number;
  message: string;
}

/**
 * What Google answers when a project is over quota, and when the service is briefly away. Bigtable's
 * status-code reference (cloud.google.com/bigtable/docs/status-codes) gives RESOURCE_EXHAUSTED (8)
 * for an exhausted project-level Admin API quota, INTERNAL (13) for an internal error and UNAVAILABLE
 * (14) for a service "down or temporarily overloaded". The quota message has the shape the clients
 * show for Bigtable's quotas ("Quota exceeded for quota metric 'DropRowRange requests' and limit
 * 'DropRowRange requests per day' of service 'bigtableadmin.googleapis.com' for consumer
 * 'project_number:…'", projectnessie/nessie#7351); the metric names here are ours. The real service
 * also sends a `grpc-status-details-bin` (ErrorInfo, QuotaFailure) that k8or does not read, so it is
 * left out.
 */
function quotaExceeded(path: string): GrpcFault {
  const admin = path.startsWith('/google.bigtable.admin.');
  const [metric, service] = admin ? ['Table admin requests', 'bigtableadmin.googleapis.com'] : ['Data API requests', 'bigtable.googleapis.com'];
  return {
    code: GrpcStatus.RESOURCE_EXHAUSTED,
    message: `Quota exceeded for quota metric '${metric}' and limit '${metric} per minute per project' of service '${service}' for consumer 'project_number:000000000000'.`,
  };
}
const SERVER_ERRORS: readonly GrpcFault[] = [
  { code: GrpcStatus.UNAVAILABLE, message: 'The service is currently unavailable.' },
  { code: GrpcStatus.INTERNAL, message: 'Internal error encountered.' },
];

/** Headers that describe the connection, not the RPC: HTTP/2 sets them per hop. */
const PER_HOP = new Set([':status', ':method', ':path', ':authority', ':scheme', 'connection', 'keep-alive', 'transfer-encoding']);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_HOP.has(name)));
}

/** `grpc-message` is percent-encoded: bytes outside printable ASCII, and `%` itself (gRPC over HTTP/2 spec). */
function grpcMessage(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

// --- the table an RPC names, from its request message (protobuf wire format) ---------------------

/** The length-delimited fields of one protobuf message, by field number; undefined when it does not parse as one. */
function lengthDelimitedFields(message: Buffer): Map<number, Buffer> | undefined {
  const fields = new Map<number, Buffer>();
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      const byte = message[at++];
      if (byte === undefined) return undefined;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    return undefined;
  };
  while (at < message.length) {
    const key = varint();
    if (key === undefined) return undefined;
    const wire = key % 8;
    const field = Math.floor(key / 8);
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const length = varint();
      if (length === undefined || at + length > message.length) return undefined;
      if (!fields.has(field)) fields.set(field, message.subarray(at, at + length));
      at += length;
    } else {
      return undefined;
    }
  }
  return at === message.length ? fields : undefined;
}

const TABLE_PATH = /^projects\/[^/]+\/instances\/[^/]+\/tables\/([^/]+)/;

/**
 * The table id an RPC's first request message names: `name` or `table_name` (field 1) of the table
 * RPCs and of ReadRows/MutateRows, `table_id` (field 2) of CreateTable, `table.name` of UpdateTable.
 * `''` for instance-level calls (ListTables) and for what it cannot read (a compressed message).
 */
export function tableOfRequest(method: string, body: Buffer): string {
  // gRPC framing: a compressed flag byte and a 4-byte length, then the message
  if (body.length < 5 || body[0] !== 0) return '';
  const fields = lengthDelimitedFields(body.subarray(5, 5 + body.readUInt32BE(1)));
  if (!fields) return '';
  if (method === 'CreateTable') return fields.get(2)?.toString('utf8') ?? '';
  const first = fields.get(1);
  if (!first) return '';
  const named = TABLE_PATH.exec(first.toString('utf8'));
  if (named) return named[1] ?? '';
  const nested = lengthDelimitedFields(first)?.get(1);
  return (nested && TABLE_PATH.exec(nested.toString('utf8'))?.[1]) ?? '';
}

// --- the proxy ------------------------------------------------------------------------------------

/** The backend's stream ended without a grpc-status: it had the call, and whether it acted is unknown. */
class IncompleteAnswer extends Error {
  constructor() {
    super("the backend's stream ended without a grpc-status");
  }
}

/** The backend's whole answer: headers, messages, trailers (none for a trailers-only answer). */
interface Answer {
  headers: OutgoingHttpHeaders;
  body: Buffer;
  trailers: OutgoingHttpHeaders | undefined;
}

const grpcStatusOf = (answer: Answer): number | undefined => {
  const value = answer.trailers?.['grpc-status'] ?? answer.headers['grpc-status'];
  return value === undefined ? undefined : Number(value);
};

/**
 * A plaintext HTTP/2 (h2c) proxy on a free port of 127.0.0.1 in front of a gRPC backend, such as the
 * Bigtable emulator, that answers a seeded share of RPCs as Google does when overloaded (the same
 * `FaultPlan` and PRNG as the HTTP proxies of `startFaultProxy`): throttled calls trailers-only with
 * RESOURCE_EXHAUSTED, 5xx-like ones with UNAVAILABLE or INTERNAL, and stalls held past `stallMs`
 * (forwarded before the stall or after it). Every RPC is recorded with its method, the table it names,
 * when it came and what was done to it. The rest pass unchanged: headers, messages and trailers.
 *
 * The proxy reads a request whole before it decides (the table it names is in its first message),
 * and the backend's answer whole before it sends it: right for unary and server-streaming RPCs (all
 * of Bigtable's table admin and the data calls k8or and its tests make), not for bidirectional ones.
 */
export async function startGrpcFaultProxy(options: GrpcFaultProxyOptions): Promise<GrpcFaultProxy> {
  const draws = faultDraws(options, options.seed);
  const log = new CallLog<GrpcProxiedCall>(draws);
  const stopping = new AbortController();
  let upstream: ClientHttp2Session | undefined;
  /** The session to the backend, opened again if the backend ended the last one (GOAWAY, a restart). */
  const backend = (): ClientHttp2Session => {
    if (!upstream || upstream.closed || upstream.destroyed) {
      upstream = connect(`http://${options.target}`);
      upstream.on('error', () => undefined);
    }
    return upstream;
  };

  const forward = (headers: IncomingHttpHeaders, body: Buffer, client: ServerHttp2Stream): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const request = backend().request({ ...forwardable(headers), ':method': String(headers[':method'] ?? 'POST'), ':path': String(headers[':path'] ?? '') });
      const cancel = (): void => {
        if (!request.closed) request.close(constants.NGHTTP2_CANCEL);
      };
      // the client gave up (its deadline, a cancel) or the proxy stops: so does the backend's call
      client.once('close', cancel);
      stopping.signal.addEventListener('abort', cancel, { once: true });
      let answerHeaders: OutgoingHttpHeaders = {};
      let trailers: OutgoingHttpHeaders | undefined;
      const chunks: Buffer[] = [];
      request.on('response', (received) => (answerHeaders = { ...forwardable(received), ':status': Number(received[':status'] ?? 200) }));
      request.on('trailers', (received) => (trailers = forwardable(received)));
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const answer: Answer = { headers: answerHeaders, body: Buffer.concat(chunks), trailers };
        // A gRPC answer ends with its status (in trailers, or a trailers-only answer's headers). A
        // stream that ended without one (closed under it) is no answer: the backend had the call,
        // whether it acted is unknown, and the client sees its stream reset.
        if (grpcStatusOf(answer) === undefined) reject(new IncompleteAnswer());
        else resolve(answer);
      });
      request.on('error', reject);
      request.on('close', () => {
        client.off('close', cancel);
        stopping.signal.removeEventListener('abort', cancel);
        if (request.rstCode !== constants.NGHTTP2_NO_ERROR) reject(new Error(`the backend's stream closed with code ${request.rstCode}`));
      });
      request.end(body);
    });

  const send = (stream: ServerHttp2Stream, answer: Answer): void => {
    if (stream.destroyed || stream.closed) return;
    if (answer.trailers === undefined) {
      // trailers-only: the status is in the headers and nothing follows
      stream.respond(answer.headers, { endStream: true });
      return;
    }
    const trailers = answer.trailers;
    stream.respond(answer.headers, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end(answer.body);
  };

  const sendFault = (stream: ServerHttp2Stream, fault: GrpcFault): void => {
    if (stream.destroyed || stream.closed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(fault.code), 'grpc-message': grpcMessage(fault.message) }, { endStream: true });
  };

  /** True when the stall ran out with the client still waiting; false when it left (recorded) or the proxy stops. */
  const hold = async (stream: ServerHttp2Stream, ms: number, record: GrpcProxiedCall): Promise<boolean> => {
    const ended = await holdWhileOpen(stream, ms, stopping.signal);
    if (ended === 'left') record.clientLeft = true;
    return ended === 'elapsed';
  };

  const handle = async (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> => {
    const path = String(headers[':path'] ?? '');
    const method = path.split('/').pop() ?? path;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const record: GrpcProxiedCall = { at: Date.now(), method: String(headers[':method'] ?? 'POST'), url: path, operation: method, resource: tableOfRequest(method, body), outcome: 'forwarded' };
    log.record(record);

    const draw = draws.next();
    const fault = draw.fault === 'throttle' ? quotaExceeded(path) : draw.fault === 'serverError' ? draws.pick(SERVER_ERRORS) : undefined;
    if (fault) {
      record.outcome = fault.code === GrpcStatus.RESOURCE_EXHAUSTED ? 'throttled' : 'server-error';
      record.grpcStatus = fault.code;
      sendFault(stream, fault);
      return;
    }
    try {
      let answer: Answer;
      if (draw.fault === 'stall') {
        record.outcome = 'stalled';
        if (draw.forwardFirst) {
          answer = await forward(headers, body, stream);
          record.reachedBackend = true;
          if (!(await hold(stream, draw.stallMs, record))) return;
        } else {
          if (!(await hold(stream, draw.stallMs, record))) return;
          answer = await forward(headers, body, stream);
          record.reachedBackend = true;
        }
      } else {
        answer = await forward(headers, body, stream);
      }
      const status = grpcStatusOf(answer);
      if (status !== undefined) record.grpcStatus = status;
      // the hook's own failure changes nothing of the answer
      await Promise.resolve(options.onAnswered?.(record)).catch(() => undefined);
      send(stream, answer);
    } catch (error) {
      // The backend is down, the client left, the proxy stops, or the answer was cut: the client sees its stream reset, as with a dead endpoint.
      if (error instanceof IncompleteAnswer) record.reachedBackend = true;
      else if (record.outcome === 'forwarded') record.outcome = 'backend-unreachable';
      if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    }
  };

  const server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    options.onArrival?.(String(headers[':path'] ?? '').split('/').pop() ?? '');
    stream.on('error', () => undefined);
    handle(stream, headers).catch(() => {
      if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    });
  });
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = `${address}:${port}`;

  return Object.assign(log, {
    host,
    endpoint: `http://${host}`,
    stop: () =>
      new Promise<void>((resolve) => {
        stopping.abort();
        upstream?.close();
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  });
}
