// The arrangement for a provider's end-to-end tests through the engine: the embedded API server with
// k8or's CRDs and the users' and operator's namespaces, Secrets and ProviderConfigs a provider's world
// points at its local backends, and the engine running that provider's plugin with quick test timings.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, allCrds, type Bucket, type ProviderConfig, type Table } from '@k8or/api';
import { Engine, KubeRest, corePath, k8orPath, type EngineOptions } from '@k8or/core';
import type { Sandbox } from '@k8or/apiserver';
import { NAMESPACE, SECRETS_NAMESPACE, base64, waitFor, type KubeEvent } from './resources.js';

/** The engine's options a provider's world chooses; the rest are the harness's quick timings. */
export type WorldEngineOptions = Pick<EngineOptions, 'providers'> & Partial<Omit<EngineOptions, 'kubeConfig'>>;

/**
 * A provider's test world: subclass it with the provider's backends, call `arrange()` once the
 * sandbox is up, then add its Secrets and ProviderConfigs.
 */
export class ProviderWorld {
  readonly kubeConfig = new KubeConfig();
  readonly user: KubeRest;
  readonly sandbox: Sandbox;
  engine: Engine | undefined;

  protected constructor(sandbox: Sandbox) {
    this.sandbox = sandbox;
    this.kubeConfig.loadFromString(sandbox.kubeconfig);
    this.user = new KubeRest(this.kubeConfig, { userAgent: 'e2e-user' });
  }

  /** k8or's CRDs, served, and the users' and the operator's namespaces. */
  protected async arrange(): Promise<void> {
    for (const crd of allCrds()) await this.user.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await waitFor('CRDs served', async () => (await this.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [NAMESPACE, SECRETS_NAMESPACE]) await this.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }

  /** A Secret in the operator's namespace (values as text). */
  async createSecret(name: string, data: Record<string, string>): Promise<void> {
    await this.user.create(corePath('secrets', SECRETS_NAMESPACE), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name },
      type: 'Opaque',
      data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, base64(value)])),
    });
  }

  async createProviderConfig(name: string, spec: ProviderConfig['spec']): Promise<void> {
    await this.user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name }, spec });
  }

  /** Runs the engine with the world's provider plugin, with quick test timings. */
  protected async runEngine(options: WorldEngineOptions): Promise<Engine> {
    this.engine = new Engine({
      kubeConfig: this.kubeConfig,
      clusterId: 'e2e-cluster',
      workers: 4,
      pollIntervalMs: 200,
      deletionBlockedRetryMs: 300,
      shutdownDeadlineMs: 5_000,
      ...options,
    });
    await this.engine.start();
    return this.engine;
  }

  /** Stops the engine and the user's client; the subclass stops its backends and the sandbox. */
  protected async stopEngine(): Promise<void> {
    await this.engine?.stop();
    this.user.close();
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
