// A sharded fleet, for the sharding suite and bench/sharding.bench.ts: the embedded API server, the
// S3 fake and DynamoDB Local (behind its proxy), two AWS ProviderConfigs, each reaching the backends
// through recording proxies of its own (so the backends' side counts each ProviderConfig's calls
// apart), and operator replicas as separate processes (`k8or operator`), each the shard of its own
// name. Each replica's AWS SDK names it in its User-Agent (`AWS_SDK_UA_APP_ID`), so every cloud call
// the proxies record carries the replica and, by its bucket or table, the object: the trace that
// shows whether two replicas ever worked one object at once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { KubeRest, corePath, createInformer, installCrds, isConflict, k8orPath, type Informer } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startDynamoDbLocal, startDynamoDbProxy, startS3Fake } from '@k8or/local-clouds';
import { SANDBOX_CREDENTIALS } from '../../support/backends.ts';
import { operatorObjectWrites, startSandboxProcess, type OperatorObjectWrites, type SandboxProcess } from '../../support/sandbox-process.ts';
import { k8orBinary, probeReady, startOperatorProcess, type OperatorProcess } from '../../support/operator-process.ts';
import { classifierOf, startCloudProxy, type CloudCall, type CloudProxy } from './cloud-proxy.ts';
import { IMAGE_SETTINGS } from './image-settings.ts';
import { kernelFigures } from './memory-probe.ts';

export const OPERATOR_NAMESPACE = 'k8or-system';
/** The namespace of the fleet's Buckets and Tables. */
export const OBJECT_NAMESPACE = 'fleet';
export const PROVIDER_CONFIGS = ['fleet-a', 'fleet-b'] as const;
export type FleetProviderConfig = (typeof PROVIDER_CONFIGS)[number];
export const FLEET_SERVICES = ['s3', 'dynamodb'] as const;
export type FleetService = (typeof FLEET_SERVICES)[number];
export type FleetKind = 'Bucket' | 'Table';
/** The rate-limit key (ProviderConfig spec.rateLimits) of each service's calls. */
export const RATE_LIMIT_KEY: Record<FleetService, string> = { s3: 's3-buckets', dynamodb: 'dynamodb-control-plane' };
/** The shard label and drain label of each kind (docs/sharding.md). */
export const SHARD_LABEL: Record<FleetKind, string> = { Bucket: 'shard.k8or.io/bucket', Table: 'shard.k8or.io/table' };
export const DRAIN_LABEL: Record<FleetKind, string> = { Bucket: 'drain.k8or.io/bucket', Table: 'drain.k8or.io/table' };
/** The Lease whose holder assigns objects to shards (the leader election Lease). */
export const LEADER_LEASE = 'k8or-operator';

export interface RateLimit {
  requestsPerSecond: number;
  burst: number;
}

export interface FleetOptions {
  /** Each ProviderConfig's spec.rateLimits, by service; the provider's defaults where unset. */
  rateLimits?: Partial<Record<FleetService, RateLimit>>;
  /** K8OR_WORKERS of every replica. */
  workers?: number;
  /** K8OR_LOG_LEVEL of every replica (default `error`). */
  logLevel?: string;
  /**
   * Run every replica with the image's memory settings (the Dockerfile's `node` flags and malloc
   * environment), as a Pod of the chart runs; default true.
   */
  imageSettings?: boolean;
  /** Keep the S3 fake's state in a folder (`Fleet.s3DataDir`), so a benchmark can seed buckets there (`Fleet.restartS3`). */
  keepS3State?: boolean;
  /** Run the API server in a process of its own, as a real one is, rather than on this process's thread beside the fakes and proxies. */
  apiServerProcess?: boolean;
  /** K8OR_SHARD_TAKEOVER of every replica (the operator's default where unset). */
  shardTakeover?: 'relabel' | 'adopt';
  /** Each ProviderConfig's spec.driftCheckBudget; none where unset. */
  driftCheckBudget?: { callsPerHour: number } | { rateLimitPercent: number };
}

/** The API server the fleet runs against, in this process or a child one. */
type FleetApiServer = Pick<SandboxProcess, 'kubeconfig' | 'requestCount' | 'operatorWritesSince' | 'stop'> & { pid?: number };

/** The embedded API server on this process's thread, as a FleetApiServer. */
function inline(sandbox: Sandbox): FleetApiServer {
  return {
    kubeconfig: sandbox.kubeconfig,
    requestCount: () => Promise.resolve(sandbox.requestLog.length),
    operatorWritesSince: (from) => Promise.resolve(operatorObjectWrites(sandbox.requestLog.slice(from))),
    stop: () => sandbox.stop(),
  };
}

/** The Dockerfile's `node` flags and malloc settings (docs/benchmarks.md, "Operator process at scale"). */
export const IMAGE_NODE_FLAGS: readonly string[] = IMAGE_SETTINGS.nodeFlags;
export const IMAGE_ENV: Readonly<Record<string, string>> = IMAGE_SETTINGS.env;

/** One cloud call as a proxy recorded it, with the ProviderConfig and service whose proxy it went through. */
export interface FleetCall extends CloudCall {
  providerConfig: FleetProviderConfig;
  service: FleetService;
}

/** One operator process, as one Pod of a sharded Deployment. */
export interface FleetReplica {
  name: string;
  process: OperatorProcess;
  pid: number;
  exited: boolean;
}

/** A Bucket or Table as the API server holds it: its shard, and whether it is done. */
export interface ObjectState {
  kind: FleetKind;
  name: string;
  providerConfig: string;
  shard: string | undefined;
  draining: boolean;
  generation: number;
  /** Ready and Synced for its current generation. */
  ready: boolean;
  /** Ready and Synced for `observedGeneration`, which may be older than its generation. */
  readyAndSynced: boolean;
  observedGeneration: number;
}

export interface Fleet {
  home: string;
  /** The API server's admin kubeconfig. */
  kubeconfig: string;
  /** The API server's process, with `apiServerProcess`; undefined when it runs in this one. */
  apiServerPid: number | undefined;
  /** What the API server logged of the requests it served. */
  requests: {
    count(): Promise<number>;
    /** The operator's writes to Buckets and Tables from request `from` on. */
    operatorWritesSince(from: number): Promise<OperatorObjectWrites>;
  };
  admin: KubeRest;
  proxies: Record<FleetProviderConfig, Record<FleetService, CloudProxy>>;
  replicas: Map<string, FleetReplica>;
  /** The S3 fake's state folder, with `keepS3State`. */
  s3DataDir: string | undefined;
  /** Stops the S3 fake, runs `meanwhile` (which may write `s3DataDir`), and starts the fake again on its port. */
  restartS3(meanwhile?: () => Promise<void>): Promise<void>;
  /** DynamoDB as clients reach it but not through the recording proxies: for seeding, uncounted. */
  dynamodbEndpoint: string;
  /** Starts `k8or operator` as the shard `name` and waits until it answers its readiness probe. */
  startReplica(name: string): Promise<FleetReplica>;
  /** SIGKILL, as the kubelet kills a container, and waits until the process is gone. */
  kill(name: string): Promise<void>;
  /** SIGTERM (a Pod deleted): the replica finishes, releases its Lease and exits. */
  stopReplica(name: string): Promise<void>;
  /** Every cloud call so far, through every proxy. */
  calls(): FleetCall[];
  /** Last lines of every replica's output, for a failure's message. */
  output(chars?: number): string;
  stop(): Promise<void>;
}

export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const binary = k8orBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const home = await mkdtemp(join(tmpdir(), 'k8or-shard-fleet-'));
  const stops: Array<() => Promise<unknown>> = [];
  const replicas = new Map<string, FleetReplica>();
  try {
    const kubeconfigPath = join(home, 'kubeconfig');
    const sandbox = options.apiServerProcess ? await startSandboxProcess({ kubeconfigPath, recordRequests: true }) : inline(await startSandbox({ kubeconfigPath, logLevel: 'error', recordRequests: true }));
    stops.push(() => sandbox.stop());
    const s3DataDir = options.keepS3State ? join(home, 's3') : undefined;
    const [firstS3, dynamodbLocal] = await Promise.all([startS3Fake(s3DataDir ? { dataDir: s3DataDir } : {}), startDynamoDbLocal()]);
    let s3 = firstS3;
    stops.push(() => s3.stop(), () => dynamodbLocal.stop());
    // DynamoDB as every client reaches it: through the proxy that keeps tags and continuous backups
    // (it checks no signatures: the recording proxy in front rewrites the Host header the SDK signed).
    const dynamodb = await startDynamoDbProxy({ target: dynamodbLocal.endpoint });
    stops.push(() => dynamodb.stop());
    const proxies = {} as Fleet['proxies'];
    for (const providerConfig of PROVIDER_CONFIGS) {
      const s3Proxy = await startCloudProxy(s3.endpoint, classifierOf('s3'));
      const dynamodbProxy = await startCloudProxy(dynamodb.endpoint, classifierOf('dynamodb'));
      stops.push(() => s3Proxy.stop(), () => dynamodbProxy.stop());
      proxies[providerConfig] = { s3: s3Proxy, dynamodb: dynamodbProxy };
    }

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    const admin = new KubeRest(kubeConfig, { userAgent: 'shard-fleet-user' });
    stops.push(async () => admin.close());
    await installCrds(kubeConfig);
    await waitFor('the CRDs served', async () => (await admin.get(k8orPath('ProviderConfig', undefined))) !== undefined, 60_000, 100);
    for (const name of [OPERATOR_NAMESPACE, OBJECT_NAMESPACE]) await admin.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await admin.create(corePath('secrets', OPERATOR_NAMESPACE), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials', namespace: OPERATOR_NAMESPACE }, type: 'Opaque', stringData: SANDBOX_CREDENTIALS });
    const rateLimits = Object.fromEntries(Object.entries(options.rateLimits ?? {}).map(([service, limit]) => [RATE_LIMIT_KEY[service as FleetService], limit]));
    for (const providerConfig of PROVIDER_CONFIGS) {
      await admin.create(k8orPath('ProviderConfig', undefined), {
        apiVersion: 'k8or.io/v1alpha1',
        kind: 'ProviderConfig',
        metadata: { name: providerConfig },
        spec: {
          provider: 'aws',
          region: 'us-east-1',
          endpoints: { bucket: proxies[providerConfig].s3.endpoint, table: proxies[providerConfig].dynamodb.endpoint },
          credentials: { source: 'Secret', secretRef: { namespace: OPERATOR_NAMESPACE, name: 'aws-credentials' } },
          ...(Object.keys(rateLimits).length > 0 ? { rateLimits } : {}),
          ...(options.driftCheckBudget ? { driftCheckBudget: options.driftCheckBudget } : {}),
        },
      });
    }

    const fleet: Fleet = {
      home,
      kubeconfig: sandbox.kubeconfig,
      apiServerPid: sandbox.pid,
      requests: { count: () => sandbox.requestCount(), operatorWritesSince: (from) => sandbox.operatorWritesSince(from) },
      admin,
      proxies,
      replicas,
      s3DataDir,
      restartS3: async (meanwhile) => {
        const port = Number(new URL(s3.endpoint).port);
        await s3.stop();
        await meanwhile?.();
        s3 = await startS3Fake({ ...(s3DataDir ? { dataDir: s3DataDir } : {}), port });
      },
      dynamodbEndpoint: dynamodb.endpoint,
      startReplica: async (name) => {
        const process = await startOperatorProcess({
          bin: binary.path,
          kubeconfigPath,
          args: ['operator'],
          webhookPort: 0,
          // a graceful stop drains the reconciles in flight and releases the Lease: give it time on a loaded machine
          stopGraceMs: 60_000,
          ...(options.imageSettings === false ? {} : { nodeFlags: IMAGE_NODE_FLAGS }),
          env: {
            ...(options.imageSettings === false ? {} : IMAGE_ENV),
            K8OR_PROVIDERS: 'aws',
            K8OR_CLUSTER_ID: 'fleet',
            K8OR_LEADER_ELECT: 'true',
            K8OR_LEADER_ELECTION_NAMESPACE: OPERATOR_NAMESPACE,
            K8OR_SHARD_NAME: name,
            K8OR_LOG_LEVEL: options.logLevel ?? 'error',
            ...(options.workers !== undefined ? { K8OR_WORKERS: String(options.workers) } : {}),
            ...(options.shardTakeover !== undefined ? { K8OR_SHARD_TAKEOVER: options.shardTakeover } : {}),
            // the replica's name in every AWS SDK call's User-Agent (`app/<name>`): the trace's caller
            AWS_SDK_UA_APP_ID: name,
          },
        });
        const replica: FleetReplica = { name, process, pid: await process.child.pid, exited: false };
        replicas.set(name, replica);
        try {
          await waitFor(`${name} ready`, () => probeReady(process.probes), 180_000, 250);
        } catch (error) {
          throw new Error(`${String(error)}\n${process.output().slice(-5000)}`);
        }
        return replica;
      },
      kill: async (name) => {
        const replica = replicaNamed(replicas, name);
        // the operator itself, not the guardian between us
        globalThis.process.kill(replica.pid, 'SIGKILL');
        await replica.process.child.exited;
        replica.exited = true;
      },
      stopReplica: async (name) => {
        const replica = replicaNamed(replicas, name);
        await replica.process.stop();
        replica.exited = true;
      },
      calls: () =>
        PROVIDER_CONFIGS.flatMap((providerConfig) => FLEET_SERVICES.flatMap((service) => proxies[providerConfig][service].calls.map((call) => ({ ...call, providerConfig, service })))),
      output: (chars = 3000) => [...replicas.values()].map((r) => `--- ${r.name}${r.exited ? ' (gone)' : ''}:\n${r.process.output().slice(-chars)}`).join('\n'),
      stop: async () => {
        await Promise.all([...replicas.values()].filter((r) => !r.exited).map((r) => r.process.stop().catch(() => undefined)));
        for (const stop of stops.reverse()) await stop().catch(() => undefined);
        await rm(home, { recursive: true, force: true });
      },
    };
    return fleet;
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

function replicaNamed(replicas: Map<string, FleetReplica>, name: string): FleetReplica {
  const replica = replicas.get(name);
  if (!replica) throw new Error(`no replica ${name}`);
  return replica;
}

// --- the objects ----------------------------------------------------------------------------------

/** The cloud name of a fleet object: the bucket or table its calls name. */
export const externalNameOf = (kind: FleetKind, name: string): string => `k8or-fleet-${name}`;

/** `count` objects: Buckets `b-<i>` and Tables `t-<i>` (a share `tableShare` of them, half by default), on the two ProviderConfigs in turn. */
export function fleetObjects(count: number, tableShare = 0.5): Array<{ kind: FleetKind; name: string; providerConfig: FleetProviderConfig }> {
  const buckets = count - Math.floor(count * tableShare);
  return Array.from({ length: count }, (_, i) => {
    const kind: FleetKind = i < buckets ? 'Bucket' : 'Table';
    const index = kind === 'Bucket' ? i : i - buckets;
    return { kind, name: `${kind === 'Bucket' ? 'b' : 't'}-${index}`, providerConfig: PROVIDER_CONFIGS[index % 2]! };
  });
}

/**
 * The CRDs served, the fleet's Namespaces and its two ProviderConfigs (aws, no endpoints, no
 * credentials): what a bench that runs core's assigner or the webhook's caches alone, with no
 * cloud behind them, starts from.
 */
export async function prepareFleetApi(admin: KubeRest, kubeConfig: KubeConfig): Promise<void> {
  await installCrds(kubeConfig);
  await waitFor('the CRDs served', async () => (await admin.get(k8orPath('ProviderConfig', undefined)).catch(() => undefined)) !== undefined, 60_000, 100);
  for (const name of [OPERATOR_NAMESPACE, OBJECT_NAMESPACE]) await admin.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const name of PROVIDER_CONFIGS) {
    await admin.create(k8orPath('ProviderConfig', undefined), { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec: { provider: 'aws', region: 'us-east-1' } });
  }
}

/** The object as a user applies it; `revision` is a label that reaches the cloud's tags (an edit to reconcile). */
export function fleetManifest(object: { kind: FleetKind; name: string; providerConfig: FleetProviderConfig }, revision = '0'): Record<string, unknown> {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: object.kind,
    metadata: { name: object.name, namespace: OBJECT_NAMESPACE },
    spec: {
      name: externalNameOf(object.kind, object.name),
      providerConfigRef: { name: object.providerConfig },
      labels: { revision },
      ...(object.kind === 'Table' ? { partitionKey: { name: 'id', type: 'string' } } : {}),
    },
  };
}

/** Runs `task` over `items`, `parallel` at a time; a connection reset under load is tried again. */
export async function inBatches<T>(items: readonly T[], task: (item: T) => Promise<unknown>, parallel = 50): Promise<void> {
  for (let i = 0; i < items.length; i += parallel) await Promise.all(items.slice(i, i + parallel).map((item) => retried(() => task(item))));
}

async function retried<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (attempt >= 5 || isConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/** Creates the objects as a user would (an object that already exists is left as it is). */
export async function createObjects(admin: KubeRest, objects: ReturnType<typeof fleetObjects>): Promise<void> {
  await inBatches(objects, async (object) => {
    try {
      await admin.create(k8orPath(object.kind, OBJECT_NAMESPACE), fleetManifest(object));
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  });
}

/** A user's edit of one object (a new `revision` label); the generation it made. */
export async function editObject(admin: KubeRest, object: { kind: FleetKind; name: string }, revision: string): Promise<number> {
  const edited = await retried(() => admin.patch<{ metadata: { generation?: number } }>(k8orPath(object.kind, OBJECT_NAMESPACE, object.name), { spec: { labels: { revision } } }));
  return edited.metadata.generation ?? 0;
}

/** A user's edit of every object named: a new `revision` label, which the cloud's tags must follow. */
export async function editObjects(admin: KubeRest, objects: ReadonlyArray<{ kind: FleetKind; name: string }>, revision: string): Promise<void> {
  await inBatches(objects, (object) => admin.patch(k8orPath(object.kind, OBJECT_NAMESPACE, object.name), { spec: { labels: { revision } } }));
}

interface Listed {
  metadata: { name: string; generation?: number; labels?: Record<string, string> };
  spec?: { providerConfigRef?: { name?: string } };
  status?: { observedGeneration?: number; conditions?: Array<{ type: string; status: string }> };
}

function stateOf(kind: FleetKind, item: Listed): ObjectState {
  const generation = item.metadata.generation ?? 0;
  const condition = (type: string) => item.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;
  return {
    kind,
    name: item.metadata.name,
    providerConfig: item.spec?.providerConfigRef?.name ?? '',
    shard: item.metadata.labels?.[SHARD_LABEL[kind]],
    draining: item.metadata.labels?.[DRAIN_LABEL[kind]] !== undefined,
    generation,
    ready: condition('Ready') && condition('Synced') && item.status?.observedGeneration === generation,
    readyAndSynced: condition('Ready') && condition('Synced'),
    observedGeneration: item.status?.observedGeneration ?? 0,
  };
}

/** Every fleet Bucket and Table as the API server holds it now. */
export async function objectStates(admin: KubeRest): Promise<ObjectState[]> {
  const states: ObjectState[] = [];
  for (const kind of ['Bucket', 'Table'] as const) {
    const items = (await admin.get<{ items: Listed[] }>(k8orPath(kind, OBJECT_NAMESPACE)))?.items ?? [];
    for (const item of items) states.push(stateOf(kind, item));
  }
  return states;
}

/** One fleet object as the API server holds it now (undefined: gone). */
export async function objectState(admin: KubeRest, kind: FleetKind, name: string): Promise<ObjectState | undefined> {
  const item = await admin.get<Listed>(k8orPath(kind, OBJECT_NAMESPACE, name));
  return item === undefined ? undefined : stateOf(kind, item);
}

/** What `ObjectStatesWatch` keeps of an object: its state, under the metadata its informer reads. */
interface WatchedState {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  state: ObjectState;
}

/**
 * The fleet's Buckets and Tables as watches deliver them: `objectStates` without a list per look,
 * for a benchmark that looks every second at 100,000 objects.
 */
export class ObjectStatesWatch {
  readonly #informers: Informer<WatchedState>[];

  constructor(kubeconfig: string) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(kubeconfig);
    this.#informers = (['Bucket', 'Table'] as const).map((kind) =>
      createInformer<WatchedState>({
        kubeConfig,
        group: 'k8or.io',
        version: 'v1alpha1',
        plural: kind === 'Bucket' ? 'buckets' : 'tables',
        namespace: OBJECT_NAMESPACE,
        transform: (object) => {
          const item = object as unknown as Listed & { metadata: { namespace?: string; resourceVersion?: string } };
          return { metadata: { name: item.metadata.name, namespace: item.metadata.namespace, resourceVersion: item.metadata.resourceVersion }, state: stateOf(kind, item) } as WatchedState;
        },
      }),
    );
  }

  async start(): Promise<void> {
    await Promise.all(this.#informers.map((informer) => informer.start()));
  }

  /** Every object's state as last delivered. */
  states(): ObjectState[] {
    return this.#informers.flatMap((informer) => informer.cache.list().map((watched) => watched.state));
  }

  /** One object's state as last delivered: a look-up, where `states()` copies every object's. */
  state(kind: FleetKind, name: string): ObjectState | undefined {
    return this.#informers[kind === 'Bucket' ? 0 : 1]!.cache.get(`${OBJECT_NAMESPACE}/${name}`)?.state;
  }

  /** Whether any object is labelled for `shard`, without copying the states. */
  /** How many objects are labelled for `shard`. */
  countOn(shard: string): number {
    let count = 0;
    for (const informer of this.#informers) for (const watched of informer.cache.list()) if (watched.state.shard === shard) count++;
    return count;
  }

  stop(): void {
    for (const informer of this.#informers) informer.stop();
  }
}

/** `kind/name` -> the shard it is labelled for (undefined: none yet). */
export function assignmentOf(states: readonly ObjectState[]): Map<string, string | undefined> {
  return new Map(states.map((s) => [`${s.kind}/${s.name}`, s.shard]));
}

/** The replica holding the leader election Lease (its assigner identity is `<shard>-<suffix>`). */
export async function leaderShard(admin: KubeRest, shards: readonly string[]): Promise<string | undefined> {
  const lease = await admin.get<{ spec?: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${OPERATOR_NAMESPACE}/leases/${LEADER_LEASE}`);
  const holder = lease?.spec?.holderIdentity ?? '';
  return shards.find((shard) => holder.startsWith(`${shard}-`));
}

// --- the replica, measured from outside -----------------------------------------------------------

export interface ReplicaStats {
  /** Resident set size now (VmRSS), bytes. */
  rss: number;
  /** controller_runtime_reconcile_total, every result, both controllers. */
  reconciles: number;
  /** workqueue_depth of both queues. */
  queueDepth: number;
  /** controller_runtime_active_workers of both controllers. */
  activeWorkers: number;
}

export async function replicaStats(replica: FleetReplica): Promise<ReplicaStats> {
  const { rss } = await kernelFigures(replica.pid);
  const metrics = await replicaMetrics(replica);
  const sum = (name: string) => metrics.sum(name, (line) => /(controller|name)="(bucket|table)"/.test(line));
  return { rss, reconciles: sum('controller_runtime_reconcile_total'), queueDepth: sum('workqueue_depth'), activeWorkers: sum('controller_runtime_active_workers') };
}

/** What the shard assigner on `replica` has done, from its metrics (zeros where it never led). */
export async function assignerCounts(replica: FleetReplica): Promise<{ passes: number; labelChanges: number }> {
  const metrics = await replicaMetrics(replica);
  return { passes: metrics.sum('k8or_shard_assignment_passes_total'), labelChanges: metrics.sum('k8or_shard_label_changes_total') };
}

/** The replica's metrics now: `sum(name, picks?)` adds the values of every series of `name` (those `picks` picks by their line). */
async function replicaMetrics(replica: FleetReplica): Promise<{ sum(name: string, picks?: (line: string) => boolean): number }> {
  const lines = (await (await fetch(`${replica.process.metrics}/metrics`)).text()).split('\n');
  return {
    sum: (name, picks = () => true) => {
      let total = 0;
      for (const line of lines) if (line.startsWith(`${name}{`) && picks(line)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
      return total;
    },
  };
}

// --- the trace ------------------------------------------------------------------------------------

const WRITE_METHODS = new Set(['PUT', 'POST', 'DELETE', 'PATCH']);
const DYNAMODB_READS = /^(Describe|List|Get)/;

/** A call that asked the cloud to change something (S3: PUT/POST/DELETE; DynamoDB: all but Describe/List/Get). */
export function isCloudWrite(call: FleetCall): boolean {
  return call.service === 's3' ? WRITE_METHODS.has(call.operation.split(' ')[0] ?? '') : !DYNAMODB_READS.test(call.operation);
}

/**
 * Pairs of calls on one cloud resource by two replicas whose intervals overlap (arrival at the
 * proxy to the backend's answer; a call still unanswered lasts until now). Empty: no object was
 * ever worked by two replicas at once.
 */
export function overlappingCalls(calls: readonly FleetCall[]): string[] {
  const byResource = new Map<string, FleetCall[]>();
  for (const call of calls) {
    if (call.resource === undefined || call.caller === undefined) continue;
    byResource.set(call.resource, [...(byResource.get(call.resource) ?? []), call]);
  }
  const found: string[] = [];
  const end = (call: FleetCall) => (call.answeredAt === 0 ? Number.POSITIVE_INFINITY : call.answeredAt);
  for (const [resource, list] of byResource) {
    list.sort((a, b) => a.sentAt - b.sentAt);
    // the latest-ending call so far of each replica: a call overlaps another replica's if it starts before that one ended
    const lastEnd = new Map<string, FleetCall>();
    for (const call of list) {
      for (const [caller, other] of lastEnd) {
        if (caller !== call.caller && end(other) > call.sentAt) {
          found.push(`${resource}: ${other.caller} ${other.operation} [${other.sentAt}, ${other.answeredAt || 'unanswered'}] overlaps ${call.caller} ${call.operation} [${call.sentAt}, ${call.answeredAt || 'unanswered'}]`);
        }
      }
      const previous = lastEnd.get(call.caller!);
      if (!previous || end(call) > end(previous)) lastEnd.set(call.caller!, call);
    }
  }
  return found;
}

/** The window of `windowMs` in which the most calls arrived (sliding over arrival times): how many, and the first arrival in it. */
export function busiestWindow(arrivals: readonly number[], windowMs: number): { most: number; from: number | undefined } {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  let from: number | undefined;
  let start = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[start]! >= windowMs) start++;
    if (i - start + 1 > most) {
      most = i - start + 1;
      from = sorted[start];
    }
  }
  return { most, from };
}

