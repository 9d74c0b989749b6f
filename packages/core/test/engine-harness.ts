// Shared arrangement for the engine tests: a sandbox API server with k8or's
// CRDs, a client acting as the user, an in-memory cloud, and engines to start
// and stop (or kill) against them.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type Bucket, type Condition, type ManagedResource, type ProviderConfig, type Table } from '@k8or/api';
import { Engine, KubeRest, ShardAssigner, corePath, installCrds, k8orPath, type EngineOptions, type ProviderPlugin } from '@k8or/core';
import { InMemoryCloud, waitFor, inMemoryProviderPlugin, type InMemoryCloudOptions } from '@k8or/core/testing';
import { startSandbox, type RequestLogEntry, type Sandbox } from '@k8or/apiserver';

export const USER_AGENT = 'k8or-test-user';
export const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export interface KubeEvent {
  metadata: { name: string; namespace: string };
  involvedObject: { kind: string; name: string; uid?: string };
  type: string;
  reason: string;
  message: string;
  count?: number;
}

export interface ConfigMap {
  metadata: { name: string; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  data?: Record<string, string>;
}

export { waitFor };

export function condition(resource: ManagedResource | undefined, type: string): Condition | undefined {
  return resource?.status?.conditions?.find((c) => c.type === type);
}

export function isReadyAndSynced(resource: ManagedResource | undefined): boolean {
  return (
    condition(resource, 'Ready')?.status === 'True' &&
    condition(resource, 'Synced')?.status === 'True' &&
    resource?.status?.observedGeneration === resource?.metadata.generation
  );
}

export class World {
  readonly sandbox: Sandbox;
  readonly kubeConfig: KubeConfig;
  /** The user's client (its requests are told apart from the engine's by user agent). */
  readonly user: KubeRest;
  readonly cloud: InMemoryCloud;
  readonly engines: Engine[] = [];
  #namespaces = 0;

  private constructor(sandbox: Sandbox, cloudOptions: InMemoryCloudOptions) {
    this.sandbox = sandbox;
    this.cloud = new InMemoryCloud(cloudOptions);
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromString(sandbox.kubeconfig);
    this.user = new KubeRest(this.kubeConfig, { userAgent: USER_AGENT });
  }

  /** A sandbox with the CRDs applied (as plain JSON, schemas whole) and a `default` ProviderConfig for the in-memory cloud. */
  static async start(cloudOptions: InMemoryCloudOptions = {}): Promise<World> {
    const world = new World(await startSandbox({ recordRequests: true }), cloudOptions);
    await installCrds(world.kubeConfig);
    await waitFor('CRDs served', async () => (await world.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    await world.createProviderConfig('default');
    return world;
  }

  async stop(): Promise<void> {
    await Promise.all(this.engines.map((engine) => engine.stop()));
    this.user.close();
    await this.sandbox.stop();
  }

  /** Starts an engine over the in-memory cloud with quick test timings (options override). */
  async startEngine(options: Partial<EngineOptions> = {}): Promise<Engine> {
    const engine = new Engine({
      kubeConfig: this.kubeConfig,
      providers: new Map([['aws', inMemoryProviderPlugin(this.cloud)]]),
      clusterId: 'test-cluster',
      workers: 4,
      pollIntervalMs: 200,
      deletionBlockedRetryMs: 500,
      eventAggregationIntervalMs: 60_000,
      shutdownDeadlineMs: 5_000,
      operatorNamespace: 'k8or-system',
      // Quick resyncs for tests; the floor has its own test.
      resyncFloorMs: 100,
      ...options,
    });
    this.engines.push(engine);
    await engine.start();
    return engine;
  }

  /** Creates the namespace unless it exists. */
  async ensureNamespace(name: string): Promise<void> {
    if (await this.user.get(corePath('namespaces', undefined, name))) return;
    await this.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).catch(() => undefined);
  }

  async newNamespace(annotations: Record<string, string> = {}): Promise<string> {
    const name = `team-${++this.#namespaces}`;
    await this.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations } });
    return name;
  }

  async createProviderConfig(name: string, spec: Partial<ProviderConfig['spec']> = {}): Promise<void> {
    await this.user.create(k8orPath('ProviderConfig', undefined), {
      apiVersion: API_VERSION,
      kind: 'ProviderConfig',
      metadata: { name },
      spec: { provider: 'aws', region: 'mem-west-1', ...spec },
    });
  }

  async createBucket(namespace: string, name: string, spec: Partial<Bucket['spec']> = {}, annotations: Record<string, string> = {}): Promise<Bucket> {
    return await this.user.create<Bucket>(k8orPath('Bucket', namespace), {
      apiVersion: API_VERSION,
      kind: 'Bucket',
      metadata: { name, namespace, annotations },
      spec,
    });
  }

  async createTable(namespace: string, name: string, spec: Partial<Table['spec']> = {}): Promise<Table> {
    return await this.user.create<Table>(k8orPath('Table', namespace), {
      apiVersion: API_VERSION,
      kind: 'Table',
      metadata: { name, namespace },
      spec: { partitionKey: { name: 'id', type: 'string' }, ...spec },
    });
  }

  async bucket(namespace: string, name: string): Promise<Bucket | undefined> {
    return await this.user.get<Bucket>(k8orPath('Bucket', namespace, name));
  }

  async table(namespace: string, name: string): Promise<Table | undefined> {
    return await this.user.get<Table>(k8orPath('Table', namespace, name));
  }

  /** Merge-patches a Bucket as a user would with `kubectl patch --type merge`. */
  async patchBucket(namespace: string, name: string, patch: unknown): Promise<Bucket> {
    return await this.user.patch<Bucket>(k8orPath('Bucket', namespace, name), patch);
  }

  async deleteBucket(namespace: string, name: string): Promise<void> {
    await this.user.delete(k8orPath('Bucket', namespace, name));
  }

  async waitForBucket(namespace: string, name: string, what: string, check: (bucket: Bucket) => boolean): Promise<Bucket> {
    return await waitFor(`${namespace}/${name}: ${what}`, async () => {
      const bucket = await this.bucket(namespace, name);
      return bucket && check(bucket) ? bucket : undefined;
    });
  }

  async waitForBucketGone(namespace: string, name: string): Promise<void> {
    await waitFor(`${namespace}/${name} gone`, async () => (await this.bucket(namespace, name)) === undefined);
  }

  async events(namespace: string, objectName?: string): Promise<KubeEvent[]> {
    const list = await this.user.get<{ items: KubeEvent[] }>(corePath('events', namespace));
    return (list?.items ?? []).filter((e) => objectName === undefined || e.involvedObject.name === objectName);
  }

  async configMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    return await this.user.get<ConfigMap>(corePath('configmaps', namespace, name));
  }

  /** Requests since `from` (an index into the request log) that the engine (not the test's user client) made. */
  engineRequests(from = 0): RequestLogEntry[] {
    return this.sandbox.requestLog.slice(from).filter((entry) => entry.userAgent !== USER_AGENT);
  }

  /** Writes (create/update/patch/delete) the engine made since `from`, as `verb resource[/sub] name`. */
  engineWrites(from = 0): string[] {
    return this.engineRequests(from)
      .filter((entry) => WRITE_VERBS.has(entry.verb))
      .map((entry) => `${entry.verb} ${entry.resource}${entry.subresource ? `/${entry.subresource}` : ''} ${entry.name ?? ''}`.trim());
  }
}

/** The shard Leases' settings of the sharded engine tests: short, so a hand-off takes seconds. */
export const SHARD_RING = { namespace: 'k8or-system', ring: 'k8or', leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 } as const;

/** The namespace of the shard Leases, and an assigner (not started) over the world's Buckets and Tables. */
export async function shardAssigner(world: World, plugin: ProviderPlugin = inMemoryProviderPlugin(world.cloud)): Promise<ShardAssigner> {
  await world.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SHARD_RING.namespace } });
  return new ShardAssigner({ kubeConfig: world.kubeConfig, namespace: SHARD_RING.namespace, ring: SHARD_RING.ring, providers: new Map([['aws', plugin]]), clusterId: 'test-cluster' });
}
