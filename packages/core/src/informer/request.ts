import type https from 'node:https';
import type { KubeAccess } from '../kube/access.js';
import { keptAgentFor, tlsOptionsOf } from '../kube/connections.js';
import { sendRequest } from '../kube/rest.js';

export { KubeApiError, ApiStatusError } from '../kube/rest.js';

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
  /** Abort when the server has not answered in this long; default 30 s. */
  timeoutMs?: number;
  /** Shown in API server audit logs; default `k8or`. */
  userAgent?: string;
}

/**
 * One JSON request with the server, TLS settings and credentials of the
 * kubeconfig (re-applied per call so rotating tokens stay fresh), through the
 * same `sendRequest` as KubeRest, on the kubeconfig's kept connections
 * (`keptAgentFor`). Resolves the decoded body of a 2xx answer; rejects with
 * KubeApiError otherwise. The informer lists and the Lease calls use it.
 */
export async function requestJson(kubeConfig: KubeAccess, method: string, path: string, options: JsonRequestOptions = {}): Promise<unknown> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const httpsOptions: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(httpsOptions);
  const server = new URL(cluster.server);
  const response = await sendRequest(server, httpsOptions, method, path, {
    // Through a proxy, client-node's own agent (in httpsOptions) is the one that reaches it.
    ...(cluster.proxyUrl ? {} : { agent: keptAgentFor(kubeConfig, server, tlsOptionsOf(httpsOptions)) }),
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.query ? { query: options.query } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    userAgent: options.userAgent ?? 'k8or',
  });
  return response.body;
}
