import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** The HTTP status and decoded body of one API request. */
export interface RestResponse {
  status: number;
  body: unknown;
}

/** An API server answer outside 2xx, with the Status object's reason and message. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  constructor(method: string, path: string, status: number, body: unknown) {
    const detail = isRecord(body) && typeof body.message === 'string' ? body.message : JSON.stringify(body);
    super(`${method} ${path}: ${status} ${detail}`);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = isRecord(body) && typeof body.reason === 'string' ? body.reason : undefined;
  }
}

export const isNotFound = (error: unknown): boolean => error instanceof KubeApiError && error.status === 404;
export const isConflict = (error: unknown): boolean => error instanceof KubeApiError && error.status === 409;
export const isAlreadyExists = (error: unknown): boolean =>
  error instanceof KubeApiError && error.status === 409 && error.reason === 'AlreadyExists';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
 * preconditions), which the generated clients make awkward.
 */
export class KubeRest {
  readonly #kubeConfig: KubeConfig;
  readonly #server: URL;
  readonly #userAgent: string;
  #options: https.RequestOptions | undefined;
  #optionsAt = 0;
  readonly #agent: http.Agent | https.Agent;

  constructor(kubeConfig: KubeConfig, options: { userAgent?: string } = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#kubeConfig = kubeConfig;
    this.#server = new URL(cluster.server);
    this.#userAgent = options.userAgent ?? 'k8or-engine';
    this.#agent = this.#server.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true, maxSockets: 64 });
  }

  /** TLS and auth options from the kubeconfig, re-read every minute so rotated tokens are picked up. */
  async #requestOptions(): Promise<https.RequestOptions> {
    const now = Date.now();
    if (!this.#options || now - this.#optionsAt > 60_000) {
      const options: https.RequestOptions = {};
      await this.#kubeConfig.applyToHTTPSOptions(options);
      this.#options = options;
      this.#optionsAt = now;
    }
    return this.#options;
  }

  /** Sends one request; resolves for 2xx, throws KubeApiError otherwise. */
  async request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<RestResponse> {
    const base = await this.#requestOptions();
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {
      ...(base.headers as Record<string, string> | undefined),
      accept: 'application/json',
      'user-agent': this.#userAgent,
    };
    if (payload) {
      headers['content-type'] = contentType;
      headers['content-length'] = payload.length;
    }
    const transport = this.#server.protocol === 'http:' ? http : https;
    const url = new URL(path, this.#server);
    return await new Promise<RestResponse>((resolve, reject) => {
      const request = transport.request(
        url,
        { ...base, method, headers, agent: this.#agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let decoded: unknown = text;
            try {
              decoded = text ? JSON.parse(text) : undefined;
            } catch {
              // keep the raw text for the error message
            }
            const status = response.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve({ status, body: decoded });
            else reject(new KubeApiError(method, path, status, decoded));
          });
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  async get<T>(path: string): Promise<T | undefined> {
    try {
      return (await this.request('GET', path)).body as T;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async create<T>(path: string, body: unknown): Promise<T> {
    return (await this.request('POST', path, body)).body as T;
  }

  async update<T>(path: string, body: unknown): Promise<T> {
    return (await this.request('PUT', path, body)).body as T;
  }

  async patch<T>(path: string, patch: unknown, type: PatchType = 'merge'): Promise<T> {
    return (await this.request('PATCH', path, patch, PATCH_CONTENT_TYPE[type])).body as T;
  }

  /** Deletes; missing is success. */
  async delete(path: string): Promise<void> {
    try {
      await this.request('DELETE', path);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  close(): void {
    this.#agent.destroy();
  }
}
