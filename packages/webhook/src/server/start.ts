import type { DeletionPolicy } from '@k8or/api';
import type { KubeAccess, ProviderPlugin } from '@k8or/core';
import { secretNamespacesFor } from '@k8or/core/policy';
import { pino, type Logger } from 'pino';
import type { Server as HttpsServer } from 'node:https';
import type { AdmissionContext } from '../admission/types.js';
import { ClusterContext } from '../context/cluster-context.js';
import { webhookConfigurations, WEBHOOK_CONFIGURATION_NAMES, type ServiceReference } from '../manifests.js';
import { injectCaBundle } from '../tls/ca-bundle.js';
import { readCertificateFiles, watchCertificateFiles, type CertificateFilesOptions } from '../tls/certificate-files.js';
import { generateCertificates, serviceDnsNames } from '../tls/self-signed.js';
import { SharedCertificate } from '../tls/shared-certificate.js';
import { buildApp } from './app.js';
import { WebhookMetrics } from './metrics.js';

/** Serve a certificate from files (cert-manager), reloaded when they change, or generate a CA and certificate at start-up. */
export type TlsOptions =
  | { files: CertificateFilesOptions }
  | {
      selfSigned: {
        /** Every name the certificate is for; default localhost, 127.0.0.1, the listen host, and the `service`'s DNS names. */
        hosts?: string[];
        /** The Service kube-apiserver reaches this server through (in a cluster): its DNS names join the default hosts. */
        service?: Pick<ServiceReference, 'name' | 'namespace'>;
        validityDays?: number;
        /**
         * Share one CA and serving certificate among every replica through this Secret (needs
         * `kubeConfig`): created by the first, renewed before its end by one, re-read by all every
         * `checkIntervalMs` (default 1 min) and served, the new CA injected, once it changes.
         */
        shared?: { namespace: string; name: string; checkIntervalMs?: number };
      };
    };

export interface WebhookServerOptions {
  /** Default 127.0.0.1; use 0.0.0.0 in a pod. */
  host?: string;
  /** Default 9443; 0 for an ephemeral port. */
  port?: number;
  tls: TlsOptions;
  /** A fixed admission context (tests, tools). Without it, `kubeConfig` feeds one from list+watch caches. */
  context?: AdmissionContext;
  kubeConfig?: KubeAccess;
  /** Installed provider plugins, when the context comes from `kubeConfig`. */
  providers?: ReadonlyMap<string, ProviderPlugin> | readonly ProviderPlugin[];
  /** The operator's default deletion policy. Default `Delete`. */
  defaultDeletionPolicy?: DeletionPolicy;
  /** Namespaces whose Secrets the operator can read. Default: the operator's own namespace. */
  secretNamespaces?: readonly string[] | '*';
  /** The engine's cluster id, for default external names (else the engine decides them). */
  clusterId?: string;
  /** The engine's resync floor, for the k8or.io/resync-period check. Default 10 s. */
  resyncFloorMs?: number;
  /**
   * Self-signed mode: write the CA into these webhook configurations at start-up (needs `kubeConfig`).
   * `register: true` creates them (pointing at this server's URL, or at `service`) when missing.
   */
  caBundle?: { validating?: string; mutating?: string; register?: boolean; service?: ServiceReference };
  /** Largest body in bytes; default 3 MiB. */
  bodyLimit?: number;
  /** The webhook's timeoutSeconds; default 5. Bounds each request and the wait for the first cache sync. */
  timeoutSeconds?: number;
  logger?: Logger;
  logLevel?: string;
  /** Also collect Node process metrics (default true; tests turn it off). */
  processMetrics?: boolean;
}

export interface WebhookServer {
  /** https://host:port */
  url: string;
  /** The CA that kube-apiserver must trust for this server (the caBundle). */
  caPem: string;
  metrics: WebhookMetrics;
  /** True once caches are synced. */
  isReady(): boolean;
  close(): Promise<void>;
}

export const DEFAULT_BODY_LIMIT = 3 * 1024 * 1024;

/** Starts the admission webhook: TLS, caches, routes; resolves once it listens. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const logger = options.logger ?? pino({ name: 'k8or-webhook', level: options.logLevel ?? 'info' });
  const host = options.host ?? '127.0.0.1';
  const timeoutSeconds = options.timeoutSeconds ?? 5;
  if (options.caBundle && !options.kubeConfig) throw new Error('caBundle injection needs a kubeConfig');

  let material: { cert: string; key: string; caPem: string };
  let shared: SharedCertificate | undefined;
  if ('files' in options.tls) {
    material = readCertificateFiles(options.tls.files);
  } else {
    const { service } = options.tls.selfSigned;
    const hosts = options.tls.selfSigned.hosts ?? ['localhost', '127.0.0.1', ...(host !== '0.0.0.0' && host !== '127.0.0.1' ? [host] : []), ...(service ? serviceDnsNames(service) : [])];
    const sharedIn = options.tls.selfSigned.shared;
    if (sharedIn) {
      if (!options.kubeConfig) throw new Error('a shared certificate needs a kubeConfig');
      shared = new SharedCertificate({ kubeConfig: options.kubeConfig, namespace: sharedIn.namespace, name: sharedIn.name, hosts, logger, ...(options.tls.selfSigned.validityDays ? { validityDays: options.tls.selfSigned.validityDays } : {}) });
      material = await shared.ensure();
    } else {
      const generated = generateCertificates({ hosts, validityDays: options.tls.selfSigned.validityDays });
      material = { cert: generated.certPem, key: generated.keyPem, caPem: generated.caPem };
    }
  }

  let context: AdmissionContext;
  let cluster: ClusterContext | undefined;
  if (options.context) {
    context = options.context;
  } else if (options.kubeConfig) {
    cluster = new ClusterContext({
      kubeConfig: options.kubeConfig,
      providers: options.providers ?? [],
      defaultDeletionPolicy: options.defaultDeletionPolicy ?? 'Delete',
      secretNamespaces: secretNamespacesFor(options.secretNamespaces),
      ...(options.clusterId !== undefined ? { clusterId: options.clusterId } : {}),
      ...(options.resyncFloorMs !== undefined ? { resyncFloorMs: options.resyncFloorMs } : {}),
      logger,
    });
    context = cluster;
  } else {
    throw new Error('startWebhookServer needs a context or a kubeConfig');
  }
  const synced = cluster ? cluster.start() : Promise.resolve();
  const isReady = (): boolean => cluster?.hasSynced() ?? true;
  const waitUntilReady = async (waitMs: number): Promise<boolean> => {
    if (isReady()) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    const result = await Promise.race([synced.then(() => true), timeout]);
    clearTimeout(timer);
    return result;
  };

  const metrics = new WebhookMetrics({ defaultMetrics: options.processMetrics ?? true });
  const app = buildApp({
    https: { cert: material.cert, key: material.key },
    logger,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    requestTimeoutMs: timeoutSeconds * 1000,
    context,
    metrics,
    isReady,
    waitUntilReady,
  });

  let caPem = material.caPem;
  const watcher =
    'files' in options.tls
      ? watchCertificateFiles(options.tls.files, logger, (pair) => {
          (app.server as HttpsServer).setSecureContext({ cert: pair.cert, key: pair.key });
          caPem = pair.caPem;
          logger.info({ certFile: 'files' in options.tls ? options.tls.files.certFile : undefined }, 'serving certificate reloaded');
        })
      : undefined;

  try {
    await app.listen({ host, port: options.port ?? 9443 });
  } catch (error) {
    watcher?.close();
    cluster?.stop();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `https://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`;

  let sharedTimer: NodeJS.Timeout | undefined;
  const close = async (): Promise<void> => {
    clearInterval(sharedTimer);
    watcher?.close();
    await app.close();
    cluster?.stop();
  };

  const injectCa = async (): Promise<void> => {
    if (!options.caBundle || !options.kubeConfig) return;
    const names = { validating: options.caBundle.validating ?? WEBHOOK_CONFIGURATION_NAMES.validating, mutating: options.caBundle.mutating ?? WEBHOOK_CONFIGURATION_NAMES.mutating };
    const create = options.caBundle.register
      ? webhookConfigurations({ ...(options.caBundle.service ? { service: options.caBundle.service } : { url }), names, timeoutSeconds })
      : undefined;
    await injectCaBundle(options.kubeConfig, caPem, { ...names, create }, logger);
  };
  try {
    await injectCa();
  } catch (error) {
    await close();
    throw error;
  }

  if (shared && !('files' in options.tls)) {
    const sharedCertificate = shared;
    let serving = material.cert;
    let checking = false;
    const check = async (): Promise<void> => {
      if (checking) return;
      checking = true;
      try {
        const pair = await sharedCertificate.ensure();
        if (pair.cert === serving && pair.caPem === caPem) return;
        (app.server as HttpsServer).setSecureContext({ cert: pair.cert, key: pair.key });
        serving = pair.cert;
        const caChanged = pair.caPem !== caPem;
        caPem = pair.caPem;
        logger.info({ caChanged }, 'serving the renewed shared certificate');
        if (caChanged) await injectCa();
      } catch (error) {
        logger.warn({ err: error }, 'cannot check the shared webhook certificate; serving the current one');
      } finally {
        checking = false;
      }
    };
    sharedTimer = setInterval(() => void check(), options.tls.selfSigned.shared?.checkIntervalMs ?? 60_000);
    sharedTimer.unref();
  }

  logger.info({ url, tls: 'files' in options.tls ? 'files' : shared ? 'self-signed, shared' : 'self-signed' }, 'admission webhook listening');
  return {
    url,
    get caPem() {
      return caPem;
    },
    metrics,
    isReady,
    close,
  };
}
