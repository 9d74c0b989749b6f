import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** An API answer outside 2xx; `code` is the HTTP status, `reason` the Status reason (`Expired`, `Gone`...). */
export class ApiStatusError extends Error {
  readonly code: number;
  readonly reason: string | undefined;

  constructor(message: string, code: number, reason?: string) {
    super(message);
    this.name = 'ApiStatusError';
    this.code = code;
    this.reason = reason;
  }
}

/** The collection path of a resource: `/api/v1[/namespaces/ns]/pods` or `/apis/group/version[/namespaces/ns]/plural`. */
export function resourcePath(group: string, version: string, plural: string, namespace?: string): string {
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return `${base}${namespace ? `/namespaces/${encodeURIComponent(namespace)}` : ''}/${plural}`;
}

export interface JsonRequestOptions {
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  signal?: AbortSignal;
  /** Abort when the server has not answered in this long; default 60 s. */
  timeoutMs?: number;
  /** Shown in API server audit logs; default `k8or`. */
  userAgent?: string;
}

/**
 * Sends one JSON request with the server, TLS settings and credentials of the
 * kubeconfig (client-node's `applyToHTTPSOptions`, re-applied per call so
 * rotating tokens stay fresh). Resolves the decoded body of a 2xx answer;
 * rejects with {@link ApiStatusError} otherwise. The informer lists and the
 * leader elector reads and writes its Lease through this; watches go through
 * client-node's `Watch`.
 */
export async function requestJson(kubeConfig: KubeConfig, method: string, path: string, options: JsonRequestOptions = {}): Promise<unknown> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/$/, '') + path);
  for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
  const httpsOptions: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(httpsOptions);
  const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
  const headers: http.OutgoingHttpHeaders = { ...(httpsOptions.headers as http.OutgoingHttpHeaders | undefined), accept: 'application/json', 'user-agent': options.userAgent ?? 'k8or' };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = payload.length;
  }
  const transport = url.protocol === 'http:' ? http : https;
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, { ...httpsOptions, method, headers, signal: options.signal }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = text;
        }
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolve(body);
          return;
        }
        const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
        const message = typeof record.message === 'string' ? record.message : text.slice(0, 200);
        const reason = typeof record.reason === 'string' ? record.reason : undefined;
        reject(new ApiStatusError(`${method} ${path}: ${status} ${message}`, status, reason));
      });
    });
    request.setTimeout(timeoutMs, () => request.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(payload);
  });
}
