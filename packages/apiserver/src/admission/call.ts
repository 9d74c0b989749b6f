/** POST an AdmissionReview to a webhook over HTTPS, verifying its certificate against the caBundle. */
import { DeadlineExceeded, type WebhookConnection } from './connection.js';

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

/** Where a request to the endpoint goes, parsed once per endpoint rather than once per call. */
const targets = new WeakMap<WebhookEndpoint, { url: URL; path: string }>();

function targetOf(endpoint: WebhookEndpoint): { url: URL; path: string } {
  let target = targets.get(endpoint);
  if (!target) {
    const url = new URL(endpoint.url);
    target = { url, path: `${url.pathname}${url.search}` };
    targets.set(endpoint, target);
  }
  return target;
}

/** POST a serialized AdmissionReview over the webhook's connection; resolves with the parsed answer. */
export async function postAdmissionReview(endpoint: WebhookEndpoint, body: string, connection: WebhookConnection): Promise<unknown> {
  const { url, path } = targetOf(endpoint);
  const fail = (why: string): WebhookCallError => new WebhookCallError(`failed to call webhook: Post "${endpoint.url}": ${why}`);
  let reply;
  try {
    reply = await connection.post(path, body, endpoint.timeoutMs);
  } catch (error) {
    throw fail(error instanceof DeadlineExceeded ? error.message : goStyleError(error as Error & { code?: string }, url));
  }
  if (reply.status < 200 || reply.status >= 300) {
    throw fail(`the server responded with the status code ${reply.status} but did not return a valid AdmissionReview: ${reply.text.slice(0, 200)}`);
  }
  try {
    return JSON.parse(reply.text) as unknown;
  } catch {
    throw fail('the server did not return a valid JSON AdmissionReview');
  }
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
    case 'ETIMEDOUT':
      return `dial tcp ${address}: i/o timeout`;
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
