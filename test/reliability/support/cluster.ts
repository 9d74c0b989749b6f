// One cluster for the fault runs: the embedded API server, the chart installed with real Helm (so the
// operator runs with exactly the chart's RBAC, under a token of its ServiceAccount), the S3 fake,
// DynamoDB Local (behind its proxy: tags), the GCS fake, Azurite and (where installed) the Bigtable emulator, each behind a
// recording proxy (the gRPC one for Bigtable), a ProviderConfig per cloud
// pointing at them, and any number of operator processes (replicas) started, killed and restarted.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startSandbox, type Sandbox, type SandboxOptions } from '@k8or/apiserver';
import { KubeRest } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { CLOUD_DIALECTS, findCbtemulator, startAzurite, startBigtableEmulator, startDynamoDbLocal, startDynamoDbProxy, startGcsFake, startS3Fake, type Azurite, type BigtableEmulator, type CloudDialectName, type GcsServiceAccount } from '@k8or/local-clouds';
import { SANDBOX_CREDENTIALS } from '../../support/backends.ts';
import { chartWorkloads, serviceAccountToken, type Container } from '../../support/chart-deployment.ts';
import { freePort, k8orBinary, probeReady, startOperatorProcess, type OperatorProcess } from '../../support/operator-process.ts';
import { runOk } from '../../support/run.ts';
import { CHART_DIR, tools, type Tools } from '../../support/tools.ts';
import { classifierOf, startCloudProxy, startGrpcCloudProxy, type CloudProxy } from './cloud-proxy.ts';
import { PROVIDER_CONFIG_OF } from './resources.ts';
import { stores, type Stores } from './stores/index.ts';

export const NAMESPACE = 'k8or-system';
export const RELEASE = 'k8or';
/** A namespace for a suite's own objects (each fault phase makes one of its own). */
export const USER_NAMESPACE = 'apps';
/** The GCP project of the run's buckets, and the Bigtable instance of its tables. */
export const GCP_PROJECT = 'k8or-reliability';
export const BIGTABLE_INSTANCE = 'k8or-reliability';
/** The user the API server knows the operator as (the chart's ServiceAccount). */
export const OPERATOR_USER = `system:serviceaccount:${NAMESPACE}:${RELEASE}`;

/** Why Bigtable's tables sit out the runs (cbtemulator is not installed), or undefined when they take part. */
export function bigtableLeftOut(): string | undefined {
  const located = findCbtemulator();
  return 'missing' in located ? located.missing : undefined;
}

/** Why the suites cannot run here, or undefined when they can. */
export function missingOperator(): string | undefined {
  const binary = k8orBinary();
  return 'missing' in binary ? binary.missing : undefined;
}

export interface ReplicaOptions {
  /** Overrides of the chart's container env (e.g. `K8OR_LEADER_ELECT: 'false'` for a single replica). */
  env?: Record<string, string>;
}

/** One operator process, as one Pod of the chart's Deployment. */
export interface Replica {
  name: string;
  process: OperatorProcess;
  webhookPort: number;
  /** The operator's log lines, parsed. */
  logs(): Array<Record<string, unknown>>;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  exited: boolean;
}

export interface ReliabilityCluster {
  home: string;
  sandbox: Sandbox;
  tools: Tools;
  /** The admin's client (a user's kubectl), never faulted. */
  admin: KubeRest;
  /** The operator's endpoint of each cloud API: a recording proxy in front of its backend (Bigtable's only where its emulator is installed). */
  proxies: Proxies;
  /** The suite's own view of each backend, straight, never through a proxy. */
  stores: Stores;
  /** The backends themselves (behind the proxies), for a suite's own clients that act as someone other than the operator. */
  backends: Backends;
  /** The Secrets and ProviderConfigs pointing the operator at the proxies. */
  providerConfigs: Manifest[];
  /** The chart's container env, as the Deployment has it. */
  chartEnv: Record<string, string>;
  /** Start one more replica (its webhook becomes the one the webhook Service routes to if none is up). */
  startReplica(options?: ReplicaOptions): Promise<Replica>;
  replicas: Replica[];
  /** Route the chart's webhook Service to this replica (as if it were its only ready endpoint). */
  routeWebhookTo(replica: Replica): void;
  /** Stop every live replica as a rollout would (SIGTERM: a leader releases its Lease). */
  stopReplicas(): Promise<void>;
  /** Wait until a replica serves /readyz. */
  waitReady(replica: Replica): Promise<void>;
  /** The last lines of every replica's output, for failure messages. */
  operatorOutput(chars?: number): string;
  stop(): Promise<void>;
}

export type Proxies = Record<CloudDialectName, CloudProxy> & { bigtable?: CloudProxy };

export interface Backends {
  s3: string;
  dynamodb: string;
  gcs: string;
  azurite: Azurite;
  /** host:port of the Bigtable emulator, where it is installed. */
  bigtable: string | undefined;
}

/** A manifest the admin applies. */
export type Manifest = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

export interface ClusterOptions {
  sandbox?: Pick<SandboxOptions, 'faults'>;
  /** Service accounts the GCS fake knows (a caller with one acts in its project only; without, anonymously in any). */
  gcsServiceAccounts?: Record<string, GcsServiceAccount>;
  /** More chart values, as `helm install --set` takes them (e.g. `sharding.enabled: 'true'`). */
  chartValues?: Record<string, string>;
}

export async function startReliabilityCluster(options: ClusterOptions = {}): Promise<ReliabilityCluster> {
  const binary = k8orBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const home = await mkdtemp(join(tmpdir(), 'k8or-reliability-'));
  const stops: Array<() => Promise<unknown>> = [];
  const replicas: Replica[] = [];
  let webhookPort = 0;
  try {
    // the chart's webhook Service, as kube-proxy makes it: one stable address, each connection sent to
    // a live replica (the API server resolves a Service once per webhook configuration)
    const connections = new Set<Socket>();
    const service = createServer((client) => {
      const upstream = connect(webhookPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        connections.add(socket);
        socket.on('close', () => connections.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    stops.push(
      () =>
        new Promise((resolve) => {
          service.close(resolve);
          for (const socket of connections) socket.destroy();
        }),
    );
    const servicePort = (service.address() as AddressInfo).port;
    const sandbox = await startSandbox({
      kubeconfigPath: join(home, 'admin.kubeconfig'),
      serviceResolver: (namespace, name) => (namespace === NAMESPACE && name === `${RELEASE}-webhook` ? `https://127.0.0.1:${servicePort}` : `https://${name}.${namespace}.svc`),
      ...options.sandbox,
    });
    stops.push(() => sandbox.stop());
    // Bigtable's tables join the runs where its emulator is installed (the Google Cloud SDK's)
    const withBigtable = bigtableLeftOut() === undefined;
    const [s3, dynamodbLocal, gcs, azurite, bigtable] = await Promise.all([
      startS3Fake(),
      startDynamoDbLocal(),
      startGcsFake(options.gcsServiceAccounts ? { serviceAccounts: options.gcsServiceAccounts } : {}),
      startAzurite(),
      withBigtable ? startBigtableEmulator() : Promise.resolve<BigtableEmulator | undefined>(undefined),
    ]);
    stops.push(() => s3.stop(), () => dynamodbLocal.stop(), () => gcs.stop(), () => azurite.stop(), async () => await bigtable?.stop());
    // DynamoDB as every client reaches it: through the proxy that keeps tags and continuous backups.
    // It checks no signatures here: the recording proxy in front rewrites the Host header the SDK signed.
    const dynamodb = await startDynamoDbProxy({ target: dynamodbLocal.endpoint });
    stops.push(() => dynamodb.stop());
    const backends: Record<CloudDialectName, string> = { s3: s3.endpoint, dynamodb: dynamodb.endpoint, gcs: gcs.endpoint, 'azure-blob': azurite.blobEndpoint, 'azure-table': azurite.tableEndpoint };
    const proxies = {} as Proxies;
    for (const [dialect, backend] of Object.entries(backends) as Array<[CloudDialectName, string]>) {
      const proxy = await startCloudProxy(backend, classifierOf(dialect), CLOUD_DIALECTS[dialect].serverErrors[0]);
      proxies[dialect] = proxy;
      stops.push(() => proxy.stop());
    }
    if (bigtable) {
      const proxy = await startGrpcCloudProxy(bigtable.host);
      proxies.bigtable = proxy;
      stops.push(() => proxy.stop());
    }

    const t = await tools(home, join(home, 'admin.kubeconfig'));
    await runOk(t.helm, ['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--create-namespace', ...['aws', 'gcp', 'azure'].flatMap((p) => ['--set', `providers.${p}.enabled=true`]), ...Object.entries(options.chartValues ?? {}).flatMap(([key, value]) => ['--set', `${key}=${value}`])]);
    const workloads = await chartWorkloads(t, NAMESPACE, RELEASE, `${RELEASE}-webhook`);
    const operatorPod = workloads.find((w) => w.name === RELEASE)!.pod;
    const chartEnv = envValues(operatorPod.containers[0]!);
    const operatorKubeconfig = join(home, 'operator.kubeconfig');
    await writeFile(operatorKubeconfig, sandbox.kubeconfig.replace(sandbox.token, await serviceAccountToken(t, NAMESPACE, operatorPod.serviceAccountName)));
    // Sharded, the chart serves the webhook from a Deployment of its own: one Pod of it serves the
    // webhook Service for the whole run, and the replicas run the controllers only.
    let webhookServer: OperatorProcess | undefined;
    const webhookPod = workloads.find((w) => w.servesWebhook && w.name !== RELEASE)?.pod;
    if (webhookPod) {
      const kubeconfigPath = join(home, 'webhook.kubeconfig');
      await writeFile(kubeconfigPath, sandbox.kubeconfig.replace(sandbox.token, await serviceAccountToken(t, NAMESPACE, webhookPod.serviceAccountName)));
      webhookPort = await freePort();
      const server = await startOperatorProcess({ bin: binary.path, args: webhookPod.containers[0]!.args, kubeconfigPath, env: envValues(webhookPod.containers[0]!), webhookPort });
      stops.push(() => server.stop());
      webhookServer = server;
    }
    /** Whether the replicas serve the webhook Service themselves (the chart unsharded). */
    const replicasServe = webhookServer === undefined;

    await runOk(t.kubectl, ['create', 'namespace', USER_NAMESPACE]);

    const kc = new KubeConfig();
    kc.loadFromString(sandbox.kubeconfig);
    const admin = new KubeRest(kc, { userAgent: 'reliability-suite' });

    const runStores = stores({ s3: s3.endpoint, dynamodb: dynamodb.endpoint, gcs: gcs.endpoint, gcpProject: GCP_PROJECT, bigtable: bigtable ? { host: bigtable.host, instance: BIGTABLE_INSTANCE } : undefined, azurite });
    stops.push(() => runStores.close());
    let replicaCount = 0;
    const cluster: ReliabilityCluster = {
      home,
      sandbox,
      tools: t,
      admin,
      proxies,
      stores: runStores,
      backends: { s3: s3.endpoint, dynamodb: dynamodb.endpoint, gcs: gcs.endpoint, azurite, bigtable: bigtable?.host },
      providerConfigs: providerConfigManifests(proxies, azurite.accountName, azurite.accountKey),
      chartEnv,
      replicas,
      startReplica: async (replicaOptions = {}) => {
        const name = `replica-${replicaCount++}`;
        const port = await freePort();
        const process = await startOperatorProcess({
          bin: binary.path,
          args: operatorPod.containers[0]!.args,
          kubeconfigPath: operatorKubeconfig,
          env: { ...chartEnv, K8OR_LOG_LEVEL: 'debug', ...replicaOptions.env },
          webhookPort: port,
        });
        const replica: Replica = {
          name,
          process,
          webhookPort: port,
          exited: false,
          logs: () =>
            process
              .output()
              .split('\n')
              .flatMap((line) => {
                try {
                  return [JSON.parse(line) as Record<string, unknown>];
                } catch {
                  return [];
                }
              }),
          kill: async () => {
            // the operator itself, not the guardian between us: a Pod's container killed by the kubelet
            globalThis.process.kill(await process.child.pid, 'SIGKILL');
            await process.child.exited;
            replica.exited = true;
            // the Service's endpoints drop the dead Pod
            if (replicasServe && webhookPort === port) webhookPort = replicas.find((r) => !r.exited)?.webhookPort ?? 0;
          },
        };
        replicas.push(replica);
        if (replicasServe && (webhookPort === 0 || replicas.every((r) => r === replica || r.exited))) webhookPort = port;
        return replica;
      },
      stopReplicas: async () => {
        for (const replica of replicas) {
          if (replica.exited) continue;
          await replica.process.stop();
          replica.exited = true;
        }
        if (replicasServe) webhookPort = 0;
      },
      routeWebhookTo: (replica) => {
        if (!replicasServe) throw new Error('the chart serves the webhook from its own Deployment (sharded): no replica serves it');
        webhookPort = replica.webhookPort;
      },
      waitReady: async (replica) => {
        try {
          await waitFor(`${replica.name} ready`, () => probeReady(replica.process.probes), 90_000);
        } catch (error) {
          throw new Error(`${String(error)}\n${replica.process.output().slice(-5000)}`);
        }
      },
      operatorOutput: (chars = 4000) =>
        [...replicas.map((r) => `--- ${r.name}${r.exited ? ' (killed)' : ''}:\n${r.process.output().slice(-chars)}`), ...(webhookServer ? [`--- the webhook Deployment's Pod:\n${webhookServer.output().slice(-chars)}`] : [])].join('\n'),
      stop: async () => {
        for (const replica of replicas) if (!replica.exited) await replica.process.stop();
        for (const stop of stops.reverse()) await stop().catch(() => undefined);
        await rm(home, { recursive: true, force: true });
      },
    };
    return cluster;
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

/** A container's env values, as the chart renders them (the runs give no Secret to a replica's env). */
const envValues = (container: Container): Record<string, string> => Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));


/** The credentials Secrets and a ProviderConfig per cloud: AWS's is the cluster's `default`. */
function providerConfigManifests(proxies: Proxies, azureAccount: string, azureKey: string): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'aws-credentials', namespace: NAMESPACE }, type: 'Opaque', stringData: SANDBOX_CREDENTIALS },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'azure-credentials', namespace: NAMESPACE }, type: 'Opaque', stringData: { accountKey: azureKey } },
    {
      apiVersion: 'k8or.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: 'default' },
      spec: {
        provider: 'aws',
        region: 'us-east-1',
        endpoints: { bucket: proxies.s3.endpoint, table: proxies.dynamodb.endpoint },
        credentials: { source: 'Secret', secretRef: { namespace: NAMESPACE, name: 'aws-credentials' } },
      },
    },
    {
      apiVersion: 'k8or.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: PROVIDER_CONFIG_OF.gcp },
      spec: {
        provider: 'gcp',
        project: GCP_PROJECT,
        region: 'us-central1',
        ...(proxies.bigtable ? { bigtableInstance: BIGTABLE_INSTANCE } : {}),
        endpoints: { bucket: proxies.gcs.endpoint, ...(proxies.bigtable ? { table: proxies.bigtable.endpoint } : {}) },
        credentials: { source: 'Environment' },
      },
    },
    {
      apiVersion: 'k8or.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: PROVIDER_CONFIG_OF.azure },
      spec: {
        provider: 'azure',
        storageAccount: azureAccount,
        endpoints: { bucket: proxies['azure-blob'].endpoint, table: proxies['azure-table'].endpoint },
        credentials: { source: 'Secret', secretRef: { namespace: NAMESPACE, name: 'azure-credentials' } },
      },
    },
  ];
}

/**
 * The admin's part once a replica serves its webhook: wait for the caBundle the operator writes,
 * then apply the credentials Secrets and the ProviderConfigs (again, unchanged, in a later run).
 */
export async function applyProviderConfigs(cluster: ReliabilityCluster): Promise<void> {
  const { kubectl } = cluster.tools;
  await waitFor(
    'caBundle in the webhook configuration',
    async () => (await runOk(kubectl, ['get', 'validatingwebhookconfiguration', `${RELEASE}-validating-webhook`, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}'])).length > 0,
    60_000,
  );
  await runOk(kubectl, ['apply', '-f', '-'], cluster.providerConfigs.map((m) => JSON.stringify(m)).join('\n'));
}
