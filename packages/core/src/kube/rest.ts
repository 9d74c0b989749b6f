import type http from 'node:http';
import type https from 'node:https';
import type { KubeAccess } from './access.js';
import { AgentKeeper, requestHeaders, requestPath, tlsOptionsOf } from './connections.js';
import { exchangeJson } from './json-exchange.js';

/**
 * The one Kubernetes HTTP client of core: the engine's object reads and
 * writes, the informer's lists and the leader elector's Lease all go through
 * `sendRequest`, with the same timeout, abort signal and error type.
 * (Watches stream through `openWatchStream`, with the same server and credentials.)
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
  agent?: http.Agent | https.Agent;
}

/**
 * Sends one request to the API server named by `server` with the TLS and auth
 * options `base` (from `KubeConfig.applyToHTTPSOptions`). Resolves for 2xx;
 * rejects with KubeApiError for any other answer, with the abort reason on
 * timeout or abort, and with the connection's error when it breaks before the
 * whole answer has arrived (the server may have acted on the request).
 */
export async function sendRequest(server: URL, base: https.RequestOptions, method: string, path: string, options: SendOptions = {}): Promise<RestResponse> {
  const { headers, ...rest } = base;
  return await send(server, rest, requestHeaders(headers as http.OutgoingHttpHeaders | undefined, options.userAgent ?? 'k8or'), method, path, options);
}

async function send(server: URL, base: https.RequestOptions, headers: http.OutgoingHttpHeaders, method: string, path: string, options: SendOptions): Promise<RestResponse> {
  const { status, body } = await exchangeJson({
    server,
    method,
    path,
    requestPath: requestPath(server, path, options.query),
    headers,
    body: options.body,
    contentType: options.contentType,
    timeoutMs: options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    signal: options.signal,
    base,
    agent: options.agent,
  });
  if (status >= 200 && status < 300) return { status, body };
  throw KubeApiError.fromResponse(method, path, status, body);
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
  #headers: http.OutgoingHttpHeaders = {};
  /** Basic auth, when the kubeconfig has it. */
  #perRequest: https.RequestOptions = {};
  #optionsAt = 0;
  /** The agent of the kubeconfig's TLS options as last read. */
  #agent: http.Agent | https.Agent | undefined;
  readonly #connections: AgentKeeper;
  /** The kubeconfig being re-read, for every request that needs it meanwhile. */
  #refreshing: Promise<http.Agent | https.Agent> | undefined;
  #closed = false;

  constructor(kubeConfig: KubeAccess, options: { userAgent?: string; timeoutMs?: number } = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#kubeConfig = kubeConfig;
    this.#server = new URL(cluster.server);
    this.#userAgent = options.userAgent ?? 'k8or-engine';
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#connections = new AgentKeeper(this.#timeoutMs);
  }

  /**
   * Auth headers (and basic auth) from the kubeconfig, re-read every minute so rotated tokens
   * are picked up. The TLS options (CA, client certificate and key) live on
   * the agent, not on each request. Rotated TLS material gets a new agent;
   * the old one is closed once its requests can have finished.
   */
  #refreshOptions(): Promise<http.Agent | https.Agent> {
    this.#refreshing ??= this.#readOptions().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #readOptions(): Promise<http.Agent | https.Agent> {
    const options: https.RequestOptions = {};
    await this.#kubeConfig.applyToHTTPSOptions(options);
    if (this.#closed) throw new Error(`KubeRest to ${this.#server.origin} is closed`);
    this.#agent = this.#connections.agentFor(this.#server, tlsOptionsOf(options));
    this.#headers = requestHeaders(options.headers as http.OutgoingHttpHeaders | undefined, this.#userAgent);
    this.#perRequest = options.auth ? { auth: options.auth } : {};
    this.#optionsAt = Date.now();
    return this.#agent;
  }

  /** Sends one request; resolves for 2xx, throws KubeApiError otherwise. */
  async request(method: string, path: string, body?: unknown, contentType = 'application/json', signal?: AbortSignal): Promise<RestResponse> {
    if (this.#closed) throw new Error(`KubeRest to ${this.#server.origin} is closed`);
    const agent = this.#agent && Date.now() - this.#optionsAt <= 60_000 ? this.#agent : await this.#refreshOptions();
    return await send(this.#server, this.#perRequest, this.#headers, method, path, { body, contentType, signal, timeoutMs: this.#timeoutMs, agent });
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
    this.#connections.destroy();
  }
}
