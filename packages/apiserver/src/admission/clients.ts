import https from 'node:https';
import tls from 'node:tls';
import type { PeerCertificate } from 'node:tls';
import type { WebhookEndpoint } from './call.js';

/** How many webhooks' connection pools are kept; the least recently called beyond that are closed. */
const MAX_POOLS = 64;

/**
 * Keep-alive HTTPS connections per webhook, as kube-apiserver keeps a client per webhook
 * clientConfig: without them every admission call pays a full TLS handshake. A pool is keyed by what
 * decides trust (the address, the CA bundle and the name the certificate must carry), so a changed
 * caBundle or URL gets fresh connections.
 */
export class WebhookClients {
  private readonly pools = new Map<string, https.Agent>();
  private readonly keys = new WeakMap<WebhookEndpoint, string>();

  agentFor(endpoint: WebhookEndpoint): https.Agent {
    let key = this.keys.get(endpoint);
    if (key === undefined) {
      key = JSON.stringify([new URL(endpoint.url).origin, endpoint.ca ?? '', endpoint.expectedHost ?? '']);
      this.keys.set(endpoint, key);
    }
    let agent = this.pools.get(key);
    if (agent) {
      // Map order is insertion order: re-inserting marks it as the most recently used.
      this.pools.delete(key);
    } else {
      const url = new URL(endpoint.url);
      agent = new https.Agent({
        keepAlive: true,
        ca: endpoint.ca,
        servername: endpoint.expectedHost && !/^[\d.:]+$/.test(endpoint.expectedHost) ? endpoint.expectedHost : undefined,
        checkServerIdentity: serverIdentityCheck(endpoint.expectedHost, url),
      });
      if (this.pools.size >= MAX_POOLS) this.evictOldest();
    }
    this.pools.set(key, agent);
    return agent;
  }

  /** Closes every pooled connection (on server stop). */
  close(): void {
    for (const agent of this.pools.values()) agent.destroy();
    this.pools.clear();
  }

  private evictOldest(): void {
    const [oldestKey, oldest] = this.pools.entries().next().value ?? [];
    if (oldestKey === undefined || !oldest) return;
    oldest.destroy();
    this.pools.delete(oldestKey);
  }
}

/** Accept a certificate for the service DNS name (as the real server checks) or for the mapped local address. */
function serverIdentityCheck(expectedHost: string | undefined, url: URL): (host: string, cert: PeerCertificate) => Error | undefined {
  return (host, cert) => {
    if (expectedHost && !tls.checkServerIdentity(expectedHost, cert)) return undefined;
    return tls.checkServerIdentity(url.hostname.replace(/^\[|\]$/g, '') || host, cert);
  };
}
