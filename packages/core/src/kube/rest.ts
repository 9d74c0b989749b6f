import type http from 'node:http';
import type https from 'node:https';
import { Pool, type buildConnector, type Dispatcher } from 'undici';
import type { KubeAccess } from './access.js';
import { exchangeJson } from './json-exchange.js';

/**
 * The one Kubernetes HTTP client of core: the engine's object reads and
 * writes, the informer's lists and the leader elector's Lease all go through
 * `sendRequest`, with the same timeout, abort signal and error type, over
 * undici's keep-alive connection pools (the Node.js project's HTTP client:
 * measured at about two thirds of node:https's client CPU per request,
 * docs/benchmarks.md). (Watches stream through `openWatchStream`, with the
 * same server and credentials.)
 */

/** The HTTP status and decoded body of one API request. */
export interface RestResponse {
  status: number;
  body: unknown;
}

/** An API server answer outside 2xx, with the Status object's reason and message. The one error type for API answers. */
export class KubeApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The Status object's reason (`Conflict`, `AlreadyExists`, `Expired`...). */
  readonly reason: string | undefined;

  constructor(message: string, status: number, reason?: string) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
  }

  /** The HTTP status (the name the informer and leader election use). */
  get code(): number {
    return this.status;
  }

  /** The error for a non-2xx answer to `method path` with the decoded `body`. */
  static fromResponse(method: string, path: string, status: number, body: unknown): KubeApiError {
    const detail = isRecord(body) && typeof body.message === 'string' ? body.message : typeof body === 'string' ? body.slice(0, 200) : JSON.stringify(body);
    return new KubeApiError(`${method} ${path}: ${status} ${detail}`, status, isRecord(body) && typeof body.reason === 'string' ? body.reason : undefined);
  }
}

/** @deprecated the same class as KubeApiError (one error type for API answers). */
export const ApiStatusError = KubeApiError;
/** @deprecated use KubeApiError. */
export type ApiStatusError = KubeApiError;

export const isNotFound = (error: unknown): boolean => error instanceof KubeApiError && error.status === 404;
export const isConflict = (error: unknown): boolean => error instanceof KubeApiError && error.status === 409;
export const isAlreadyExists = (error: unknown): boolean =>
  error instanceof KubeApiError && error.status === 409 && error.reason === 'AlreadyExists';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Default time an API request may take before it is aborted. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface SendOptions {
  /** Sent as JSON. */
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | undefined>;
  signal?: AbortSignal | undefined;
  /** Abort when the server has not answered in this long. Default 30 s. */
  timeoutMs?: number;
  userAgent?: string;
  /** The connections to the server; default a pool shared by every call to the same server with the same TLS options. */
  dispatcher?: Dispatcher;
}

/**
 * Sends one request to the API server named by `server` with the TLS and auth
 * options `base` (from `KubeConfig.applyToHTTPSOptions`). Resolves for 2xx;
 * rejects with KubeApiError for any other answer, with the abort reason on
 * timeout or abort, and with the connection's error when it breaks before the
 * whole answer has arrived (the server may have acted on the request).
 */
export async function sendRequest(server: URL, base: https.RequestOptions, method: string, path: string, options: SendOptions = {}): Promise<RestResponse> {
  return await send(options.dispatcher ?? sharedPool(server, tlsOptionsOf(base)), server, requestHeaders(base, options.userAgent ?? 'k8or'), method, path, options);
}

async function send(dispatcher: Dispatcher, server: URL, headers: string[], method: string, path: string, options: SendOptions): Promise<RestResponse> {
  const { status, body } = await exchangeJson(dispatcher, {
    origin: server.origin,
    method,
    path,
    requestPath: requestPath(server, path, options.query),
    headers,
    body: options.body,
    contentType: options.contentType,
    timeoutMs: options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    signal: options.signal,
  });
  if (status >= 200 && status < 300) return { status, body };
  throw KubeApiError.fromResponse(method, path, status, body);
}

/** The kubeconfig's headers (bearer token, impersonation) and basic auth, then accept and user-agent, as a flat name, value list. */
function requestHeaders(base: https.RequestOptions, userAgent: string): string[] {
  const headers: string[] = [];
  for (const [name, value] of Object.entries((base.headers as http.OutgoingHttpHeaders | undefined) ?? {})) {
    if (value === undefined) continue;
    for (const each of Array.isArray(value) ? value : [value]) headers.push(name, String(each));
  }
  if (base.auth) headers.push('authorization', `Basic ${Buffer.from(base.auth).toString('base64')}`);
  headers.push('accept', 'application/json', 'user-agent', userAgent);
  return headers;
}

/** Pools shared by `sendRequest` calls without a dispatcher (informer lists, Lease calls), one per server origin. */
const sharedPools = new Map<string, { tls: https.AgentOptions; pool: Pool }>();

/** The shared pool to `server` with these TLS options; a pool with other TLS options (rotated material) is closed once its requests end. */
function sharedPool(server: URL, tls: https.AgentOptions): Pool {
  const shared = sharedPools.get(server.origin);
  if (shared && sameTlsOptions(shared.tls, tls)) return shared.pool;
  shared?.pool.close().catch(() => undefined);
  const pool = newPool(server, tls);
  sharedPools.set(server.origin, { tls, pool });
  return pool;
}

/**
 * Keep-alive connections to the API server with the kubeconfig's TLS options.
 * undici's own timeouts are off: each request has its deadline (`timeoutMs`).
 */
function newPool(server: URL, tls: https.AgentOptions): Pool {
  return new Pool(server.origin, { connections: 64, headersTimeout: 0, bodyTimeout: 0, connect: tls as buildConnector.BuildOptions });
}

/** The request path: the server URL's own path prefix, the API path and the query. */
function requestPath(server: URL, path: string, query: Record<string, string | undefined> | undefined): string {
  const prefix = server.pathname === '/' ? '' : server.pathname.replace(/\/$/, '');
  if (!query) return prefix + path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
  const search = params.toString();
  return search ? `${prefix}${path}${path.includes('?') ? '&' : '?'}${search}` : prefix + path;
}

export type PatchType = 'merge' | 'json';
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/**
 * A small JSON client for the Kubernetes REST API that takes its server, TLS
 * and credentials from a client-node KubeConfig. The engine needs exact control
 * over verbs and patch types (merge patches on /status, resourceVersion
 * preconditions), which the generated clients make awkward. Every request has
 * a timeout (default 30 s) and takes an abort signal.
 */
export class KubeRest {
  readonly #kubeConfig: KubeAccess;
  readonly #server: URL;
  readonly #userAgent: string;
  readonly #timeoutMs: number;
  /** The kubeconfig's headers with accept and user-agent, as sent on every request. */
  #headers: string[] = [];
  #tls: https.AgentOptions | undefined;
  #optionsAt = 0;
  #pool: Pool | undefined;
  /** The kubeconfig being re-read, for every request that needs it meanwhile. */
  #refreshing: Promise<Pool> | undefined;
  #closed = false;

  constructor(kubeConfig: KubeAccess, options: { userAgent?: string; timeoutMs?: number } = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#kubeConfig = kubeConfig;
    this.#server = new URL(cluster.server);
    this.#userAgent = options.userAgent ?? 'k8or-engine';
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /**
   * Auth headers (and basic auth) from the kubeconfig, re-read every minute so rotated tokens
   * are picked up. The TLS options (CA, client certificate and key) belong to
   * the pool's connections; rotated TLS material gets a new pool, and the old
   * one closes once its requests have ended.
   */
  #refreshOptions(): Promise<Pool> {
    this.#refreshing ??= this.#readOptions().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #readOptions(): Promise<Pool> {
    const options: https.RequestOptions = {};
    await this.#kubeConfig.applyToHTTPSOptions(options);
    if (this.#closed) throw new Error(`KubeRest to ${this.#server.origin} is closed`);
    const tls = tlsOptionsOf(options);
    if (!this.#pool || !this.#tls || !sameTlsOptions(this.#tls, tls)) {
      const previous = this.#pool;
      this.#pool = newPool(this.#server, tls);
      previous?.close().catch(() => undefined);
      this.#tls = tls;
    }
    this.#headers = requestHeaders(options, this.#userAgent);
    this.#optionsAt = Date.now();
    return this.#pool;
  }

  /** Sends one request; resolves for 2xx, throws KubeApiError otherwise. */
  async request(method: string, path: string, body?: unknown, contentType = 'application/json', signal?: AbortSignal): Promise<RestResponse> {
    const pool = this.#pool && Date.now() - this.#optionsAt <= 60_000 ? this.#pool : await this.#refreshOptions();
    return await send(pool, this.#server, this.#headers, method, path, { body, contentType, signal, timeoutMs: this.#timeoutMs });
  }

  async get<T>(path: string, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return (await this.request('GET', path, undefined, undefined, signal)).body as T;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async create<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return (await this.request('POST', path, body, undefined, signal)).body as T;
  }

  async update<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    return (await this.request('PUT', path, body, undefined, signal)).body as T;
  }

  async patch<T>(path: string, patch: unknown, type: PatchType = 'merge', signal?: AbortSignal): Promise<T> {
    return (await this.request('PATCH', path, patch, PATCH_CONTENT_TYPE[type], signal)).body as T;
  }

  /** Deletes; missing is success. */
  async delete(path: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.request('DELETE', path, undefined, undefined, signal);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Ends every connection at once: requests in flight fail, and so does every later one. */
  close(): void {
    this.#closed = true;
    this.#pool?.destroy().catch(() => undefined);
  }
}

/** Whether two sets of TLS options hold the same values (PEM buffers compared by content). */
function sameTlsOptions(a: https.AgentOptions, b: https.AgentOptions): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof https.AgentOptions>;
  for (const key of keys) if (!sameOptionValue(a[key], b[key])) return false;
  return true;
}

function sameOptionValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => sameOptionValue(item, b[i]));
  return a === b;
}

/**
 * The connection-level options a kubeconfig sets, for the pool's TLS
 * connections. Anything else it hands back (client-node adds an agent of its
 * own) is not used: the pool is keep-alive.
 */
const TLS_OPTION_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'crl', 'minVersion', 'maxVersion', 'secureOptions', 'secureProtocol', 'checkServerIdentity'] as const;

function tlsOptionsOf(options: https.RequestOptions): https.AgentOptions {
  const tls: Record<string, unknown> = {};
  for (const key of TLS_OPTION_KEYS) if (options[key] !== undefined) tls[key] = options[key];
  return tls as https.AgentOptions;
}
