import { join } from 'node:path';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import { startBigtableEmulator, startGcsFake } from '@k8or/local-clouds';
import { gcpProvider } from '@k8or/provider-gcp';
import type { ProviderPlugin } from '@k8or/core';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { applySandboxProviderConfig } from './provider-configs.js';
import { portOption, type SandboxPorts } from './sandbox-ports.js';

/** Where the sandbox's GCP backends listen, and what a user should know about them. */
export interface LocalGcpEndpoints {
  /** GCS JSON API fake: `apiEndpoint` for @google-cloud/storage. */
  gcs: string;
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

/** The ProviderConfig the sandbox serves GCP through: no credentials (the local backends need none). */
export const LOCAL_GCP_PROVIDER_CONFIG = 'local-gcp';
const SANDBOX_PROJECT = 'k8or-sandbox';
const SANDBOX_INSTANCE = 'k8or-sandbox';

/**
 * Starts the sandbox's GCP side, each backend on the port `ports` gives it: the GCS fake (persisted
 * under `dataDir/gcs` when given), Google's
 * Bigtable emulator when installed (it keeps nothing across restarts; without it the sandbox runs
 * without GCP Tables and says so), and the `local-gcp` ProviderConfig pointing at them.
 */
export async function startLocalGcp(kubeConfig: KubeConfig, options: { dataDir?: string; ports: SandboxPorts }, logger: Logger): Promise<LocalGcp> {
  const gcs = await startGcsFake({ ...(options.dataDir ? { dataDir: join(options.dataDir, 'gcs') } : {}), ...portOption(await options.ports.portFor('gcs')) });
  options.ports.listening('gcs', gcs.endpoint);
  const bigtablePort = portOption(await options.ports.portFor('bigtable'));
  const bigtable = await startBigtableEmulator(bigtablePort).catch((error: unknown) => {
    logger.warn({ err: error }, 'the Bigtable emulator did not start; GCP Tables will not reconcile');
    return { missing: error instanceof Error ? error.message : String(error) };
  });
  const running = 'host' in bigtable ? bigtable : undefined;
  const bigtableNote = running
    ? 'the Bigtable emulator keeps no state: Tables are created again after a restart'
    : `not running, so the sandbox has no GCP Tables: ${'missing' in bigtable ? bigtable.missing : ''}`;
  if (running) logger.info({ host: running.host }, bigtableNote);
  if (running) options.ports.listening('bigtable', running.host);
  try {
    await applyProviderConfig(kubeConfig, gcs.endpoint, running?.host);
  } catch (error) {
    await Promise.all([gcs.stop(), running?.stop()]);
    throw error;
  }
  return {
    plugin: gcpProvider,
    endpoints: { gcs: gcs.endpoint, bigtable: running?.host, bigtableNote },
    stop: async () => {
      await Promise.all([gcs.stop(), running?.stop()]);
    },
  };
}

async function applyProviderConfig(kubeConfig: KubeConfig, gcsEndpoint: string, bigtableHost: string | undefined): Promise<void> {
  const endpoints = { bucket: gcsEndpoint, ...(bigtableHost ? { table: `http://${bigtableHost}` } : {}) };
  const providerConfig: ProviderConfig = {
    apiVersion: API_VERSION,
    kind: 'ProviderConfig',
    metadata: { name: LOCAL_GCP_PROVIDER_CONFIG, annotations: { 'k8or.io/description': 'GCP APIs served by the local GCS fake and the Bigtable emulator' } },
    spec: { provider: 'gcp', project: SANDBOX_PROJECT, region: 'us-central1', bigtableInstance: SANDBOX_INSTANCE, endpoints, credentials: { source: 'Environment' } },
  };
  // After a restart the endpoints are replaced whole, so a Bigtable emulator gone missing drops out.
  await applySandboxProviderConfig(kubeConfig, providerConfig);
}
