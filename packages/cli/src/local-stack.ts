import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import { CoreMetrics, Engine, HealthChecks, createLogger, crdsListingSettingsOf, installCrds, startProbeServer, type ProbeServer } from '@k8or/core';
import { ProviderLoader, resolveClusterId } from '@k8or/operator';
import { startSandbox } from '@k8or/apiserver';
import { startDynamoDbLocal, startDynamoDbProxy, startS3Fake } from '@k8or/local-clouds';
import { startWebhookWorker, type WebhookWorker } from '@k8or/webhook';
import { startLocalAzure, type LocalAzureEndpoints } from './local-azure.js';
import { startLocalGcp, type LocalGcpEndpoints } from './local-gcp.js';
import { applySandboxProviderConfig } from './provider-configs.js';
import { SANDBOX_BACKENDS, SandboxPorts, portOption } from './sandbox-ports.js';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { destination, type Logger } from 'pino';

export interface LocalStackOptions {
  /** Where the kubeconfig goes; `sandbox.json` (endpoints) is written beside it. */
  kubeconfigPath: string;
  /** API server port; 0 picks a free one. */
  port: number;
  /**
   * Keep state here across restarts: the API server's objects in it, each local cloud backend in a
   * folder of its own (`s3/`, `dynamodb/`, `gcs/`, `azurite/`; a backend that cannot keep state says
   * so), and the backends' ports in `ports.json`, so they listen where the ProviderConfigs pointed.
   */
  dataDir?: string;
  /** JSON log lines of every part go here. */
  logFile: string;
  /** How often each resource is checked for drift; default the operator's (1 h). */
  resyncPeriodMs?: number;
  logLevel: string;
  /** Told as each part starts and is ready (or fails with its fix), for the progress lines. */
  onProgress?: (event: ProgressEvent) => void;
}

/**
 * One step of start-up: a part starting, ready, failed (the rest keeps running), or a notice the user
 * must read (a recorded port taken by another process).
 */
export type ProgressEvent =
  | { part: string; state: 'starting' | 'ready' }
  | { part: string; state: 'failed'; fix: string }
  | { part: string; state: 'notice'; message: string };

/** What a running local stack serves; written to sandbox.json for scripts and tests. */
export interface LocalStackEndpoints {
  apiServer: string;
  kubeconfig: string;
  webhook: string;
  probes: string;
  s3: string;
  dynamodb: string | undefined;
  gcp: LocalGcpEndpoints;
  /** Azurite's Blob and Table endpoints and its account (name, key, connection string), behind the `local-azure` ProviderConfig. */
  azurite: LocalAzureEndpoints;
  /**
   * The credentials the local backends accept (fake, local only), so a script needs nothing else.
   * AWS: the one key the S3 fake and DynamoDB accept; any other key or secret is refused.
   */
  credentials: { aws: AwsSandboxCredentials };
}

/** The sandbox's AWS access key: the S3 fake and the DynamoDB proxy accept it and refuse every other. */
export interface AwsSandboxCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export interface LocalStack {
  endpoints: LocalStackEndpoints;
  stop(): Promise<void>;
}

/**
 * The one AWS key the local backends accept: the S3 fake and the proxy in front of DynamoDB Local
 * verify every request's signature with it, and refuse any other key (InvalidAccessKeyId,
 * UnrecognizedClientException) or secret (SignatureDoesNotMatch, InvalidSignatureException).
 */
export const SANDBOX_AWS_CREDENTIALS: AwsSandboxCredentials = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one', region: 'us-east-1' };
const SANDBOX_CREDENTIALS = { accessKeyId: SANDBOX_AWS_CREDENTIALS.accessKeyId, secretAccessKey: SANDBOX_AWS_CREDENTIALS.secretAccessKey };
const AWS_KEYS = { [SANDBOX_AWS_CREDENTIALS.accessKeyId]: SANDBOX_AWS_CREDENTIALS.secretAccessKey };
const SYSTEM_NAMESPACE = 'k8or-system';

/**
 * Starts the whole local sandbox in one process: the embedded API server, the
 * S3 fake and DynamoDB Local, the admission webhook (registered with the API
 * server, self-signed CA), and the reconcile engine with the AWS provider,
 * plus a `default` ProviderConfig pointing at the local backends.
 * Stops everything, in reverse order, on `stop()`.
 */
export async function startLocalStack(options: LocalStackOptions, logger: Logger): Promise<LocalStack> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const step of stops.reverse()) await step().catch((error: unknown) => logger.warn({ err: error }, 'stop step failed'));
  };
  const progress = options.onProgress ?? (() => undefined);
  try {
    progress({ part: 'API server', state: 'starting' });
    const sandbox = await startSandbox({
      port: options.port,
      kubeconfigPath: options.kubeconfigPath,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      logger: logger.child({ component: 'apiserver' }),
    });
    stops.push(() => sandbox.stop());
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    // Every provider package installed beside the operator, loaded by name as `k8or operator` loads them.
    const { providers, packages } = await new ProviderLoader().loadAll([]);
    // Their settings listed in the ProviderConfig CRD, so `kubectl explain providerconfig.spec.settings` shows them.
    await installCrds(kubeConfig, crdsListingSettingsOf(providers.values()));
    // The operator's own resolution (kube-system's uid, kept under --data-dir), so `k8or plan` and
    // `k8or import` find the same id without a flag; the webhook and the engine both get this one.
    const clusterId = await resolveClusterId(kubeConfig, process.env['K8OR_CLUSTER_ID']);
    progress({ part: 'API server', state: 'ready' });
    const ports = new SandboxPorts(options.dataDir, (taken) => {
      logger.warn({ backend: taken.backend, port: taken.port }, taken.message);
      progress({ part: SANDBOX_BACKENDS[taken.backend], state: 'notice', message: taken.message });
    });

    progress({ part: 'AWS backends (S3 fake, DynamoDB Local)', state: 'starting' });
    const s3 = await startS3Fake({ credentials: AWS_KEYS, ...(options.dataDir ? { dataDir: join(options.dataDir, 's3') } : {}), ...portOption(await ports.portFor('s3')) });
    stops.push(() => s3.stop());
    ports.listening('s3', s3.endpoint);
    const dynamodbDataDir = options.dataDir ? { dataDir: join(options.dataDir, 'dynamodb') } : {};
    const dynamodbLocal = await startDynamoDbLocal(dynamodbDataDir).catch((error: unknown) => {
      logger.warn({ err: error }, 'DynamoDB Local did not start (is Java 17 installed?); Tables will not reconcile');
      progress({ part: 'DynamoDB Local', state: 'failed', fix: 'install Java 17 (apt-get install openjdk-17-jdk-headless) and restart; AWS Tables will not reconcile until then' });
      return undefined;
    });
    if (dynamodbLocal) stops.push(() => dynamodbLocal.stop());
    if (dynamodbLocal?.listenWarning) logger.warn(dynamodbLocal.listenWarning);
    // Clients reach DynamoDB Local only through the proxy: signatures, tagging, continuous backups.
    const dynamodb = dynamodbLocal
      ? await startDynamoDbProxy({ target: dynamodbLocal.endpoint, credentials: AWS_KEYS, ...dynamodbDataDir, ...portOption(await ports.portFor('dynamodb')) })
      : undefined;
    if (dynamodb) stops.push(() => dynamodb.stop());
    // The ProviderConfig names the proxy, so the proxy keeps its port; DynamoDB Local behind it takes a free one.
    if (dynamodb) ports.listening('dynamodb', dynamodb.endpoint);
    progress({ part: 'AWS backends (S3 fake, DynamoDB Local)', state: 'ready' });

    progress({ part: 'Azure backends (Azurite)', state: 'starting' });
    const azure = await startLocalAzure(options.dataDir, ports);
    stops.push(() => azure.stop());
    progress({ part: 'Azure backends (Azurite)', state: 'ready' });

    const operatorPart = `webhook and operator (providers ${[...providers.keys()].join(', ')})`;
    progress({ part: operatorPart, state: 'starting' });
    // The webhook first: it registers (or, after a restart, re-points) its configurations, and every
    // write below goes through them. It runs on a thread of its own, as it runs in a pod of its own in a
    // cluster, so its side of every admission call is not on the API server's thread; the thread
    // imports the same provider packages.
    const webhook: WebhookWorker = await startWebhookWorker({
      port: 0,
      tls: { selfSigned: {} },
      kubeConfig,
      providers: packages.map((p) => ({ url: p.entryUrl })),
      secretNamespaces: [SYSTEM_NAMESPACE],
      // The engine's cluster id: the webhook defaults external names exactly as the engine would.
      clusterId,
      caBundle: { register: true },
      logger: logger.child({ component: 'webhook' }),
      processMetrics: false,
    });
    stops.push(() => webhook.close());

    await installDefaultProviderConfig(kubeConfig, s3.endpoint, dynamodb?.endpoint);
    progress({ part: 'GCP backends (GCS fake, Bigtable emulator)', state: 'starting' });
    const gcp = await startLocalGcp(kubeConfig, { ...options, secretNamespace: SYSTEM_NAMESPACE, ports }, logger.child({ component: 'gcp' }));
    stops.push(() => gcp.stop());
    progress({ part: 'GCP backends (GCS fake, Bigtable emulator)', state: 'ready' });
    await azure.installProviderConfig(kubeConfig, SYSTEM_NAMESPACE);

    const metrics = new CoreMetrics();
    const health = new HealthChecks();
    const engine = new Engine({
      kubeConfig,
      providers,
      clusterId,
      secretsNamespace: SYSTEM_NAMESPACE,
      metrics,
      health,
      ...(options.resyncPeriodMs !== undefined ? { resyncPeriodMs: options.resyncPeriodMs } : {}),
      logger: logger.child({ component: 'engine' }),
    });
    await engine.start();
    stops.push(() => engine.stop());
    const probes: ProbeServer = await startProbeServer({ port: 0, host: '127.0.0.1', health, metrics });
    stops.push(() => probes.close());
    progress({ part: operatorPart, state: 'ready' });

    const endpoints: LocalStackEndpoints = {
      apiServer: sandbox.url,
      kubeconfig: options.kubeconfigPath,
      webhook: webhook.url,
      probes: probes.url,
      s3: s3.endpoint,
      dynamodb: dynamodb?.endpoint,
      gcp: gcp.endpoints,
      azurite: { blob: azure.blob, table: azure.table, accountName: azure.accountName, accountKey: azure.accountKey, connectionString: azure.connectionString },
      credentials: { aws: SANDBOX_AWS_CREDENTIALS },
    };
    writeEndpoints(options.kubeconfigPath, endpoints);
    ports.save();
    return { endpoints, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function installDefaultProviderConfig(kubeConfig: KubeConfig, s3Endpoint: string, dynamoDbEndpoint: string | undefined): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await ignoreConflict(core.createNamespace({ body: { metadata: { name: SYSTEM_NAMESPACE } } }));
  await ignoreConflict(
    core.createNamespacedSecret({
      namespace: SYSTEM_NAMESPACE,
      body: { metadata: { name: 'aws-credentials' }, type: 'Opaque', stringData: SANDBOX_CREDENTIALS },
    }),
  );
  // `local-aws` names the AWS backends as `local-gcp` names GCP's; `default` is the same, for manifests that name none.
  for (const name of ['default', 'local-aws']) {
    const providerConfig: ProviderConfig = {
      apiVersion: API_VERSION,
      kind: 'ProviderConfig',
      metadata: { name, annotations: { 'k8or.io/description': 'AWS APIs served by the local S3 fake and DynamoDB Local' } },
      spec: {
        provider: 'aws',
        region: SANDBOX_AWS_CREDENTIALS.region,
        endpoints: { bucket: s3Endpoint, ...(dynamoDbEndpoint ? { table: dynamoDbEndpoint } : {}) },
        credentials: { source: 'Secret', secretRef: { namespace: SYSTEM_NAMESPACE, name: 'aws-credentials' } },
      },
    };
    await applySandboxProviderConfig(kubeConfig, providerConfig);
  }
}

function writeEndpoints(kubeconfigPath: string, endpoints: LocalStackEndpoints): void {
  const file = join(dirname(kubeconfigPath), 'sandbox.json');
  mkdirSync(dirname(file), { recursive: true });
  // It holds the sandbox's (fake, local) credentials: readable by this user only.
  writeFileSync(file, `${JSON.stringify(endpoints, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // a file left by an earlier sandbox keeps its mode otherwise
}

function isConflict(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: number }).code === 409;
}

async function ignoreConflict(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
}

/** The logger every part of the local stack writes to (JSON lines, credentials redacted). */
export function localStackLogger(logFile: string, level: string): Logger {
  mkdirSync(dirname(logFile), { recursive: true });
  return createLogger({ name: 'k8or-sandbox', level, destination: destination({ dest: logFile, sync: true }) });
}
