/** POST an AdmissionReview to a webhook over HTTPS, verifying its certificate against the caBundle. */
import https from 'node:https';

export interface WebhookEndpoint {
  url: string;
  /** PEM CA bundle; system roots when absent. */
  ca?: string;
  /** Host the certificate must name: the service DNS name for `service` clientConfigs. */
  expectedHost?: string;
  timeoutMs: number;
}

/** A failed call (network, TLS, timeout, non-2xx, bad body), worded like kube-apiserver's. */
export class WebhookCallError extends Error {}

/**
 * POST an AdmissionReview over `agent`'s pooled connections. A request that fails on a reused
 * connection before any answer (the webhook closed it while idle) is sent once more on a new one, as
 * Go's transport does.
 */
export async function postAdmissionReview(endpoint: WebhookEndpoint, review: unknown, agent: https.Agent): Promise<unknown> {
  const body = JSON.stringify(review);
  const deadline = Date.now() + endpoint.timeoutMs;
  try {
    return await postOnce(endpoint, body, agent, endpoint.timeoutMs);
  } catch (error) {
    if (!(error instanceof StaleConnectionError)) throw error;
    return postOnce(endpoint, body, agent, Math.max(1, deadline - Date.now()));
  }
}

/** The pooled connection was closed by the webhook before it answered; nothing reached it. */
class StaleConnectionError extends Error {}

/** Where a request to the endpoint goes, parsed once per endpoint rather than once per call. */
const targets = new WeakMap<WebhookEndpoint, { url: URL; hostname: string; port: string; path: string }>();

function targetOf(endpoint: WebhookEndpoint): { url: URL; hostname: string; port: string; path: string } {
  let target = targets.get(endpoint);
  if (!target) {
    const url = new URL(endpoint.url);
    target = { url, hostname: url.hostname.replace(/^\[|\]$/g, ''), port: url.port || '443', path: `${url.pathname}${url.search}` };
    targets.set(endpoint, target);
  }
  return target;
}

function postOnce(endpoint: WebhookEndpoint, body: string, agent: https.Agent, timeoutMs: number): Promise<unknown> {
  const { url, hostname, port, path } = targetOf(endpoint);
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => reject(new WebhookCallError(`failed to call webhook: Post "${endpoint.url}": ${why}`));
    const req = https.request(
      {
        hostname,
        port,
        path,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
        timeout: timeoutMs,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => fail(err.message));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
            fail(`the server responded with the status code ${res.statusCode} but did not return a valid AdmissionReview: ${text.slice(0, 200)}`);
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch {
            fail('the server did not return a valid JSON AdmissionReview');
          }
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      fail(`context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
    }, timeoutMs);
    req.on('timeout', () => {
      req.destroy();
      fail('context deadline exceeded');
    });
    req.on('error', (err: Error & { code?: string }) => {
      if (req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) reject(new StaleConnectionError(err.message));
      else fail(goStyleError(err, url));
    });
    req.on('close', () => clearTimeout(timer));
    req.end(body);
  });
}

/** Word common network and TLS failures as Go's net/http does, so messages match a real cluster's. */
function goStyleError(err: Error & { code?: string }, url: URL): string {
  const address = `${url.hostname}:${url.port || '443'}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${address}: connect: connection refused`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${url.hostname}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: certificate is not valid for ${url.hostname}`;
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    default:
      return err.message;
  }
}
