import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import { CoreMetrics, Engine, HealthChecks, createLogger, installCrds, startProbeServer, type ProbeServer } from '@k8or/core';
import { awsProvider } from '@k8or/provider-aws';
import { startSandbox } from '@k8or/apiserver';
import { startDynamoDbLocal, startS3Fake } from '@k8or/local-clouds';
import { startWebhookServer, type WebhookServer } from '@k8or/webhook';
import { KubeConfig } from '@kubernetes/client-node';
import { startLocalAzure } from './local-azure.js';
import { startLocalGcp, type LocalGcpEndpoints } from './local-gcp.js';
import { applySandboxProviderConfig } from './sandbox-objects.js';
import { destination, type Logger } from 'pino';

export interface LocalStackOptions {
  /** Where the kubeconfig goes; `sandbox.json` (endpoints) is written beside it. */
  kubeconfigPath: string;
  /** API server port; 0 picks a free one. */
  port: number;
  /** Persist Kubernetes objects here across restarts, and the backends' state where they can keep it (GCS fake, Azurite). */
  dataDir?: string;
  /** JSON log lines of every part go here. */
  logFile: string;
  logLevel: string;
}

/** What a running local stack serves; written to sandbox.json for scripts and tests. */
export interface LocalStackEndpoints {
  apiServer: string;
  kubeconfig: string;
  webhook: string;
  probes: string;
  s3: string;
  dynamodb: string | undefined;
  gcp: LocalGcpEndpoints;
  /** Azurite's Blob and Table endpoints, behind the `local-azure` ProviderConfig. */
  azurite: { blob: string; table: string };
}

export interface LocalStack {
  endpoints: LocalStackEndpoints;
  stop(): Promise<void>;
}

/** Credentials the local backends accept; the S3 fake and DynamoDB Local check only their shape. */
const SANDBOX_CREDENTIALS = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one' };
const SYSTEM_NAMESPACE = 'k8or-system';

/**
 * Starts the whole local sandbox in one process: the embedded API server, the
 * S3 fake and DynamoDB Local, the admission webhook (registered with the API
 * server, self-signed CA), and the reconcile engine with the AWS and Azure
 * providers, plus a `default` ProviderConfig pointing at the AWS backends and
 * `local-azure` pointing at Azurite.
 * Stops everything, in reverse order, on `stop()`.
 */
export async function startLocalStack(options: LocalStackOptions, logger: Logger): Promise<LocalStack> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => logger.warn({ err: error }, 'stop step failed'));
  };
  try {
    const sandbox = await startSandbox({
      port: options.port,
      kubeconfigPath: options.kubeconfigPath,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      logger: logger.child({ component: 'apiserver' }),
    });
    stops.push(() => sandbox.stop());
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);

    const s3 = await startS3Fake();
    stops.push(() => s3.stop());
    const dynamodb = await startDynamoDbLocal().catch((error: unknown) => {
      logger.warn({ err: error }, 'DynamoDB Local did not start (is Java 17 installed?); Tables will not reconcile');
      return undefined;
    });
    if (dynamodb) stops.push(() => dynamodb.stop());

    const gcp = await startLocalGcp(options, logger.child({ component: 'gcp' }));
    stops.push(() => gcp.stop());
    const azure = await startLocalAzure(options.dataDir);
    stops.push(() => azure.stop());

    // The webhook first: a persisted sandbox's webhook configurations point at the last run's port
    // until it re-registers, and the ProviderConfig writes below go through it.
    const webhook: WebhookServer = await startWebhookServer({
      port: 0,
      tls: { selfSigned: {} },
      kubeConfig,
      providers: [awsProvider, azure.plugin, gcp.plugin],
      secretNamespaces: [SYSTEM_NAMESPACE],
      caBundle: { register: true },
      logger: logger.child({ component: 'webhook' }),
      processMetrics: false,
    });
    stops.push(() => webhook.close());

    await installDefaultProviderConfig(kubeConfig, s3.endpoint, dynamodb?.endpoint);
    await azure.installProviderConfig(kubeConfig, SYSTEM_NAMESPACE);
    await gcp.installProviderConfig(kubeConfig);

    const metrics = new CoreMetrics();
    const health = new HealthChecks();
    const engine = new Engine({
      kubeConfig,
      providers: new Map([[awsProvider.provider, awsProvider], [azure.plugin.provider, azure.plugin], [gcp.plugin.provider, gcp.plugin]]),
      clusterId: 'k8or-sandbox',
      secretsNamespace: SYSTEM_NAMESPACE,
      metrics,
      health,
      logger: logger.child({ component: 'engine' }),
    });
    await engine.start();
    stops.push(() => engine.stop());
    const probes: ProbeServer = await startProbeServer({ port: 0, host: '127.0.0.1', health, metrics });
    stops.push(() => probes.close());

    const endpoints: LocalStackEndpoints = {
      apiServer: sandbox.url,
      kubeconfig: options.kubeconfigPath,
      webhook: webhook.url,
      probes: probes.url,
      s3: s3.endpoint,
      dynamodb: dynamodb?.endpoint,
      gcp: gcp.endpoints,
      azurite: { blob: azure.blob, table: azure.table },
    };
    writeEndpoints(options.kubeconfigPath, endpoints);
    return { endpoints, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function installDefaultProviderConfig(kubeConfig: KubeConfig, s3Endpoint: string, dynamoDbEndpoint: string | undefined): Promise<void> {
  const providerConfig: ProviderConfig = {
    apiVersion: API_VERSION,
    kind: 'ProviderConfig',
    metadata: { name: 'default', annotations: { 'k8or.io/description': 'AWS APIs served by the local S3 fake and DynamoDB Local' } },
    spec: {
      provider: 'aws',
      region: 'us-east-1',
      endpoints: { bucket: s3Endpoint, ...(dynamoDbEndpoint ? { table: dynamoDbEndpoint } : {}) },
      credentials: { source: 'Secret', secretRef: { namespace: SYSTEM_NAMESPACE, name: 'aws-credentials' } },
    },
  };
  await applySandboxProviderConfig(kubeConfig, providerConfig, { namespace: SYSTEM_NAMESPACE, name: 'aws-credentials', stringData: SANDBOX_CREDENTIALS });
}

function writeEndpoints(kubeconfigPath: string, endpoints: LocalStackEndpoints): void {
  const file = join(dirname(kubeconfigPath), 'sandbox.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(endpoints, null, 2)}\n`);
}

/** The logger every part of the local stack writes to (JSON lines, credentials redacted). */
export function localStackLogger(logFile: string, level: string): Logger {
  mkdirSync(dirname(logFile), { recursive: true });
  return createLogger({ name: 'k8or-sandbox', level, destination: destination({ dest: logFile, sync: true }) });
}
