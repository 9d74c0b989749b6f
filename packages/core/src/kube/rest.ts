import http from 'node:http';
import https from 'node:https';
import type { KubeAccess } from './access.js';

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
 * rejects with KubeApiError for any other answer, and with the abort reason
 * on timeout or abort.
 */
export async function sendRequest(server: URL, base: https.RequestOptions, method: string, path: string, options: SendOptions = {}): Promise<RestResponse> {
  options.signal?.throwIfAborted();
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers: http.OutgoingHttpHeaders = {
    ...(base.headers as http.OutgoingHttpHeaders | undefined),
    accept: 'application/json',
    'user-agent': options.userAgent ?? 'k8or',
  };
  if (payload) {
    headers['content-type'] = options.contentType ?? 'application/json';
    headers['content-length'] = payload.length;
  }
  const transport = server.protocol === 'http:' ? http : https;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return await new Promise<RestResponse>((resolve, reject) => {
    // One plain timer per request: AbortSignal.timeout and AbortSignal.any cost
    // more CPU than the rest of a keep-alive request's client side.
    const request = transport.request(
      {
        ...base,
        protocol: server.protocol,
        // urlToHttpOptions' rule: an IPv6 literal goes without its brackets.
        hostname: server.hostname.startsWith('[') ? server.hostname.slice(1, -1) : server.hostname,
        port: server.port,
        path: requestPath(server, path, options.query),
        method,
        headers,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.agent ? { agent: options.agent } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          clearTimeout(timer);
          const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
          let decoded: unknown = text;
          try {
            decoded = text ? JSON.parse(text) : undefined;
          } catch {
            // keep the raw text for the error message
          }
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ status, body: decoded });
          else reject(KubeApiError.fromResponse(method, path, status, decoded));
        });
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(payload);
  });
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
  #perRequest: https.RequestOptions = {};
  #tls: https.AgentOptions | undefined;
  #optionsAt = 0;
  #agent: http.Agent | https.Agent;

  constructor(kubeConfig: KubeAccess, options: { userAgent?: string; timeoutMs?: number } = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#kubeConfig = kubeConfig;
    this.#server = new URL(cluster.server);
    this.#userAgent = options.userAgent ?? 'k8or-engine';
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#agent = this.#newAgent({});
  }

  #newAgent(tls: https.AgentOptions): http.Agent | https.Agent {
    return this.#server.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true, maxSockets: 64, ...tls });
  }

  /**
   * Auth headers (and basic auth) from the kubeconfig, re-read every minute so rotated tokens
   * are picked up. The TLS options (CA, client certificate and key) live on
   * the agent, not on each request: the agent would otherwise rebuild its
   * pool key from every PEM on every request. Rotated TLS material gets a new
   * agent; the old one is closed once its requests can have finished.
   */
  async #requestOptions(): Promise<https.RequestOptions> {
    const now = Date.now();
    if (!this.#tls || now - this.#optionsAt > 60_000) {
      const options: https.RequestOptions = {};
      await this.#kubeConfig.applyToHTTPSOptions(options);
      const { headers, auth } = options;
      const tls = tlsOptionsOf(options);
      if (!this.#tls || !sameTlsOptions(this.#tls, tls)) {
        const previous = this.#agent;
        this.#agent = this.#newAgent(tls);
        if (this.#tls) setTimeout(() => previous.destroy(), this.#timeoutMs).unref();
        this.#tls = tls;
      }
      this.#perRequest = { ...(headers ? { headers } : {}), ...(auth ? { auth } : {}) };
      this.#optionsAt = now;
    }
    return this.#perRequest;
  }

  /** Sends one request; resolves for 2xx, throws KubeApiError otherwise. */
  async request(method: string, path: string, body?: unknown, contentType = 'application/json', signal?: AbortSignal): Promise<RestResponse> {
    return await sendRequest(this.#server, await this.#requestOptions(), method, path, {
      body,
      contentType,
      signal,
      timeoutMs: this.#timeoutMs,
      userAgent: this.#userAgent,
      agent: this.#agent,
    });
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

  close(): void {
    this.#agent.destroy();
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
 * The connection-level options a kubeconfig sets. Anything else it hands back
 * (client-node adds an agent of its own) is not used: ours is keep-alive and pooled.
 */
const TLS_OPTION_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'crl', 'minVersion', 'maxVersion', 'secureOptions', 'secureProtocol', 'checkServerIdentity'] as const;

function tlsOptionsOf(options: https.RequestOptions): https.AgentOptions {
  const tls: Record<string, unknown> = {};
  for (const key of TLS_OPTION_KEYS) if (options[key] !== undefined) tls[key] = options[key];
  return tls as https.AgentOptions;
}
