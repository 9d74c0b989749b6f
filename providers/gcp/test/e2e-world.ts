// The arrangement for end-to-end tests through the engine: the embedded API server with k8or's CRDs,
// the GCS fake and the Bigtable emulator, a ProviderConfig and a Secret (a service-account key) pointing
// at them, and the engine running the GCP provider plugin.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, allCrds, type Bucket, type Condition, type ManagedResource, type Table } from '@k8or/api';
import { Engine, KubeRest, corePath, k8orPath } from '@k8or/core';
import { waitFor as pollUntil } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startBigtableEmulator, startGcsFake, type BigtableEmulator, type GcsFake } from '@k8or/local-clouds';
import { destroyBigtableClients, destroyStorageClients, gcpProvider } from '@k8or/provider-gcp';
import { INSTANCE, PROJECT, serviceAccountKey } from './support.ts';

export const NAMESPACE = 'team-a';
export const SECRETS_NAMESPACE = 'k8or-system';
export const OPERATOR = serviceAccountKey('k8or-operator@k8or-test-project.iam.gserviceaccount.com');

export interface KubeEvent {
  involvedObject: { kind: string; name: string };
  type: string;
  reason: string;
  message: string;
}

/** Polls `check` until it returns a truthy value (every 50 ms, 60 s at most). */
export const waitFor = <T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000): Promise<NonNullable<T>> => pollUntil(what, check, timeoutMs, 50);

export const conditionOf = (resource: ManagedResource | undefined, type: string): Condition | undefined => resource?.status?.conditions?.find((c) => c.type === type);

/** Ready and Synced for the current generation. */
export const isReady = (resource: ManagedResource | undefined): boolean =>
  conditionOf(resource, 'Ready')?.status === 'True' && conditionOf(resource, 'Synced')?.status === 'True' && resource?.status?.observedGeneration === resource?.metadata.generation;

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export class GcpWorld {
  readonly kubeConfig = new KubeConfig();
  readonly user: KubeRest;
  engine: Engine | undefined;

  readonly sandbox: Sandbox;
  readonly gcs: GcsFake;
  readonly bigtable: BigtableEmulator | undefined;

  private constructor(sandbox: Sandbox, gcs: GcsFake, bigtable: BigtableEmulator | undefined) {
    this.sandbox = sandbox;
    this.gcs = gcs;
    this.bigtable = bigtable;
    this.kubeConfig.loadFromString(sandbox.kubeconfig);
    this.user = new KubeRest(this.kubeConfig, { userAgent: 'e2e-user' });
  }

  /** Starts everything; without the Bigtable emulator (`withBigtable: false`) only Buckets work. */
  static async start(withBigtable: boolean): Promise<GcpWorld> {
    const [sandbox, gcs, bigtable] = await Promise.all([
      startSandbox(),
      // The fake checks the JWTs the operator's service-account key signs: the engine must hand over the Secret.
      startGcsFake({ serviceAccounts: { [OPERATOR.key['client_email'] as string]: { project: PROJECT, publicKeyPem: OPERATOR.publicKeyPem } } }),
      withBigtable ? startBigtableEmulator() : Promise.resolve(undefined),
    ]);
    const world = new GcpWorld(sandbox, gcs, bigtable);
    for (const crd of allCrds()) await world.user.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await waitFor('CRDs served', async () => (await world.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [NAMESPACE, SECRETS_NAMESPACE]) await world.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await world.user.create(corePath('secrets', SECRETS_NAMESPACE), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'gcp-operator' },
      type: 'Opaque',
      data: { 'credentials.json': base64(OPERATOR.json) },
    });
    await world.user.create(k8orPath('ProviderConfig', undefined), {
      apiVersion: API_VERSION,
      kind: 'ProviderConfig',
      metadata: { name: 'default' },
      spec: {
        provider: 'gcp',
        project: PROJECT,
        region: 'europe-west1',
        bigtableInstance: INSTANCE,
        endpoints: { bucket: gcs.endpoint, ...(bigtable ? { table: `http://${bigtable.host}` } : {}) },
        credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: 'gcp-operator' } },
      },
    });
    return world;
  }

  /** Runs the engine with the GCP provider plugin, with quick test timings. */
  async startEngine(): Promise<Engine> {
    this.engine = new Engine({
      kubeConfig: this.kubeConfig,
      providers: new Map([['gcp', gcpProvider]]),
      clusterId: 'e2e-cluster',
      workers: 4,
      pollIntervalMs: 200,
      deletionBlockedRetryMs: 300,
      shutdownDeadlineMs: 5_000,
    });
    await this.engine.start();
    return this.engine;
  }

  async stop(): Promise<void> {
    await this.engine?.stop();
    this.user.close();
    await Promise.all([destroyStorageClients(), destroyBigtableClients()]);
    await Promise.all([this.sandbox.stop(), this.gcs.stop(), this.bigtable?.stop()]);
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
