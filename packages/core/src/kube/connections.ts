import type http from 'node:http';
import type https from 'node:https';
import type { buildConnector } from 'undici';
import { Pool } from './undici-pool.js';

/**
 * Where core's requests to the API server go: the connection pools (with the
 * kubeconfig's TLS options), the headers and the request paths. Shared by
 * KubeRest, `sendRequest` and the watch streams; not part of core's API.
 */

/** The kubeconfig's headers (bearer token, impersonation) and basic auth, then accept and user-agent, as a flat name, value list. */
export function requestHeaders(base: https.RequestOptions, userAgent: string): string[] {
  const headers: string[] = [];
  for (const [name, value] of Object.entries((base.headers as http.OutgoingHttpHeaders | undefined) ?? {})) {
    if (value === undefined) continue;
    for (const each of Array.isArray(value) ? value : [value]) headers.push(name, String(each));
  }
  if (base.auth) headers.push('authorization', `Basic ${Buffer.from(base.auth).toString('base64')}`);
  headers.push('accept', 'application/json', 'user-agent', userAgent);
  return headers;
}

/**
 * Pools shared by the requests that do not bring their own (informer lists and
 * watches, Lease calls): per server origin, one per set of TLS options (two
 * identities to one server keep their own connections), the newest first.
 */
const sharedPools = new Map<string, { tls: https.AgentOptions; pool: Pool }[]>();
/** TLS identities kept per server; beyond that the oldest pool (rotated material, most likely) closes once its requests end. */
const SHARED_POOLS_PER_SERVER = 4;

/** The shared pool to `server` with these TLS options. */
export function sharedPool(server: URL, tls: https.AgentOptions): Pool {
  const pools = sharedPools.get(server.origin) ?? [];
  const found = pools.find((shared) => sameTlsOptions(shared.tls, tls));
  if (found) return found.pool;
  const pool = newPool(server, tls);
  pools.unshift({ tls, pool });
  for (const old of pools.splice(SHARED_POOLS_PER_SERVER)) old.pool.close().catch(() => undefined);
  sharedPools.set(server.origin, pools);
  return pool;
}

/**
 * Keep-alive connections to the API server with the kubeconfig's TLS options.
 * undici's own timeouts are off: each request has its deadline (`timeoutMs`).
 */
export function newPool(server: URL, tls: https.AgentOptions): Pool {
  return new Pool(server.origin, { connections: 64, headersTimeout: 0, bodyTimeout: 0, connect: tls as buildConnector.BuildOptions });
}

/** The request path: the server URL's own path prefix, the API path and the query. */
export function requestPath(server: URL, path: string, query: Record<string, string | undefined> | undefined): string {
  const prefix = server.pathname === '/' ? '' : server.pathname.replace(/\/$/, '');
  if (!query) return prefix + path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
  const search = params.toString();
  return search ? `${prefix}${path}${path.includes('?') ? '&' : '?'}${search}` : prefix + path;
}

/** Whether two sets of TLS options hold the same values (PEM buffers compared by content). */
export function sameTlsOptions(a: https.AgentOptions, b: https.AgentOptions): boolean {
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

export function tlsOptionsOf(options: https.RequestOptions): https.AgentOptions {
  const tls: Record<string, unknown> = {};
  for (const key of TLS_OPTION_KEYS) if (options[key] !== undefined) tls[key] = options[key];
  return tls as https.AgentOptions;
}
