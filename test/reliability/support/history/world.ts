// The world a history runs in: the reliability cluster (API server, chart, every backend behind a
// recording proxy, the operator as a process), a fault proxy of @k8or/local-clouds in front of each
// recording proxy (faults before the effect: the call never reaches the backend), the recording proxies'
// own after-effect 5xx, the ProviderConfigs the user moves objects between, someone else's hands on
// every backend, and the operator supervised (SIGKILL, restart) with leader election on (lease loss):
// one replica, or N shards (`shards`), each a replica named as its Pod would be, holding its shard
// Lease, the one holding the leader election Lease assigning the objects.
import { generateKeyPairSync } from 'node:crypto';
import { startFaultProxy, startGrpcFaultProxy, type CloudDialectName, type FaultProxy, type GrpcProxiedCall } from '@k8or/local-clouds';
import { SANDBOX_CREDENTIALS } from '../../../support/backends.ts';
import { runOk } from '../../../support/run.ts';
import { applyProviderConfigs, GCP_PROJECT, NAMESPACE, startReliabilityCluster, type Manifest, type ReliabilityCluster } from '../cluster.ts';
import type { CloudCall, CloudProxy, ProxiedApi } from '../cloud-proxy.ts';
import { accountSasToken } from '../faulty-clouds.ts';
import { supervise, type Supervisor } from '../supervisor.ts';
import { foreignHands, type ForeignHands } from './foreign.ts';

/** The Bigtable instances of the run: the first is the GCP ProviderConfigs' own; a move or a ProviderConfig edit points a Table at the second. */
export const BIGTABLE_INSTANCES = ['k8or-history', 'k8or-history-b'] as const;

/**
 * The ProviderConfigs objects use and move between, by cloud and kind: [where most start, the other].
 * GCS buckets start on one with the operator's service account (so another project's bucket is 403),
 * and may move to the anonymous one of the same project (the Bigtable emulator takes no credentials).
 * The second of AWS and of GCP Tables is the one a user retargets (region, Bigtable instance).
 */
export const HISTORY_PROVIDER_CONFIGS: Readonly<Record<string, readonly [string, string]>> = {
  'aws/Bucket': ['history-aws', 'history-aws-west'],
  'aws/Table': ['history-aws', 'history-aws-west'],
  'gcp/Bucket': ['history-gcs', 'history-gcp'],
  'gcp/Table': ['history-gcp', 'history-gcp-b'],
  'azure/Bucket': ['history-azure', 'history-azure-sas'],
  'azure/Table': ['history-azure', 'history-azure-sas'],
};
/** The ProviderConfig a user retargets, per cloud. */
export const RETARGETED = { aws: 'history-aws-west', gcp: 'history-gcp-b' } as const;
/** The GCP ProviderConfigs with Bigtable, and the instance each starts on. */
export const BIGTABLE_PROVIDER_CONFIGS = { 'history-gcp': 0, 'history-gcp-b': 1 } as const;

/** The place of each HTTP API's resources (Bigtable's place is its instance's). */
export const PLACE_OF_API: Partial<Record<ProxiedApi, string>> = { s3: 'aws/Bucket', dynamodb: 'aws/Table', gcs: 'gcp/Bucket', 'azure-blob': 'azure/Bucket', 'azure-table': 'azure/Table' };

/** The operator's settings for a history: drift looked at every 10 s, a reconcile deadline the stalls outlast. */
export const OPERATOR_ENV = { K8OR_RESYNC_PERIOD: '10s', K8OR_MIN_RESYNC_PERIOD: '10s', K8OR_RECONCILE_TIMEOUT: '8s' } as const;
/** How long a stalled call is held: past the reconcile deadline. */
export const STALL_MS = 12_000;

export interface HistoryWorld {
  cluster: ReliabilityCluster;
  /** The fault proxy in front of each API's recording proxy (the operator's endpoint); Bigtable's of its first instance. */
  faults: Partial<Record<ProxiedApi, FaultProxy>>;
  /** Every fault proxy of an API (Bigtable has one per instance). */
  faultProxiesOf(api: ProxiedApi): FaultProxy[];
  /** Bigtable's fault proxy of each instance, so every Bigtable call is known by its instance. */
  bigtableProxies: Map<string, FaultProxy>;
  others: ForeignHands;
  /** The operator's replicas, each supervised (one, unless sharded). */
  operators: Supervisor[];
  /** Sharded: each replica's shard name (its Lease's), in the order of `operators`; empty when not. */
  shards: string[];
  /** Every cloud call the operator made, by API and place: the recording proxies' (HTTP), the fault proxies' (Bigtable, one per instance). */
  calls(): Array<CloudCall & { api: ProxiedApi; place: string }>;
  /** The recording proxies (HTTP APIs), where a 5xx after the effect is armed. */
  recording: Partial<Record<ProxiedApi, CloudProxy>>;
  /** Credential values no status, Event, log or ConfigMap may hold. */
  secrets: string[];
  /**
   * Every line of every replica's output, as it comes (the process helper keeps only the tail): each
   * chunk with the end of the one before it, so nothing split between two chunks is missed.
   */
  onLog(listener: (replica: string, text: string) => void): void;
  /** The ProviderConfig manifests as the run applied them (a user's edit changes them). */
  providerConfigs: Map<string, Manifest>;
  stop(): Promise<void>;
}

/** The operator's GCP service account: it acts in the run's project only, so another project's bucket answers it 403. */
const GCP_OPERATOR = 'k8or-operator@k8or-reliability.iam.gserviceaccount.com';

export interface HistoryWorldOptions {
  /** Run the operator as this many shards (more than 1), each its own replica; default one replica, unsharded. */
  shards?: number;
}

/** A shard's name: as a Deployment Pod's, it stays the same when the kubelet restarts its container. */
const shardName = (index: number): string => `k8or-shard-${index}`;

export async function startHistoryWorld(seed: number, options: HistoryWorldOptions = {}): Promise<HistoryWorld> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const gcpKey = { type: 'service_account', project_id: GCP_PROJECT, client_email: GCP_OPERATOR, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  const sharded = (options.shards ?? 1) > 1;
  const cluster = await startReliabilityCluster({
    // sharded: the chart as a user installs it for sharding (its RBAC for the shard Leases)
    ...(sharded ? { chartValues: { 'sharding.enabled': 'true', replicaCount: String(options.shards) } } : {}),
    gcsServiceAccounts: { [GCP_OPERATOR]: { project: GCP_PROJECT, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() } },
  });
  const stops: Array<() => Promise<unknown>> = [() => cluster.stop()];
  try {
    const faults: HistoryWorld['faults'] = {};
    let offset = 0;
    for (const [dialect, recording] of Object.entries(cluster.proxies) as Array<[ProxiedApi, { endpoint: string }]>) {
      if (dialect === 'bigtable') continue;
      const proxy = await startFaultProxy({ target: recording.endpoint, dialect: dialect as CloudDialectName, seed: (seed + offset++) >>> 0 });
      faults[dialect] = proxy;
      stops.push(() => proxy.stop());
    }
    // Bigtable's gRPC fault proxies go straight to the emulator (one h2c proxy in front of another
    // resets the streams), one per instance (a ProviderConfig names both, and a retarget changes both),
    // and their own call logs are the record of the operator's Bigtable calls, each call by its instance
    const bigtableHost = cluster.backends.bigtable;
    const bigtableProxies = new Map<string, FaultProxy>();
    if (bigtableHost) {
      for (const instance of BIGTABLE_INSTANCES) {
        const proxy = await startGrpcFaultProxy({ target: bigtableHost, seed: (seed + offset++) >>> 0 });
        bigtableProxies.set(instance, proxy);
        stops.push(() => proxy.stop());
      }
      faults.bigtable = bigtableProxies.get(BIGTABLE_INSTANCES[0]);
    }
    const { azurite } = cluster.backends;
    const sasToken = accountSasToken(azurite);
    const endpoint = (api: ProxiedApi): string => {
      const proxy = faults[api];
      if (!proxy) throw new Error(`no fault proxy in front of ${api}`);
      return proxy.endpoint;
    };
    const secretRef = (name: string): Record<string, unknown> => ({ source: 'Secret', secretRef: { namespace: NAMESPACE, name } });
    const pc = (name: string, spec: Record<string, unknown>): Manifest => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec });
    const aws = (name: string, region: string): Manifest =>
      pc(name, { provider: 'aws', region, endpoints: { bucket: endpoint('s3'), table: endpoint('dynamodb') }, credentials: secretRef('aws-credentials') });
    const gcp = (name: string, instance: string): Manifest =>
      pc(name, {
        provider: 'gcp',
        project: GCP_PROJECT,
        region: 'us-central1',
        ...(faults.bigtable ? { bigtableInstance: instance } : {}),
        endpoints: { bucket: endpoint('gcs'), ...(faults.bigtable ? { table: bigtableProxies.get(instance)!.endpoint } : {}) },
        credentials: { source: 'Environment' },
      });
    const gcs = (name: string): Manifest => pc(name, { provider: 'gcp', project: GCP_PROJECT, region: 'us-central1', endpoints: { bucket: endpoint('gcs') }, credentials: secretRef('gcp-credentials') });
    const azure = (name: string, secret: string): Manifest =>
      pc(name, { provider: 'azure', storageAccount: azurite.accountName, endpoints: { bucket: endpoint('azure-blob'), table: endpoint('azure-table') }, credentials: secretRef(secret) });
    const manifests: Manifest[] = [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'azure-sas', namespace: NAMESPACE }, type: 'Opaque', stringData: { sasToken } } as Manifest,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gcp-credentials', namespace: NAMESPACE }, type: 'Opaque', stringData: { 'credentials.json': JSON.stringify(gcpKey) } } as Manifest,
      aws('history-aws', 'us-east-1'),
      aws('history-aws-west', 'us-west-2'),
      gcs('history-gcs'),
      ...Object.entries(BIGTABLE_PROVIDER_CONFIGS).map(([name, instance]) => gcp(name, BIGTABLE_INSTANCES[instance])),
      azure('history-azure', 'azure-credentials'),
      azure('history-azure-sas', 'azure-sas'),
    ];

    const shards = sharded ? Array.from({ length: options.shards ?? 1 }, (_, i) => shardName(i)) : [];
    const operators: Supervisor[] = [];
    for (const shard of shards.length > 0 ? shards : [undefined]) {
      const operator = await supervise(cluster, { env: { ...OPERATOR_ENV, ...(shard ? { K8OR_SHARD_NAME: shard } : {}) } });
      operators.push(operator);
      stops.push(async () => operator.stop());
    }
    for (const operator of operators) await cluster.waitReady(operator.current());
    await applyProviderConfigs(cluster);
    await runOk(cluster.tools.kubectl, ['apply', '-f', '-'], manifests.map((m) => JSON.stringify(m)).join('\n'));

    const others = foreignHands(cluster.backends, GCP_PROJECT, faults.bigtable ? BIGTABLE_INSTANCES : []);
    stops.push(() => others.close());
    const { bigtable: _grpcRecording, ...recording } = cluster.proxies;
    const logListeners: Array<(replica: string, text: string) => void> = [];
    const tapped = new Set<string>();
    const tap = (): void => {
      for (const replica of cluster.replicas) {
        if (tapped.has(replica.name)) continue;
        tapped.add(replica.name);
        let tail = '';
        const hear = (chunk: Buffer): void => {
          const text = tail + chunk.toString('utf8');
          tail = text.slice(-512);
          for (const listener of logListeners) listener(replica.name, text);
        };
        replica.process.child.stdout?.on('data', hear);
        replica.process.child.stderr?.on('data', hear);
      }
    };
    tap();
    // a replica the supervisor starts after a kill is tapped within a moment of its start
    const tapping = setInterval(tap, 100);
    stops.push(async () => clearInterval(tapping));
    return {
      cluster,
      faults,
      recording,
      bigtableProxies,
      faultProxiesOf: (api) => (api === 'bigtable' ? [...bigtableProxies.values()] : faults[api] ? [faults[api]] : []),
      onLog: (listener) => logListeners.push(listener),
      calls: () => [
        ...(Object.entries(recording) as Array<[ProxiedApi, CloudProxy]>).flatMap(([api, proxy]) => proxy.calls.map((call) => ({ ...call, api, place: PLACE_OF_API[api] ?? api }))),
        ...[...bigtableProxies].flatMap(([instance, proxy]) =>
          proxy.calls.map((call) => {
            const grpc = call as GrpcProxiedCall;
            const ok = grpc.grpcStatus === 0;
            return { operation: grpc.operation, resource: grpc.resource || undefined, answer: grpc.grpcStatus === undefined ? '' : `grpc-status ${grpc.grpcStatus}`, ok, sentAt: grpc.at, answeredAt: grpc.at, api: 'bigtable' as const, place: `gcp/Table@${instance}` };
          }),
        ),
      ],
      others,
      operators,
      shards,
      // (a private key's text by its shape too: the checker looks for PEM headers)
      secrets: [SANDBOX_CREDENTIALS.secretAccessKey, azurite.accountKey, new URLSearchParams(sasToken).get('sig') ?? sasToken, gcpKey.private_key.split('\n')[1] ?? gcpKey.private_key],
      providerConfigs: new Map(manifests.filter((m) => m.kind === 'ProviderConfig').map((m) => [m.metadata.name, m])),
      stop: async () => {
        for (const stop of stops.reverse()) await stop().catch(() => undefined);
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}
