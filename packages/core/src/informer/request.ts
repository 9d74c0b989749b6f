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

/**
 * GETs a JSON document with the server, TLS settings and credentials of the
 * kubeconfig (client-node's `applyToHTTPSOptions`, re-applied per call so
 * rotating tokens stay fresh). The informer lists through this and watches
 * through client-node's `Watch`.
 */
export async function getJson(kubeConfig: KubeConfig, path: string, query: Record<string, string | undefined>, signal?: AbortSignal): Promise<unknown> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/$/, '') + path);
  for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const transport = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const request = transport.request(
      url,
      { ...options, method: 'GET', headers: { ...options.headers, accept: 'application/json' }, signal },
      (response) => {
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
          reject(new ApiStatusError(`GET ${path}: ${status} ${message}`, status, typeof record.reason === 'string' ? record.reason : undefined));
        });
      },
    );
    request.setTimeout(60_000, () => request.destroy(new Error(`GET ${path}: no answer within 60 s`)));
    request.on('error', reject);
    request.end();
  });
}
