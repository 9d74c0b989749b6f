// Where the end-to-end suite runs: a cluster, the provider settings its ProviderConfigs hold, and the
// chart's install and uninstall there. By default the suite makes its own target: the embedded API
// server and the local clouds, started here. With K8OR_E2E_KUBECONFIG it is that cluster, with the
// settings of K8OR_E2E_PROVIDER_CONFIGS and the values of K8OR_E2E_VALUES (test/README.md).
// Both go through the same install: `helm install` of charts/k8or, then its Deployments' replicas run.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxOptions } from '@k8or/apiserver';
import { waitFor } from '@k8or/core/testing';
import { startBackends, type Backends } from './backends.ts';
import { chartWorkloads, runChartDeployment, webhookReplicas, type ChartDeployment, type ChartProcess } from './chart-deployment.ts';
import { RUNNER, externalSettingsProblem, openCluster, type E2ECluster } from './cluster.ts';
import { freePort, k8orBinary } from './operator-process.ts';
import { providersOf, readProviderSettings, sandboxProviderSettings, writeProviderSettings, type ProviderSettings } from './provider-settings.ts';
import { run, runOk } from './run.ts';
import { startServiceProxy, type ServiceProxy } from './service-proxy.ts';
import { CHART_DIR, tools, type Tools } from './tools.ts';

const PROVIDER_CONFIGS = process.env['K8OR_E2E_PROVIDER_CONFIGS'] || undefined;
const VALUES = process.env['K8OR_E2E_VALUES'] || undefined;

/** The release the suite installs, and its namespace. */
export const RELEASE = 'k8or';
export const RELEASE_NAMESPACE = 'k8or-system';
/** The chart's webhook Service, which the API server calls. */
const WEBHOOK_SERVICE = 'k8or-webhook';

/** Why the suite cannot run with this environment (the operator missing, variables that do not fit), or undefined. */
export function targetProblem(): string | undefined {
  const external = externalSettingsProblem();
  if (external) return external;
  for (const [name, file] of [['K8OR_E2E_PROVIDER_CONFIGS', PROVIDER_CONFIGS], ['K8OR_E2E_VALUES', VALUES]] as const) {
    if (file && !existsSync(file)) return `${name}=${file} does not exist`;
  }
  if (RUNNER === 'pods' && !PROVIDER_CONFIGS) {
    return 'K8OR_E2E_PROVIDER_CONFIGS is needed when the cluster runs the chart\'s Pods: they cannot reach backends started on this machine\'s 127.0.0.1';
  }
  const binary = k8orBinary();
  return RUNNER === 'process' && 'missing' in binary ? binary.missing : undefined;
}

/** The chart as installed and running. */
export interface InstalledChart {
  /** The Pods the webhook Service selects (unsharded, every replica; sharded, the webhook Deployment's). */
  webhookReplicas: number;
  /** The Secret the replicas share their self-signed webhook certificate through; undefined with cert-manager's. */
  certificateSecret: string | undefined;
  /**
   * The replicas as processes here (`process` mode): every one of every Deployment, the webhook port on
   * 127.0.0.1 of each the webhook Service selects, and the Service routed to one of those (undefined:
   * to each in turn, as kube-proxy).
   */
  processes: { replicas: readonly ChartProcess[]; webhookPorts: readonly number[]; routeServiceTo(replica: number | undefined): void } | undefined;
  /** Everything the replicas logged so far. */
  logs(): Promise<string>;
}

export interface E2ETarget {
  cluster: E2ECluster;
  /** helm and kubectl, as the cluster's admin. */
  tools: Tools;
  release: string;
  namespace: string;
  /** The ProviderConfigs and their Secrets, for the suite to apply and to read the clouds with. */
  settings: ProviderSettings;
  /**
   * `helm install` of charts/k8or (K8OR_E2E_VALUES, then the providers the settings use and `set`),
   * then the Deployments' replicas run and the webhook serves (its configurations hold a caBundle).
   */
  install(set?: Readonly<Record<string, string>>): Promise<InstalledChart>;
  /** The replicas stop (on a cluster, with their Pods) and `helm uninstall` removes the release. */
  uninstall(): Promise<void>;
  /** Stops what the target started; on another cluster, removes the release namespace if install made it. */
  close(): Promise<void>;
}

/** Opens the target (starting the embedded API server and the local clouds unless K8OR_E2E_KUBECONFIG is set). */
export async function openTarget(home: string, sandboxOptions: Omit<SandboxOptions, 'kubeconfigPath' | 'serviceResolver'> = {}): Promise<E2ETarget> {
  const problem = targetProblem();
  if (problem) throw new Error(problem);
  let service: ServiceProxy | undefined;
  const cluster = await openCluster(home, {
    ...sandboxOptions,
    // the webhook Service, as kube-proxy routes it: to the replicas' processes once they run
    serviceResolver: (namespace, name) => (namespace === RELEASE_NAMESPACE && name === WEBHOOK_SERVICE && service ? service.url : `https://${name}.${namespace}.svc`),
  });
  let backends: Backends | undefined;
  try {
    const t = await tools(home, cluster.kubeconfigPath);
    let settingsFile = PROVIDER_CONFIGS;
    if (!settingsFile) {
      // the local clouds' settings go through the same file another cluster's come in
      backends = await startBackends();
      settingsFile = join(home, 'provider-configs.yaml');
      await writeProviderSettings(settingsFile, sandboxProviderSettings(RELEASE_NAMESPACE, backends));
    }
    const settings = await readProviderSettings(settingsFile);
    let deployment: ChartDeployment | undefined;
    let installed = false;
    let namespaceMade = false;

    const uninstall = async (): Promise<void> => {
      try {
        await deployment?.stop();
        deployment = undefined;
        if (installed) await runOk(t.helm, ['uninstall', RELEASE, '--namespace', RELEASE_NAMESPACE, ...(cluster.external ? ['--wait'] : [])], undefined, 300_000);
        installed = false;
      } finally {
        await service?.close();
        service = undefined;
      }
    };

    return {
      cluster,
      tools: t,
      release: RELEASE,
      namespace: RELEASE_NAMESPACE,
      settings,
      install: async (set = {}) => {
        const namespace = await run(t.kubectl, ['get', 'namespace', RELEASE_NAMESPACE]);
        if (namespace.code !== 0 && !/NotFound/.test(namespace.stderr)) throw new Error(`kubectl get namespace ${RELEASE_NAMESPACE}: ${namespace.stderr}`);
        namespaceMade = namespace.code !== 0;
        const values = [
          ...(VALUES ? ['--values', VALUES] : []),
          ...providersOf(settings).flatMap((provider) => ['--set', `providers.${provider}.enabled=true`]),
          ...Object.entries(set).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
          ...cluster.helmImageArgs,
        ];
        // (a failed install leaves a release behind: uninstall removes it too)
        installed = true;
        await runOk(t.helm, ['install', RELEASE, CHART_DIR, '--namespace', RELEASE_NAMESPACE, '--create-namespace', ...values], undefined, 300_000);
        const workloads = await chartWorkloads(t, RELEASE_NAMESPACE, RELEASE, WEBHOOK_SERVICE);
        const webhookPorts: number[] = [];
        if (cluster.runner === 'process') {
          // the Service's endpoints: the replicas of the Deployments it selects, and no other
          for (let i = 0; i < webhookReplicas(workloads); i++) webhookPorts.push(await freePort());
          // on another cluster without kubelets, its API server sends the Service's calls to this port
          service = await startServiceProxy(webhookPorts, cluster.webhookServicePort ?? 0);
        }
        const binary = k8orBinary();
        deployment = await runChartDeployment({ cluster, tools: t, home, namespace: RELEASE_NAMESPACE, release: RELEASE, workloads, ...('path' in binary ? { bin: binary.path } : {}), webhookPorts });
        // the webhook fails closed: nothing of k8or.io goes in before its configurations trust it
        await waitForCaBundle(t);
        const running = deployment;
        const proxy = service;
        return {
          webhookReplicas: webhookReplicas(workloads),
          certificateSecret: running.certificateSecret,
          processes: proxy ? { replicas: running.processes, webhookPorts, routeServiceTo: (replica) => proxy.route(replica) } : undefined,
          logs: () => running.logs(),
        };
      },
      uninstall,
      close: async () => {
        await uninstall().catch(() => undefined);
        if (cluster.external && namespaceMade) await run(t.kubectl, ['delete', 'namespace', RELEASE_NAMESPACE, '--ignore-not-found', '--wait=false']);
        await cluster.stop();
        await backends?.stop();
      },
    };
  } catch (error) {
    await cluster.stop();
    await backends?.stop();
    throw error;
  }
}

async function waitForCaBundle(t: Tools): Promise<void> {
  for (const configuration of ['validatingwebhookconfiguration/k8or-validating-webhook', 'mutatingwebhookconfiguration/k8or-mutating-webhook']) {
    await waitFor(`caBundle in ${configuration}`, async () => (await runOk(t.kubectl, ['get', configuration, '-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}'])).trim().length > 0, 120_000);
  }
}
