import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import { startBigtableEmulator, startGcsFake } from '@k8or/local-clouds';
import { gcpProvider } from '@k8or/provider-gcp';
import type { ProviderPlugin } from '@k8or/core';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { gcpSandboxCredentials } from './gcp-sandbox-credentials.js';
import { applySandboxProviderConfig } from './provider-configs.js';
import { portOption, type SandboxPorts } from './sandbox-ports.js';
import { createSandboxSecret } from './sandbox-secrets.js';

/** Where the sandbox's GCP backends listen, and what a user should know about them. */
export interface LocalGcpEndpoints {
  /** GCS JSON API fake: `apiEndpoint` for @google-cloud/storage. */
  gcs: string;
  /** The same fake over HTTPS (gsutil speaks the JSON API over HTTPS only), with a certificate of `caFile`'s CA. */
  gcsHttps: string;
  /** The CA certificate (PEM) to trust for `gcsHttps`: gcloud's core/custom_ca_certs_file, boto's ca_certificates_file. */
  caFile: string;
  /**
   * The service account the sandbox issued (fake, local only): the GCS fake accepts the JWTs its key
   * signs, answers 401 to any other key, and takes requests without credentials as anonymous.
   * `keyFile` is the key, as the Cloud console hands one out, with the fake's token endpoint as its
   * `token_uri` (so `gcloud auth activate-service-account --key-file` works); `local-gcp` uses it.
   */
  serviceAccount: { email: string; project: string; keyFile: string };
  /** Bigtable emulator `host:port` (BIGTABLE_EMULATOR_HOST); undefined when cbtemulator is not installed. */
  bigtable: string | undefined;
  /** One line on the Bigtable emulator: its lack of persistence, or why it is not running. */
  bigtableNote: string;
}

export interface LocalGcp {
  plugin: ProviderPlugin;
  endpoints: LocalGcpEndpoints;
  stop(): Promise<void>;
}

/** The ProviderConfig the sandbox serves GCP through, with the service-account key the sandbox issued. */
export const LOCAL_GCP_PROVIDER_CONFIG = 'local-gcp';
const CREDENTIALS_SECRET = 'gcp-credentials';
const SANDBOX_PROJECT = 'k8or-sandbox';
const SANDBOX_INSTANCE = 'k8or-sandbox';

export interface LocalGcpOptions {
  /** Keep the GCS fake's state, the service-account key and the CA in `dataDir/gcs`. */
  dataDir?: string;
  /** The key file and the CA certificate are written beside this file (with sandbox.json). */
  kubeconfigPath: string;
  /** Where the Secret with the service-account key goes. */
  secretNamespace: string;
  /** The port each backend starts on (the GCS fake's HTTP and HTTPS, the Bigtable emulator). */
  ports: SandboxPorts;
}

/**
 * Starts the sandbox's GCP side, each backend on the port `ports` gives it: the GCS fake over HTTP
 * and HTTPS (persisted under `dataDir/gcs` when given) that accepts the service-account key the
 * sandbox issues, Google's Bigtable emulator when installed (it keeps nothing across restarts; without
 * it the sandbox runs without GCP Tables and says so), and the `local-gcp` ProviderConfig pointing at
 * them with that key in a Secret.
 */
export async function startLocalGcp(kubeConfig: KubeConfig, options: LocalGcpOptions, logger: Logger): Promise<LocalGcp> {
  const { ports } = options;
  const gcsDir = options.dataDir ? join(options.dataDir, 'gcs') : undefined;
  const credentials = gcpSandboxCredentials(SANDBOX_PROJECT, gcsDir);
  const email = credentials.key.client_email;
  const keyFile = join(dirname(options.kubeconfigPath), 'gcp-service-account.json');
  const caFile = join(dirname(options.kubeconfigPath), 'clouds-ca.pem');
  writeFileSync(caFile, credentials.ca.certPem);
  const httpsPort = await ports.portFor('gcsHttps');
  const gcs = await startGcsFake({
    ...(gcsDir ? { dataDir: gcsDir } : {}),
    ...portOption(await ports.portFor('gcs')),
    ...(httpsPort === undefined ? {} : { httpsPort }),
    serviceAccounts: { [email]: { project: SANDBOX_PROJECT, publicKeyPem: credentials.publicKeyPem } },
    tls: credentials.serving,
  });
  ports.listening('gcs', gcs.endpoint);
  if (gcs.httpsEndpoint) ports.listening('gcsHttps', gcs.httpsEndpoint);
  // The fake's token endpoint as the key's token_uri: gcloud and gsutil log in with the key there.
  const key = { ...credentials.key, token_uri: gcs.tokenUri };
  writeFileSync(keyFile, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600 });
  const bigtable = await startBigtableEmulator(portOption(await ports.portFor('bigtable'))).catch((error: unknown) => {
    logger.warn({ err: error }, 'the Bigtable emulator did not start; GCP Tables will not reconcile');
    return { missing: error instanceof Error ? error.message : String(error) };
  });
  const running = 'host' in bigtable ? bigtable : undefined;
  const bigtableNote = running
    ? 'the Bigtable emulator keeps no state: Tables are created again after a restart'
    : `not running, so the sandbox has no GCP Tables: ${'missing' in bigtable ? bigtable.missing : ''}`;
  if (running) logger.info({ host: running.host }, bigtableNote);
  if (running) ports.listening('bigtable', running.host);
  try {
    await createSandboxSecret(kubeConfig, options.secretNamespace, CREDENTIALS_SECRET, { 'credentials.json': JSON.stringify(key) });
    await applyProviderConfig(kubeConfig, gcs.endpoint, running?.host, options.secretNamespace);
  } catch (error) {
    await Promise.all([gcs.stop(), running?.stop()]);
    throw error;
  }
  return {
    plugin: gcpProvider,
    endpoints: {
      gcs: gcs.endpoint,
      gcsHttps: gcs.httpsEndpoint ?? '',
      caFile,
      serviceAccount: { email, project: SANDBOX_PROJECT, keyFile },
      bigtable: running?.host,
      bigtableNote,
    },
    stop: async () => {
      await Promise.all([gcs.stop(), running?.stop()]);
    },
  };
}

async function applyProviderConfig(kubeConfig: KubeConfig, gcsEndpoint: string, bigtableHost: string | undefined, secretNamespace: string): Promise<void> {
  const endpoints = { bucket: gcsEndpoint, ...(bigtableHost ? { table: `http://${bigtableHost}` } : {}) };
  const providerConfig: ProviderConfig = {
    apiVersion: API_VERSION,
    kind: 'ProviderConfig',
    metadata: { name: LOCAL_GCP_PROVIDER_CONFIG, annotations: { 'k8or.io/description': 'GCP APIs served by the local GCS fake and the Bigtable emulator' } },
    spec: {
      provider: 'gcp',
      project: SANDBOX_PROJECT,
      region: 'us-central1',
      bigtableInstance: SANDBOX_INSTANCE,
      endpoints,
      credentials: { source: 'Secret', secretRef: { namespace: secretNamespace, name: CREDENTIALS_SECRET } },
    },
  };
  // After a restart the endpoints are replaced whole, so a Bigtable emulator gone missing drops out.
  await applySandboxProviderConfig(kubeConfig, providerConfig);
}
