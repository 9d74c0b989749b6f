import tls from 'node:tls';
import type { PeerCertificate } from 'node:tls';
import type { WebhookEndpoint } from './call.js';
import { WebhookConnection } from './connection.js';

/** How many webhooks' connections are kept; the least recently called beyond that are closed. */
const MAX_POOLS = 64;

/**
 * Connections per webhook, as kube-apiserver keeps a client per webhook clientConfig: without them
 * every admission call pays a full TLS handshake. A pool is keyed by what decides trust (the
 * address, the CA bundle and the name the certificate must carry), so a changed caBundle or URL
 * gets fresh connections.
 */
export class WebhookClients {
  private readonly pools = new Map<string, WebhookConnection>();
  private readonly keys = new WeakMap<WebhookEndpoint, string>();

  connectionFor(endpoint: WebhookEndpoint): WebhookConnection {
    let key = this.keys.get(endpoint);
    if (key === undefined) {
      key = JSON.stringify([new URL(endpoint.url).origin, endpoint.ca ?? '', endpoint.expectedHost ?? '']);
      this.keys.set(endpoint, key);
    }
    let connection = this.pools.get(key);
    if (connection) {
      // Map order is insertion order: re-inserting marks it as the most recently used.
      this.pools.delete(key);
    } else {
      const url = new URL(endpoint.url);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const expected = endpoint.expectedHost;
      connection = new WebhookConnection({
        origin: url.origin,
        host,
        port: Number(url.port || 443),
        ...(endpoint.ca !== undefined ? { ca: endpoint.ca } : {}),
        // SNI carries a DNS name only, never an IP address.
        ...(expected && !/^[\d.:]+$/.test(expected) ? { servername: expected } : !/^[\d.:]+$/.test(host) ? { servername: host } : {}),
        verify: serverIdentityCheck(expected, host),
        connectTimeoutMs: endpoint.timeoutMs,
      });
      if (this.pools.size >= MAX_POOLS) this.evictOldest();
    }
    this.pools.set(key, connection);
    return connection;
  }

  /** Closes every pooled connection (on server stop). */
  close(): void {
    for (const connection of this.pools.values()) connection.close();
    this.pools.clear();
  }

  private evictOldest(): void {
    const [oldestKey, oldest] = this.pools.entries().next().value ?? [];
    if (oldestKey === undefined || !oldest) return;
    oldest.close();
    this.pools.delete(oldestKey);
  }
}

/** Accept a certificate for the service DNS name (as the real server checks) or for the mapped local address. */
function serverIdentityCheck(expectedHost: string | undefined, host: string): (servername: string, cert: PeerCertificate) => Error | undefined {
  return (_servername, cert) => {
    if (expectedHost && !tls.checkServerIdentity(expectedHost, cert)) return undefined;
    return tls.checkServerIdentity(host, cert);
  };
}
