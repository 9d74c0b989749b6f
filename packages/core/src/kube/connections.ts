import type http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { nodeHttp } from '../util/node-http.js';
import type { KubeAccess } from './access.js';

/**
 * Where KubeRest's requests go: its agent (with the kubeconfig's TLS
 * options), the headers and the request paths. Not part of core's API.
 */

/** The kubeconfig's headers (bearer token, impersonation), then accept and user-agent. */
export function requestHeaders(fromKubeconfig: http.OutgoingHttpHeaders | undefined, userAgent: string): http.OutgoingHttpHeaders {
  return { ...fromKubeconfig, accept: 'application/json', 'user-agent': userAgent };
}

/**
 * Keep-alive connections to one API server with the kubeconfig's TLS options.
 * The TLS server name is settled here, as node would settle it per request
 * from the Host header: the host, none for an IP address (or the kubeconfig's
 * tls-server-name).
 */
export function newAgent(server: URL, tls: https.AgentOptions): http.Agent | https.Agent {
  if (server.protocol === 'http:') return new nodeHttp.Agent({ keepAlive: true, maxSockets: 64 });
  const host = hostnameOf(server);
  return new OneServerAgent({ keepAlive: true, maxSockets: 64, servername: isIP(host) ? '' : host, ...tls });
}

/** The URL's host as a connection takes it: an IPv6 literal without its brackets (urlToHttpOptions' rule). */
export function hostnameOf(server: URL): string {
  return server.hostname.startsWith('[') ? server.hostname.slice(1, -1) : server.hostname;
}

/**
 * An https agent for one server and one set of TLS options. node's https
 * agent names its connection pool per request from the request's options and
 * its own, every PEM (CA, certificate, key) turned into text and joined in,
 * on every request; this agent's connections all share one name.
 */
class OneServerAgent extends https.Agent {
  override getName(): string {
    return 'api-server';
  }
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
 * The connection-level options a kubeconfig sets. Anything else it hands back
 * (client-node adds an agent of its own) is not used: ours is keep-alive and pooled.
 */
const TLS_OPTION_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'crl', 'minVersion', 'maxVersion', 'secureOptions', 'secureProtocol', 'checkServerIdentity'] as const;

export function tlsOptionsOf(options: https.RequestOptions): https.AgentOptions {
  const tls: Record<string, unknown> = {};
  for (const key of TLS_OPTION_KEYS) if (options[key] !== undefined) tls[key] = options[key];
  return tls as https.AgentOptions;
}

/**
 * Keep-alive connections to one API server with a kubeconfig's TLS options: the same agent while
 * the server and the TLS material stay the same, a new one when they change. The old agent is
 * destroyed `retireAfterMs` later, once the requests still on its connections can have finished.
 */
export class AgentKeeper {
  readonly #retireAfterMs: number;
  #origin: string | undefined;
  #tls: https.AgentOptions | undefined;
  #agent: http.Agent | https.Agent | undefined;

  constructor(retireAfterMs: number) {
    this.#retireAfterMs = retireAfterMs;
  }

  agentFor(server: URL, tls: https.AgentOptions): http.Agent | https.Agent {
    if (this.#agent && this.#origin === server.origin && this.#tls && sameTlsOptions(this.#tls, tls)) return this.#agent;
    const previous = this.#agent;
    if (previous) setTimeout(() => previous.destroy(), this.#retireAfterMs).unref();
    this.#agent = newAgent(server, tls);
    this.#origin = server.origin;
    this.#tls = tls;
    return this.#agent;
  }

  /** Ends every connection at once, requests in flight too. */
  destroy(): void {
    this.#agent?.destroy();
  }
}

/**
 * The keep-alive agent of the requests made for `kubeConfig` outside a KubeRest (the informer's
 * lists, the Lease reads and writes of leader election and the shard ring): one AgentKeeper per
 * kubeconfig. client-node's own agent opens a connection, and a TLS handshake, per request: a
 * leader reads the shard Leases twice a second.
 */
export function keptAgentFor(kubeConfig: KubeAccess, server: URL, tls: https.AgentOptions): http.Agent | https.Agent {
  let keeper = keepers.get(kubeConfig);
  if (!keeper) keepers.set(kubeConfig, (keeper = new AgentKeeper(RETIRED_AGENT_KEPT_MS)));
  return keeper.agentFor(server, tls);
}

/** Longer than any request's deadline (30 s unless the caller sets one). */
const RETIRED_AGENT_KEPT_MS = 120_000;
const keepers = new WeakMap<KubeAccess, AgentKeeper>();
