// A recording proxy in front of a local cloud backend (HTTP here; Bigtable's gRPC through the gRPC
// fault proxy of `@k8or/local-clouds` with no faults, `startGrpcCloudProxy`): the operator talks to the proxy, the
// proxy forwards every request unchanged and records what the cloud did. It gives the suites two
// things the backends do not: a count of the cloud writes that succeeded per resource (so "nothing
// was done twice" is a number), and a hook on each call that can kill the operator while the call
// is in flight (after the cloud acted, before the operator hears the answer: the worst moment).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CLOUD_DIALECTS, startGrpcFaultProxy, type CloudDialectName, type FaultAnswer, type GrpcProxiedCall, type ProxiedRequest } from '@k8or/local-clouds';

/** Every cloud API the operator reaches through a recording proxy: the HTTP dialects, and Bigtable's gRPC. */
export type ProxiedApi = CloudDialectName | 'bigtable';

/** What one cloud call did, in the backend's own terms. */
export interface CloudCall {
  /** The operation as the cloud's dialect names it: `PUT /bucket`, `CreateTable`, `POST /b`, `PUT /container`, ... */
  operation: string;
  /** The bucket or table the call names, when it names one. */
  resource: string | undefined;
  /**
   * Who made the call: the application id of its User-Agent (`app/<id>`, which the AWS SDKs take from
   * `AWS_SDK_UA_APP_ID`; a sharded run gives each replica its shard name there), when it carries one.
   */
  caller?: string;
  /** The backend's answer: its HTTP status (`200`), or `grpc-status 0`; `''` while in flight. */
  answer: string;
  /** The backend did what was asked: HTTP 2xx, gRPC OK. */
  ok: boolean;
  /** When the call reached the proxy, and when the backend's answer came (ms since the epoch; 0 while in flight). */
  sentAt: number;
  answeredAt: number;
  /** The backend acted, but the operator got a 5xx in place of its answer (`failAfterEffect`). */
  failedAfterEffect?: boolean;
  /** The backend had the call but its answer never came whole (a gRPC stream cut before its status): it may have acted. */
  outcomeUnknown?: boolean;
}

/** Classifies a request as one operation on one resource. */
export type CallClassifier = (request: ProxiedRequest) => { operation: string; resource: string | undefined };

/**
 * The classifier of a cloud API's wire protocol: the dialect's of `@k8or/local-clouds` (the cloud-faults
 * proxies name calls the same way), e.g. `PUT /bucket` for S3 CreateBucket, `CreateTable`, `POST /b`
 * for GCS buckets.insert, `PUT /container`, `POST Tables`.
 */
export function classifierOf(dialect: CloudDialectName): CallClassifier {
  const { operationOf, resourceOf } = CLOUD_DIALECTS[dialect];
  return (request) => ({ operation: operationOf(request), resource: resourceOf(request) || undefined });
}

export interface CloudProxy {
  /** The endpoint to give the operator instead of the backend's. */
  endpoint: string;
  readonly calls: readonly CloudCall[];
  /**
   * Called once the backend has answered, before the answer is passed on. A returned promise holds
   * the answer back until it settles (a kill hook kills the operator there, so the answer is lost).
   */
  onAnswered: ((call: CloudCall) => void | Promise<void>) | undefined;
  /**
   * Asked once for each call the backend answered with success: true sends the operator one of the
   * cloud's own 5xx answers in its place (the write is done, the operator hears it failed). HTTP only.
   */
  failAfterEffect: ((call: CloudCall) => boolean) | undefined;
  /** Successful calls of one operation, per resource. */
  succeeded(operation: string): Map<string, number>;
  /** Calls of one operation whose outcome is unknown (`outcomeUnknown`), per resource. */
  unknown(operation: string): Map<string, number>;
  stop(): Promise<void>;
}

/** A recording proxy in front of `backend` (its path, such as Azurite's account, kept in `endpoint`). */
export async function startCloudProxy(backend: string, classify: CallClassifier, serverError?: () => FaultAnswer): Promise<CloudProxy> {
  const target = new URL(backend);
  const calls: CloudCall[] = [];
  const proxy: CloudProxy = {
    endpoint: '',
    calls,
    onAnswered: undefined,
    failAfterEffect: undefined,
    succeeded: (operation) => succeededOf(calls, operation),
    unknown: (operation) => countedOf(calls, operation, (call) => call.outcomeUnknown === true),
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const caller = appIdOf(req.headers['user-agent']);
      const call: CloudCall = { ...classify({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body }), ...(caller ? { caller } : {}), answer: '', ok: false, sentAt: Date.now(), answeredAt: 0 };
      calls.push(call);
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
        (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            const status = answer.statusCode ?? 0;
            call.answer = String(status);
            call.ok = status >= 200 && status < 300;
            call.answeredAt = Date.now();
            const pass = (): void => {
              if (res.destroyed) return;
              if (call.ok && serverError && proxy.failAfterEffect?.(call) === true) {
                call.failedAfterEffect = true;
                const fault = serverError();
                res.writeHead(fault.status, fault.headers);
                res.end(req.method === 'HEAD' ? undefined : fault.body);
                return;
              }
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(Buffer.concat(answerChunks));
            };
            Promise.resolve(proxy.onAnswered?.(call)).then(pass, pass);
          });
        },
      );
      upstream.on('error', () => {
        call.answer = '502';
        call.answeredAt = Date.now();
        if (!res.headersSent) res.writeHead(502).end();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}${target.pathname.replace(/\/$/, '')}`;
  return proxy;
}

/** The `app/<id>` token of a User-Agent header (the AWS SDKs' application id), if any. */
export function appIdOf(userAgent: string | undefined): string | undefined {
  return /(?:^|\s)app\/([^\s]+)/.exec(userAgent ?? '')?.[1];
}

/** Successful calls of one operation, per resource. */
function succeededOf(calls: readonly CloudCall[], operation: string): Map<string, number> {
  return countedOf(calls, operation, (call) => call.ok);
}

/** Calls of one operation that `counts` picks, per resource. */
function countedOf(calls: readonly CloudCall[], operation: string, counts: (call: CloudCall) => boolean): Map<string, number> {
  const counted = new Map<string, number>();
  for (const call of calls) {
    if (call.operation !== operation || call.resource === undefined || !counts(call)) continue;
    counted.set(call.resource, (counted.get(call.resource) ?? 0) + 1);
  }
  return counted;
}

const cloudCallOf = (call: GrpcProxiedCall): CloudCall => ({
  operation: call.operation,
  resource: call.resource || undefined,
  answer: call.grpcStatus === undefined ? '' : `grpc-status ${call.grpcStatus}`,
  ok: call.grpcStatus === 0,
  sentAt: call.at,
  answeredAt: call.grpcStatus === undefined ? 0 : call.at,
  ...(call.reachedBackend === true && call.grpcStatus === undefined ? { outcomeUnknown: true } : {}),
});

/**
 * The recording proxy of a gRPC backend (`host:port`, the Bigtable emulator's): `startGrpcFaultProxy`
 * with no faults, which names each RPC by its method (`CreateTable`, `DeleteTable`,
 * `ModifyColumnFamilies`, `UpdateTable`, `GetTable`) and the table it names, and holds each answer
 * while `onAnswered` runs (a kill there: the emulator acted, the operator never hears).
 */
export async function startGrpcCloudProxy(backend: string): Promise<CloudProxy> {
  let hook: CloudProxy['onAnswered'];
  const grpc = await startGrpcFaultProxy({ target: backend, onAnswered: (call) => hook?.(cloudCallOf(call)) });
  return {
    endpoint: grpc.endpoint,
    get calls() {
      return grpc.calls.map(cloudCallOf);
    },
    get onAnswered() {
      return hook;
    },
    set onAnswered(next) {
      hook = next;
    },
    failAfterEffect: undefined,
    succeeded: (operation) => succeededOf(grpc.calls.map(cloudCallOf), operation),
    unknown: (operation) => countedOf(grpc.calls.map(cloudCallOf), operation, (call) => call.outcomeUnknown === true),
    stop: () => grpc.stop(),
  };
}
