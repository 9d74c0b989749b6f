// The arrangement for end-to-end tests through the engine: the sandbox API server with k8or's CRDs,
// Azurite (Blob and Table), ProviderConfigs and Secrets pointing at it, and the engine running the
// Azure provider plugin.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, allCrds, type Bucket, type Condition, type ManagedResource, type Table } from '@k8or/api';
import { Engine, KubeRest, corePath, k8orPath } from '@k8or/core';
import { waitFor as pollUntil } from '@k8or/core/testing';
import { azureProvider, clearAzureClients } from '@k8or/provider-azure';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { startFaultProxy, type FaultProxy } from './support.ts';

export const NAMESPACE = 'team-a';
export const SECRETS_NAMESPACE = 'k8or-system';

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

export class AzureWorld {
  readonly kubeConfig = new KubeConfig();
  readonly user: KubeRest;
  engine: Engine | undefined;

  readonly sandbox: Sandbox;
  readonly azurite: Azurite;
  /** In front of Azurite's Blob service, for the `busy` ProviderConfig. */
  readonly busyBlob: FaultProxy;

  private constructor(sandbox: Sandbox, azurite: Azurite, busyBlob: FaultProxy) {
    this.sandbox = sandbox;
    this.azurite = azurite;
    this.busyBlob = busyBlob;
    this.kubeConfig.loadFromString(sandbox.kubeconfig);
    this.user = new KubeRest(this.kubeConfig, { userAgent: 'e2e-user' });
  }

  static async start(): Promise<AzureWorld> {
    const [sandbox, azurite] = await Promise.all([startSandbox(), startAzurite()]);
    const world = new AzureWorld(sandbox, azurite, await startFaultProxy(azurite.blobEndpoint));
    for (const crd of allCrds()) await world.user.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await waitFor('CRDs served', async () => (await world.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [NAMESPACE, SECRETS_NAMESPACE]) {
      await world.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
    const keys = { ours: azurite.accountKey, denied: base64('not-the-account-key') };
    for (const [name, accountKey] of Object.entries(keys)) {
      await world.user.create(corePath('secrets', SECRETS_NAMESPACE), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `azure-${name}` },
        type: 'Opaque',
        data: { accountKey: base64(accountKey) },
      });
    }
    const providerConfigs = { default: ['ours', azurite.blobEndpoint], denied: ['denied', azurite.blobEndpoint], busy: ['ours', world.busyBlob.endpoint] } as const;
    for (const [name, [secret, blobEndpoint]] of Object.entries(providerConfigs)) {
      await world.user.create(k8orPath('ProviderConfig', undefined), {
        apiVersion: API_VERSION,
        kind: 'ProviderConfig',
        metadata: { name },
        spec: {
          provider: 'azure',
          storageAccount: azurite.accountName,
          endpoints: { bucket: blobEndpoint, table: azurite.tableEndpoint },
          credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: `azure-${secret}` } },
        },
      });
    }
    return world;
  }

  /** Runs the engine with the Azure provider plugin, with quick test timings. */
  async startEngine(): Promise<Engine> {
    this.engine = new Engine({
      kubeConfig: this.kubeConfig,
      providers: new Map([['azure', azureProvider]]),
      clusterId: 'e2e-cluster',
      workers: 4,
      pollIntervalMs: 200,
      deletionBlockedRetryMs: 300,
      shutdownDeadlineMs: 5_000,
      // Sub-second k8or.io/resync-period annotations in these tests; production's floor is 10 s.
      resyncFloorMs: 100,
      operatorNamespace: SECRETS_NAMESPACE,
    });
    await this.engine.start();
    return this.engine;
  }

  async stop(): Promise<void> {
    await this.engine?.stop();
    this.user.close();
    clearAzureClients();
    await this.busyBlob.close();
    await Promise.all([this.sandbox.stop(), this.azurite.stop()]);
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
