import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { KubeRest, corePath, type KubeAccess } from '@k8or/core';
import type { Logger } from 'pino';
import type { CertificatePair } from './certificate-files.js';
import { generateCa, issueServingCertificate, type CertificateAuthority } from './self-signed.js';

export interface SharedCertificateOptions {
  kubeConfig: KubeAccess;
  /** The Secret every replica shares (in the operator's namespace). */
  namespace: string;
  name: string;
  /** Every name the serving certificate must be valid for. */
  hosts: readonly string[];
  /** Lifetime of a serving certificate; default 365 days. */
  validityDays?: number;
  /** Lifetime of the CA; default 3650 days. */
  caValidityDays?: number;
  logger: Logger;
}

/** The Secret's keys: the serving pair, the CA bundle the webhook configurations trust, and the CA's key. */
const KEYS = { cert: 'tls.crt', key: 'tls.key', caBundle: 'ca.crt', caKey: 'ca.key' } as const;
const MAX_ATTEMPTS = 5;
/** How long `ensure()` keeps retrying an API server that throttles or fails (429, 5xx, a broken connection). */
const TRANSIENT_DEADLINE_MS = 120_000;
const TRANSIENT_BACKOFF_MS = { first: 200, max: 5_000 };

/** The fields of a core/v1 Secret this module reads and writes. */
interface Secret {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

interface Stored {
  cert: string;
  key: string;
  /** The signing CA first, then a previous CA still trusted while replicas move over. */
  caBundle: string;
  caKey: string;
  resourceVersion: string;
}

/**
 * One CA and serving certificate for every replica of the webhook, kept in a Secret. Without it each
 * replica made its own CA and the last to write `caBundle` won: the API server then refused every
 * other replica's certificate.
 *
 * `ensure()` reads the Secret; when there is none it creates one (create-if-absent: a 409 means
 * another replica won, whose Secret is read instead). A serving certificate with less than a third of
 * its lifetime left, or not naming every host, is renewed by one writer: the replace carries the
 * resourceVersion read, so of two replicas renewing at once one succeeds and the other reads its
 * result. Renewal keeps the CA (the `caBundle` the API server trusts does not change); a CA near its
 * own end is replaced with the old one kept in the bundle, so certificates it signed stay trusted
 * until every replica serves the new one.
 */
export class SharedCertificate {
  readonly #api: KubeRest;
  readonly #options: SharedCertificateOptions;

  constructor(options: SharedCertificateOptions) {
    this.#options = options;
    this.#api = new KubeRest(options.kubeConfig, { userAgent: 'k8or-webhook' });
  }

  /** The pair to serve and the CA bundle to inject, as the Secret holds it once this call is done. */
  async ensure(): Promise<CertificatePair> {
    const deadline = Date.now() + TRANSIENT_DEADLINE_MS;
    for (let delay = TRANSIENT_BACKOFF_MS.first; ; delay = Math.min(delay * 2, TRANSIENT_BACKOFF_MS.max)) {
      try {
        return await this.#ensureOnce();
      } catch (error) {
        // a throttled or failing API server is no reason to give up starting: wait and ask again
        if (!isTransient(error) || Date.now() + delay > deadline) throw error;
        this.#options.logger.warn({ err: error, retryInMs: delay }, 'webhook certificate Secret not reachable yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async #ensureOnce(): Promise<CertificatePair> {
    const { namespace, name, logger } = this.#options;
    for (let attempt = 1; ; attempt++) {
      const secret = await this.#read();
      try {
        if (!secret) {
          const fresh = this.#issue(undefined);
          await this.#api.create(corePath('secrets', namespace), this.#secret(fresh));
          logger.info({ secret: `${namespace}/${name}` }, 'webhook certificate created in its shared Secret');
          return pairOf(fresh);
        }
        const stored = parse(secret);
        const why = stored ? this.#renewalReason(stored) : 'unreadable';
        if (!why) return pairOf(stored!);
        const renewed = this.#issue(stored);
        await this.#api.update(corePath('secrets', namespace, name), this.#secret(renewed, secret));
        logger.info({ secret: `${namespace}/${name}`, why }, 'webhook certificate renewed in its shared Secret');
        return pairOf(renewed);
      } catch (error) {
        // 409: another replica created or renewed it first; read theirs.
        if (statusOf(error) === 409 && attempt < MAX_ATTEMPTS) continue;
        throw new Error(`cannot keep the webhook certificate in Secret ${namespace}/${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  }

  async #read(): Promise<Secret | undefined> {
    try {
      return await this.#api.get<Secret>(corePath('secrets', this.#options.namespace, this.#options.name));
    } catch (error) {
      throw new Error(`cannot read the webhook certificate Secret ${this.#options.namespace}/${this.#options.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /** Why the stored certificate must be renewed now, or undefined while it is good. */
  #renewalReason(stored: Stored): string | undefined {
    const cert = new X509Certificate(stored.cert);
    if (nearEnd(cert, new Date())) return `the serving certificate ends ${cert.validTo}`;
    if (nearEnd(new X509Certificate(firstCertificate(stored.caBundle)), new Date())) return 'the CA is near its end';
    const missing = this.#options.hosts.filter((host) => (isIP(host) ? cert.checkIP(host) : cert.checkHost(host, { wildcards: false })) === undefined);
    return missing.length > 0 ? `the serving certificate does not name ${missing.join(', ')}` : undefined;
  }

  /** A serving certificate signed by the stored CA while it lasts, else by a new CA (the old one kept in the bundle). */
  #issue(stored: Stored | undefined): Omit<Stored, 'resourceVersion'> {
    const now = new Date();
    const current: CertificateAuthority | undefined = stored && { certPem: firstCertificate(stored.caBundle), keyPem: stored.caKey };
    const keep = current && !nearEnd(new X509Certificate(current.certPem), now) ? current : undefined;
    const ca = keep ?? generateCa(this.#options.caValidityDays ?? 3650);
    const serving = issueServingCertificate(ca, { hosts: this.#options.hosts, validityDays: this.#options.validityDays ?? 365 });
    if (keep) return { cert: serving.certPem, key: serving.keyPem, caBundle: stored!.caBundle, caKey: ca.keyPem };
    const previous = current && new Date(new X509Certificate(current.certPem).validTo) > now ? current.certPem : '';
    return { cert: serving.certPem, key: serving.keyPem, caBundle: ca.certPem + previous, caKey: ca.keyPem };
  }

  #secret(material: Omit<Stored, 'resourceVersion'>, current?: Secret): Secret {
    const encode = (text: string): string => Buffer.from(text).toString('base64');
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: this.#options.name,
        namespace: this.#options.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'k8or', 'app.kubernetes.io/component': 'webhook-certificate' },
        // the replace succeeds only over the version read: one writer per renewal
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      type: 'Opaque',
      data: { [KEYS.cert]: encode(material.cert), [KEYS.key]: encode(material.key), [KEYS.caBundle]: encode(material.caBundle), [KEYS.caKey]: encode(material.caKey) },
    };
  }
}

/** Less than a third of its lifetime left (cert-manager renews at two thirds by default). */
function nearEnd(cert: X509Certificate, now: Date): boolean {
  const from = new Date(cert.validFrom).getTime();
  const to = new Date(cert.validTo).getTime();
  return to - now.getTime() < (to - from) / 3;
}

function parse(secret: Secret): Stored | undefined {
  const decode = (key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  const stored = { cert: decode(KEYS.cert), key: decode(KEYS.key), caBundle: decode(KEYS.caBundle), caKey: decode(KEYS.caKey), resourceVersion: secret.metadata?.resourceVersion ?? '' };
  if (!stored.cert || !stored.key || !stored.caBundle || !stored.caKey) return undefined;
  try {
    new X509Certificate(stored.cert);
    new X509Certificate(firstCertificate(stored.caBundle));
  } catch {
    return undefined;
  }
  return stored;
}

function firstCertificate(bundle: string): string {
  const end = '-----END CERTIFICATE-----';
  const at = bundle.indexOf(end);
  return at < 0 ? bundle : bundle.slice(0, at + end.length) + '\n';
}

const pairOf = (stored: Omit<Stored, 'resourceVersion'>): CertificatePair => ({ cert: stored.cert, key: stored.key, caPem: stored.caBundle });

/** 429, a 5xx or no HTTP answer at all (a broken connection), on the error or the one it wraps. */
function isTransient(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const status = statusOf(error) ?? statusOf(cause);
  if (status !== undefined) return status === 429 || status >= 500;
  return isNetworkError(error) || isNetworkError(cause);
}

function isNetworkError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN)$/.test(code);
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
