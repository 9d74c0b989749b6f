// The arrangement for end-to-end tests through the engine: the sandbox API server with k8or's CRDs,
// the S3 fake and DynamoDB Local, ProviderConfigs and Secrets pointing at them, and the engine
// running the AWS provider plugin.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, allCrds, type Bucket, type Condition, type ManagedResource, type Table } from '@k8or/api';
import { Engine, KubeRest, corePath, k8orPath, type EngineOptions } from '@k8or/core';
import { waitFor as pollUntil } from '@k8or/core/testing';
import { awsProvider, destroyDynamoDbClients, destroyS3Clients } from '@k8or/provider-aws';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startDynamoDbLocal, startS3Fake, type DynamoDbLocal, type S3Fake } from '@k8or/local-clouds';

export const NAMESPACE = 'team-a';
export const SECRETS_NAMESPACE = 'k8or-system';
/**
 * Access keys, each with its Secret and a ProviderConfig of its name (`ours` is `default`): ours, one
 * every S3 request of which is denied, one that S3 throttles on demand, and one a test revokes.
 */
export const KEYS = { ours: 'AKIAK8ORE2E000000001', denied: 'AKIAK8ORDENIED000001', throttled: 'AKIAK8ORTHROTTLED001', revocable: 'AKIAK8ORREVOCABLE001' } as const;
export const SECRET_KEY = 'e2e-secret';
/** Another AWS account, for names taken by someone else. */
export const OTHER_ACCOUNT = { accessKeyId: 'AKIASOMEONEELSE00001', secretAccessKey: 'someone-else-secret' } as const;

export interface KubeEvent {
  involvedObject: { kind: string; name: string };
  type: string;
  reason: string;
  message: string;
}

/** Polls `check` until it returns a truthy value (every 50 ms, 60 s at most). */
export const waitFor = <T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> => pollUntil(what, check, timeoutMs, 50);

export const conditionOf = (resource: ManagedResource | undefined, type: string): Condition | undefined =>
  resource?.status?.conditions?.find((c) => c.type === type);

/** Ready and Synced for the current generation. */
export const isReady = (resource: ManagedResource | undefined): boolean =>
  conditionOf(resource, 'Ready')?.status === 'True' &&
  conditionOf(resource, 'Synced')?.status === 'True' &&
  resource?.status?.observedGeneration === resource?.metadata.generation;

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export class AwsWorld {
  readonly kubeConfig = new KubeConfig();
  readonly user: KubeRest;
  engine: Engine | undefined;

  readonly sandbox: Sandbox;
  readonly s3: S3Fake;
  readonly dynamodb: DynamoDbLocal;

  private constructor(sandbox: Sandbox, s3: S3Fake, dynamodb: DynamoDbLocal) {
    this.sandbox = sandbox;
    this.s3 = s3;
    this.dynamodb = dynamodb;
    this.kubeConfig.loadFromString(sandbox.kubeconfig);
    this.user = new KubeRest(this.kubeConfig, { userAgent: 'e2e-user' });
  }

  static async start(): Promise<AwsWorld> {
    const [sandbox, s3, dynamodb] = await Promise.all([startSandbox(), startS3Fake({
        deniedAccessKeys: [KEYS.denied],
        // The revocable key is a second key of our own account (another IAM user, say).
        accounts: { [KEYS.ours]: 'k8or-e2e-account', [KEYS.revocable]: 'k8or-e2e-account' },
        // Signatures are verified: the engine must hand the provider the Secret's keys.
        credentials: { ...Object.fromEntries(Object.values(KEYS).map((key) => [key, SECRET_KEY])), [OTHER_ACCOUNT.accessKeyId]: OTHER_ACCOUNT.secretAccessKey },
      }), startDynamoDbLocal()]);
    const world = new AwsWorld(sandbox, s3, dynamodb);
    for (const crd of allCrds()) await world.user.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await waitFor('CRDs served', async () => (await world.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [NAMESPACE, SECRETS_NAMESPACE]) {
      await world.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    for (const [name, accessKeyId] of Object.entries(KEYS)) {
      await world.user.create(corePath('secrets', SECRETS_NAMESPACE), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `aws-${name}` },
        type: 'Opaque',
        data: { accessKeyId: base64(accessKeyId), secretAccessKey: base64(SECRET_KEY) },
      });
      await world.user.create(k8orPath('ProviderConfig', undefined), {
        apiVersion: API_VERSION,
        kind: 'ProviderConfig',
        metadata: { name: name === 'ours' ? 'default' : name },
        spec: {
          provider: 'aws',
          region: 'us-east-1',
          endpoints: { bucket: s3.endpoint, table: dynamodb.endpoint },
          credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: `aws-${name}` } },
        },
      });
    }
    return world;
  }

  /** Runs the engine with the AWS provider plugin, with quick test timings. */
  async startEngine(options: Partial<EngineOptions> = {}): Promise<Engine> {
    this.engine = new Engine({
      kubeConfig: this.kubeConfig,
      providers: new Map([['aws', awsProvider]]),
      clusterId: 'e2e-cluster',
      workers: 4,
      pollIntervalMs: 200,
      deletionBlockedRetryMs: 300,
      // Sub-second k8or.io/resync-period annotations in these tests; production's floor is 10 s.
      resyncFloorMs: 100,
      shutdownDeadlineMs: 5_000,
      operatorNamespace: SECRETS_NAMESPACE,
      ...options,
    });
    await this.engine.start();
    return this.engine;
  }

  async stop(): Promise<void> {
    await this.engine?.stop();
    this.user.close();
    destroyS3Clients();
    destroyDynamoDbClients();
    await Promise.all([this.sandbox.stop(), this.s3.stop(), this.dynamodb.stop()]);
  }

  async createBucket(name: string, spec: Partial<Bucket['spec']>, annotations: Record<string, string> = {}): Promise<Bucket> {
    return await this.user.create<Bucket>(k8orPath('Bucket', NAMESPACE), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: NAMESPACE, annotations }, spec });
  }

  async createTable(name: string, spec: Partial<Table['spec']>, annotations: Record<string, string> = {}): Promise<Table> {
    return await this.user.create<Table>(k8orPath('Table', NAMESPACE), {
      apiVersion: API_VERSION,
      kind: 'Table',
      metadata: { name, namespace: NAMESPACE, annotations },
      spec: { partitionKey: { name: 'id', type: 'string' }, ...spec },
    });
  }

  bucket = (name: string): Promise<Bucket | undefined> => this.user.get<Bucket>(k8orPath('Bucket', NAMESPACE, name));
  table = (name: string): Promise<Table | undefined> => this.user.get<Table>(k8orPath('Table', NAMESPACE, name));
  patchBucket = (name: string, patch: unknown): Promise<Bucket> => this.user.patch<Bucket>(k8orPath('Bucket', NAMESPACE, name), patch);
  patchTable = (name: string, patch: unknown): Promise<Table> => this.user.patch<Table>(k8orPath('Table', NAMESPACE, name), patch);
  deleteBucket = (name: string): Promise<void> => this.user.delete(k8orPath('Bucket', NAMESPACE, name));
  deleteTable = (name: string): Promise<void> => this.user.delete(k8orPath('Table', NAMESPACE, name));

  async waitForBucket(name: string, what: string, check: (bucket: Bucket) => boolean): Promise<Bucket> {
    return await waitFor(`Bucket ${name}: ${what}`, async () => {
      const bucket = await this.bucket(name);
      return bucket && check(bucket) ? bucket : undefined;
    });
  }

  async waitForTable(name: string, what: string, check: (table: Table) => boolean): Promise<Table> {
    return await waitFor(`Table ${name}: ${what}`, async () => {
      const table = await this.table(name);
      return table && check(table) ? table : undefined;
    });
  }

  async events(objectName: string): Promise<KubeEvent[]> {
    const list = await this.user.get<{ items: KubeEvent[] }>(corePath('events', NAMESPACE));
    return (list?.items ?? []).filter((e) => e.involvedObject.name === objectName);
  }
}
