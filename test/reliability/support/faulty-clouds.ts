// Every cloud backend with a fault proxy in front of it: the S3 fake, DynamoDB Local, the GCS fake and
// Azurite (Blob and Table) behind HTTP fault proxies, and Google's Bigtable emulator behind the gRPC
// fault proxy where it is installed; the ProviderConfigs that send the operator through the proxies,
// and the suite's own view of each backend, straight, never faulted, to check what the statuses claim.
import { HeadBucketCommand, GetBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { Bigtable } from '@google-cloud/bigtable';
import { AccountSASPermissions, AccountSASResourceTypes, AccountSASServices, BlobServiceClient, generateAccountSASQueryParameters, SASProtocol, StorageSharedKeyCredential } from '@azure/storage-blob';
import {
  findCbtemulator,
  startAzurite,
  startBigtableEmulator,
  startDynamoDbLocal,
  startDynamoDbProxy,
  startFaultProxy,
  startGcsFake,
  startGrpcFaultProxy,
  startS3Fake,
  type Azurite,
  type CloudDialectName,
  type FaultPlan,
  type FaultProxy,
  type ProxiedCall,
} from '@k8or/local-clouds';

/**
 * Credentials the operator is given, made distinctive so a grep of logs, Events and statuses finds
 * any leak. The S3 fake verifies every signature with them.
 */
export const FAULT_RUN_AWS_CREDENTIALS = {
  accessKeyId: 'AKIAFAULTRUN00000042',
  secretAccessKey: 'k8or-fault-run-SECRET-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4',
} as const;

export const PROVIDER_CONFIGS = { aws: 'faulty-aws', gcp: 'faulty-gcp', azure: 'faulty-azure' } as const;
/** Azure again, with an account SAS token (a credential that travels in every request URL) in place of the key. */
export const AZURE_SAS_PROVIDER_CONFIG = 'faulty-azure-sas';
export type CloudName = keyof typeof PROVIDER_CONFIGS;
const GCP_PROJECT = 'k8or-faults';

/** A service's pace, as `ProviderConfig.spec.rateLimits.<service>` declares it. */
export interface RateLimit {
  requestsPerSecond: number;
  burst: number;
}
export type DeclaredLimits = Partial<Record<CloudName, Record<string, RateLimit>>>;

/** Every API a proxy stands in front of: the HTTP dialects, and Bigtable's gRPC. */
export type ProxiedApi = CloudDialectName | 'bigtable';
/** The Bigtable instance of the run's tables (the emulator takes any). */
export const BIGTABLE_INSTANCE = 'k8or-faults';

/**
 * Why Bigtable sits out the run (its emulator, cbtemulator, is not installed), or undefined when it
 * takes part.
 */
export function bigtableLeftOut(): string | undefined {
  const located = findCbtemulator();
  return 'missing' in located ? located.missing : undefined;
}

export interface FaultyClouds {
  /** Bigtable's only where its emulator is installed (see `bigtableLeftOut`). */
  proxies: Record<CloudDialectName, FaultProxy> & { bigtable?: FaultProxy };
  azurite: Azurite;
  /** The fault plan of every proxy at once. */
  setFaults(plan: FaultPlan): void;
  /** Every call every proxy saw, with the dialect it went through. */
  calls(): Array<ProxiedCall & { dialect: ProxiedApi }>;
  /** The admin's Secrets and ProviderConfigs pointing the operator at the proxies, with `spec.rateLimits` per cloud when given. */
  manifests(secretNamespace: string, rateLimits?: DeclaredLimits): object[];
  /** Straight to the backend: does the resource exist, and with versioning on where the kind has it? */
  inCloud(cloud: CloudName, kind: 'Bucket' | 'Table', externalName: string): Promise<{ exists: boolean; versioning?: boolean }>;
  /** The credential values a leak check looks for. */
  secrets: string[];
  stop(): Promise<void>;
}

/**
 * Starts the backends and one fault proxy each, seeded from `seed` (faults off until setFaults);
 * Bigtable's emulator and proxy only when `withBigtable`.
 */
export async function startFaultyClouds(seed: number, withBigtable: boolean): Promise<FaultyClouds> {
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const [s3, dynamodbLocal, gcs, azurite, bigtableEmulator] = await Promise.all([
      startS3Fake({ credentials: { [FAULT_RUN_AWS_CREDENTIALS.accessKeyId]: FAULT_RUN_AWS_CREDENTIALS.secretAccessKey } }),
      startDynamoDbLocal(),
      startGcsFake(),
      startAzurite(),
      withBigtable ? startBigtableEmulator() : Promise.resolve(undefined),
    ]);
    stops.push(() => s3.stop(), () => dynamodbLocal.stop(), () => gcs.stop(), () => azurite.stop(), async () => await bigtableEmulator?.stop());
    // DynamoDB keeps a table's tags (given in CreateTable, atomically): DynamoDB Local does not, the proxy in front of it does.
    const dynamodb = await startDynamoDbProxy({ target: dynamodbLocal.endpoint });
    stops.push(() => dynamodb.stop());
    const targets: Record<CloudDialectName, string> = {
      s3: s3.endpoint,
      dynamodb: dynamodb.endpoint,
      gcs: gcs.endpoint,
      'azure-blob': azurite.blobEndpoint,
      'azure-table': azurite.tableEndpoint,
    };
    const proxies = {} as FaultyClouds['proxies'];
    let offset = 0;
    for (const [dialect, target] of Object.entries(targets) as Array<[CloudDialectName, string]>) {
      const proxy = await startFaultProxy({ target, dialect, seed: (seed + offset++) >>> 0 });
      proxies[dialect] = proxy;
      stops.push(() => proxy.stop());
    }
    let bigtable: Bigtable | undefined;
    if (bigtableEmulator) {
      const proxy = await startGrpcFaultProxy({ target: bigtableEmulator.host, seed: (seed + offset++) >>> 0 });
      proxies.bigtable = proxy;
      stops.push(() => proxy.stop());
      const client = new Bigtable({ projectId: GCP_PROJECT, apiEndpoint: bigtableEmulator.host, universeDomain: 'googleapis.com', metricsEnabled: false });
      bigtable = client;
      stops.push(() => client.close());
    }

    const s3Client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: FAULT_RUN_AWS_CREDENTIALS });
    const dynamodbClient = new DynamoDBClient({ endpoint: dynamodb.endpoint, region: 'us-east-1', credentials: FAULT_RUN_AWS_CREDENTIALS });
    const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey));
    const tables = new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true });
    const sasToken = accountSasToken(azurite);
    const notFound = (error: unknown): boolean => {
      const e = error as { name?: string; statusCode?: number; $metadata?: { httpStatusCode?: number }; code?: unknown; metadata?: unknown };
      // gRPC NOT_FOUND (5) as the Bigtable client reports it: a code and the call's metadata
      if (e.code === 5 && e.metadata !== undefined) return true;
      return e.name === 'NotFound' || e.name === 'NoSuchBucket' || e.name === 'ResourceNotFoundException' || e.statusCode === 404 || e.$metadata?.httpStatusCode === 404;
    };

    const inCloud: FaultyClouds['inCloud'] = async (cloud, kind, name) => {
      try {
        if (cloud === 'aws' && kind === 'Bucket') {
          await s3Client.send(new HeadBucketCommand({ Bucket: name }));
          return { exists: true, versioning: (await s3Client.send(new GetBucketVersioningCommand({ Bucket: name }))).Status === 'Enabled' };
        }
        if (cloud === 'aws') return { exists: (await dynamodbClient.send(new DescribeTableCommand({ TableName: name }))).Table !== undefined };
        if (cloud === 'gcp' && kind === 'Table') {
          if (!bigtable) throw new Error('Bigtable is not part of this run (its emulator is not installed)');
          const [table] = await bigtable.admin.getTableAdminClient().getTable({ name: `projects/${GCP_PROJECT}/instances/${BIGTABLE_INSTANCE}/tables/${name}` }, { retry: null });
          return { exists: table.name !== undefined };
        }
        if (cloud === 'gcp') {
          const response = await fetch(`${gcs.endpoint}/storage/v1/b/${encodeURIComponent(name)}`);
          if (response.status === 404) return { exists: false };
          if (!response.ok) throw new Error(`GCS fake answered ${response.status} for ${name}`);
          return { exists: true, versioning: ((await response.json()) as { versioning?: { enabled?: boolean } }).versioning?.enabled === true };
        }
        if (kind === 'Bucket') return { exists: await blobs.getContainerClient(name).exists() };
        for await (const table of tables.listTables({ queryOptions: { filter: `TableName eq '${name}'` } })) if (table.name === name) return { exists: true };
        return { exists: false };
      } catch (error) {
        if (notFound(error)) return { exists: false };
        throw error;
      }
    };

    return {
      proxies,
      azurite,
      setFaults: (plan) => Object.values(proxies).forEach((proxy) => proxy.setFaults(plan)),
      calls: () => (Object.entries(proxies) as Array<[ProxiedApi, FaultProxy]>).flatMap(([dialect, proxy]) => proxy.calls.map((call) => ({ ...call, dialect }))),
      manifests: (namespace, rateLimits = {}) => [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'faulty-aws-credentials', namespace }, type: 'Opaque', stringData: FAULT_RUN_AWS_CREDENTIALS },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'faulty-azure-credentials', namespace }, type: 'Opaque', stringData: { accountKey: azurite.accountKey } },
        {
          apiVersion: 'k8or.io/v1alpha1',
          kind: 'ProviderConfig',
          metadata: { name: PROVIDER_CONFIGS.aws },
          spec: {
            provider: 'aws',
            region: 'us-east-1',
            endpoints: { bucket: proxies.s3.endpoint, table: proxies.dynamodb.endpoint },
            ...(rateLimits.aws ? { rateLimits: rateLimits.aws } : {}),
            credentials: { source: 'Secret', secretRef: { namespace, name: 'faulty-aws-credentials' } },
          },
        },
        {
          apiVersion: 'k8or.io/v1alpha1',
          kind: 'ProviderConfig',
          metadata: { name: PROVIDER_CONFIGS.gcp },
          spec: {
            provider: 'gcp',
            project: GCP_PROJECT,
            region: 'us-central1',
            ...(proxies.bigtable ? { bigtableInstance: BIGTABLE_INSTANCE } : {}),
            endpoints: { bucket: proxies.gcs.endpoint, ...(proxies.bigtable ? { table: proxies.bigtable.endpoint } : {}) },
            credentials: { source: 'Environment' },
            ...(rateLimits.gcp ? { rateLimits: rateLimits.gcp } : {}),
          },
        },
        {
          apiVersion: 'k8or.io/v1alpha1',
          kind: 'ProviderConfig',
          metadata: { name: PROVIDER_CONFIGS.azure },
          spec: {
            provider: 'azure',
            storageAccount: azurite.accountName,
            endpoints: { bucket: proxies['azure-blob'].endpoint, table: proxies['azure-table'].endpoint },
            ...(rateLimits.azure ? { rateLimits: rateLimits.azure } : {}),
            credentials: { source: 'Secret', secretRef: { namespace, name: 'faulty-azure-credentials' } },
          },
        },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'faulty-azure-sas', namespace }, type: 'Opaque', stringData: { sasToken } },
        {
          apiVersion: 'k8or.io/v1alpha1',
          kind: 'ProviderConfig',
          metadata: { name: AZURE_SAS_PROVIDER_CONFIG },
          spec: {
            provider: 'azure',
            storageAccount: azurite.accountName,
            endpoints: { bucket: proxies['azure-blob'].endpoint, table: proxies['azure-table'].endpoint },
            ...(rateLimits.azure ? { rateLimits: rateLimits.azure } : {}),
            credentials: { source: 'Secret', secretRef: { namespace, name: 'faulty-azure-sas' } },
          },
        },
      ],
      inCloud,
      // the SAS signature is the secret part of the token
      secrets: [FAULT_RUN_AWS_CREDENTIALS.secretAccessKey, azurite.accountKey, new URLSearchParams(sasToken).get('sig')!],
      stop: async () => {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop();
    throw error;
  }
}

/** An account SAS of Azurite's account for four hours, Blob and Table, every permission: a credential that travels in every request URL. */
export function accountSasToken(azurite: Pick<Azurite, 'accountName' | 'accountKey'>): string {
  return generateAccountSASQueryParameters(
    {
      expiresOn: new Date(Date.now() + 4 * 3_600_000),
      permissions: AccountSASPermissions.parse('rwdlacup'),
      resourceTypes: AccountSASResourceTypes.parse('sco').toString(),
      services: AccountSASServices.parse('bt').toString(),
      protocol: SASProtocol.HttpsAndHttp,
    },
    new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey),
  ).toString();
}

/** The most calls within any window of `windowMs` (a sliding window over the arrival times). */
export function peakCalls(calls: readonly Pick<ProxiedCall, 'at'>[], windowMs: number): number {
  const times = calls.map((c) => c.at).sort((a, b) => a - b);
  let peak = 0;
  for (let start = 0, end = 0; end < times.length; end++) {
    while ((times[end] ?? 0) - (times[start] ?? 0) >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}
