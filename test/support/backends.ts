// The local clouds the sandbox examples are made real in, and the ProviderConfigs that point at them
// (the same two `k8or sandbox` makes: `default` for AWS, `local-gcp` for GCP).
import { startBigtableEmulator, startDynamoDbLocal, startGcsFake, startS3Fake } from '@k8or/local-clouds';
import { runOk, type Tool } from './run.ts';

export interface Backends {
  s3: string;
  dynamodb: string;
  gcs: string;
  /** host:port of the Bigtable emulator, when cbtemulator is installed. */
  bigtable: string | undefined;
  stop(): Promise<void>;
}

export const SANDBOX_CREDENTIALS = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one' };
export const GCP_PROJECT = 'k8or-sandbox';
export const GCP_INSTANCE = 'k8or-sandbox';

/**
 * The backends, as the operator and this suite both reach them. Each given in the environment
 * (K8OR_E2E_S3_ENDPOINT, K8OR_E2E_DYNAMODB_ENDPOINT, K8OR_E2E_GCS_ENDPOINT, K8OR_E2E_BIGTABLE_HOST:
 * a cluster's Pods must reach them) is used as it is; the others start here on 127.0.0.1.
 */
export async function startBackends(env: NodeJS.ProcessEnv = process.env): Promise<Backends> {
  const stops: Array<() => Promise<unknown>> = [];
  const started = async <T extends { stop(): Promise<unknown> }>(start: () => Promise<T>): Promise<T> => {
    const backend = await start();
    stops.push(() => backend.stop());
    return backend;
  };
  try {
    const s3 = env['K8OR_E2E_S3_ENDPOINT'] || (await started(() => startS3Fake())).endpoint;
    const dynamodb = env['K8OR_E2E_DYNAMODB_ENDPOINT'] || (await started(() => startDynamoDbLocal())).endpoint;
    const gcs = env['K8OR_E2E_GCS_ENDPOINT'] || (await started(() => startGcsFake())).endpoint;
    const bigtable = env['K8OR_E2E_BIGTABLE_HOST'] || (await started(() => startBigtableEmulator()).catch(() => undefined))?.host;
    return {
      s3,
      dynamodb,
      gcs,
      bigtable,
      stop: async () => {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop();
    throw error;
  }
}

/** The credentials Secret (in the operator's namespace) and the two ProviderConfigs, applied by the admin. */
export async function applyProviderConfigs(kubectl: Tool, namespace: string, backends: Backends): Promise<void> {
  const manifests = [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials', namespace }, type: 'Opaque', stringData: SANDBOX_CREDENTIALS },
    {
      apiVersion: 'k8or.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: 'default' },
      spec: {
        provider: 'aws',
        region: 'us-east-1',
        endpoints: { bucket: backends.s3, table: backends.dynamodb },
        credentials: { source: 'Secret', secretRef: { namespace, name: 'aws-credentials' } },
      },
    },
    {
      apiVersion: 'k8or.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: 'local-gcp' },
      spec: {
        provider: 'gcp',
        project: GCP_PROJECT,
        region: 'us-central1',
        bigtableInstance: GCP_INSTANCE,
        endpoints: { bucket: backends.gcs, ...(backends.bigtable ? { table: `http://${backends.bigtable}` } : {}) },
        credentials: { source: 'Environment' },
      },
    },
  ];
  await runOk(kubectl, ['apply', '-f', '-'], manifests.map((m) => JSON.stringify(m)).join('\n'));
}
