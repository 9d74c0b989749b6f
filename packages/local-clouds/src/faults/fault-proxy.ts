import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLOUD_DIALECTS, type CloudDialect, type CloudDialectName, type FaultAnswer, type ProxiedRequest } from './dialects.js';
import { CallLog } from './call-log.js';
import { faultDraws, holdWhileOpen, type FaultPlan } from './fault-draws.js';

export type { FaultPlan } from './fault-draws.js';

export interface FaultProxyOptions extends FaultPlan {
  /** The backend's endpoint (`http://127.0.0.1:PORT`, or with a path such as Azurite's `/devstoreaccount1`). */
  target: string;
  /** The cloud API behind it, whose error formats the proxy speaks. */
  dialect: CloudDialectName;
  /** Seed of the fault draws; a random one when absent (read it back from `seed`). */
  seed?: number;
  host?: string;
}

export type ProxiedOutcome = 'forwarded' | 'throttled' | 'server-error' | 'stalled' | 'backend-unreachable';

/** One call that reached the proxy. */
export interface ProxiedCall {
  /** When it arrived (ms since the epoch). */
  at: number;
  method: string;
  /** Path and query, as received (page markers and continuation tokens included); the gRPC method path for gRPC. */
  url: string;
  /** The API operation (`CreateTable`, `PUT /bucket?versioning`, ...). */
  operation: string;
  /** The bucket, table or container it is about; `''` for account-level calls. */
  resource: string;
  outcome: ProxiedOutcome;
  /** Status sent to the client; undefined while a stall holds it, or when the client gave up first. */
  status?: number;
  /**
   * A stalled call the backend saw (before its stall, or after it while the client still waited);
   * for gRPC also a call whose answer ended without a status: the backend had it, and whether it
   * acted is unknown.
   */
  reachedBackend?: boolean;
  /**
   * The SDK's id of the operation this call is an attempt of (AWS `amz-sdk-invocation-id`, Azure
   * `x-ms-client-request-id`), the same on every retry: a call whose id came before is an SDK retry.
   */
  operationId?: string;
}

export interface FaultProxy {
  /** The endpoint to give the SDKs in place of the target: same path, the proxy's host and port. */
  endpoint: string;
  readonly seed: number;
  /** Every call so far, in arrival order. */
  readonly calls: readonly ProxiedCall[];
  /** The calls about one resource. */
  callsFor(resource: string): ProxiedCall[];
  /** Replaces the fault plan from the next call on (`{}` turns faults off). */
  setFaults(plan: FaultPlan): void;
  /** Forgets the calls recorded so far. */
  clearCalls(): void;
  /** Ends every held call and closes the proxy. */
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/**
 * An HTTP proxy in front of one local backend that answers a seeded share of calls as the cloud does
 * when it is overloaded: with its own throttling and 5xx wire formats (so the real SDKs classify them
 * as they would the cloud's), and with stalls past any deadline. Every call is logged with the
 * resource it is about, so a test can count calls per resource and measure call rates. Headers and
 * bodies pass through unchanged (a SigV4 signature covers the Host header the client sent).
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const dialect: CloudDialect = CLOUD_DIALECTS[options.dialect];
  const target = new URL(options.target);
  const draws = faultDraws(options, options.seed);
  const log = new CallLog<ProxiedCall>(draws);
  const agent = new Agent({ keepAlive: true });
  const stopping = new AbortController();

  /** The backend's whole answer, read before anything goes back to the client. */
  const forward = (request: ProxiedRequest): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers, agent, signal: stopping.signal },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }));
          answer.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(request.body);
    });

  const send = (response: ServerResponse, method: string, answer: { status: number; headers: IncomingHttpHeaders | Record<string, string>; body: Buffer | string }): void => {
    const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())));
    const body = method === 'HEAD' ? undefined : answer.body;
    if (method !== 'HEAD') headers['content-length'] = String(Buffer.byteLength(answer.body));
    response.writeHead(answer.status, headers);
    response.end(body);
  };

  /** True when the stall ran out with the client still waiting, false when the client left (or the proxy stops). */
  const hold = async (response: ServerResponse, ms: number): Promise<boolean> => (await holdWhileOpen(response, ms, stopping.signal)) === 'elapsed';

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const request: ProxiedRequest = { method: incoming.method ?? 'GET', url: incoming.url ?? '/', headers: incoming.headers, body: Buffer.concat(chunks) };
    const record: ProxiedCall = {
      at: Date.now(),
      method: request.method,
      url: request.url,
      operation: dialect.operationOf(request),
      resource: dialect.resourceOf(request),
      outcome: 'forwarded',
    };
    const operationId = incoming.headers['amz-sdk-invocation-id'] ?? incoming.headers['x-ms-client-request-id'];
    if (typeof operationId === 'string') record.operationId = operationId;
    log.record(record);

    const draw = draws.next();
    let fault: FaultAnswer | undefined;
    if (draw.fault === 'throttle') {
      record.outcome = 'throttled';
      fault = draws.pick(dialect.throttles)();
      if (draw.retryAfterSeconds !== undefined) fault = { ...fault, headers: { ...fault.headers, 'retry-after': String(draw.retryAfterSeconds) } };
    } else if (draw.fault === 'serverError') {
      record.outcome = 'server-error';
      fault = draws.pick(dialect.serverErrors)();
    }
    if (fault) {
      record.status = fault.status;
      send(response, request.method, fault);
      return;
    }
    try {
      if (draw.fault === 'stall') {
        record.outcome = 'stalled';
        if (draw.forwardFirst) {
          const answer = await forward(request);
          record.reachedBackend = true;
          if (!(await hold(response, draw.stallMs))) return;
          record.status = answer.status;
          send(response, request.method, answer);
        } else {
          if (!(await hold(response, draw.stallMs))) return;
          const answer = await forward(request);
          record.reachedBackend = true;
          record.status = answer.status;
          send(response, request.method, answer);
        }
        return;
      }
      const answer = await forward(request);
      record.status = answer.status;
      send(response, request.method, answer);
    } catch {
      // The backend is down (or the proxy stops): the client sees a dropped connection, as with a dead endpoint.
      if (record.outcome === 'forwarded') record.outcome = 'backend-unreachable';
      response.destroy();
    }
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const path = target.pathname === '/' && !options.target.endsWith('/') ? '' : target.pathname;

  return Object.assign(log, {
    endpoint: `http://${address.address}:${address.port}${path}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        stopping.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
        agent.destroy();
      }),
  });
}
