// The chart's Deployments, running: as processes here (the embedded API server, or a cluster without
// kubelets) or as the cluster's own Pods. Either way with the env the chart gives each container.
// Unsharded the chart has one Deployment, `operator --webhook`; sharded, the operator's replicas run
// `operator` and a second Deployment `webhook`; the webhook Service selects the Pods that serve it.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@k8or/core/testing';
import { kubeconfigWithToken, type E2ECluster } from './cluster.ts';
import { probeReady, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { run, runOk } from './run.ts';
import type { Tools } from './tools.ts';

export interface ChartDeployment {
  /** The Secret the replicas share their self-signed webhook certificate through; undefined with cert-manager's. */
  certificateSecret: string | undefined;
  /** `process` mode: each replica run here, by its Pod name. */
  processes: readonly ChartProcess[];
  /** Everything the replicas logged so far. */
  logs(): Promise<string>;
  /** The Pods go (in `pods` mode the release's uninstall takes them). */
  stop(): Promise<void>;
}

/** One replica of a Deployment, run here as a process. */
export interface ChartProcess {
  pod: string;
  deployment: string;
  /** Whether the webhook Service selects its Pod. */
  servesWebhook: boolean;
  /** The Prometheus endpoint's base URL (`${metrics}/metrics`). */
  metrics: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; fieldRef?: { fieldPath: string }; [source: string]: unknown };
}

export interface Container {
  args: string[];
  env?: EnvVar[];
  envFrom?: Array<{ secretRef?: { name: string; optional?: boolean }; prefix?: string; [source: string]: unknown }>;
}

interface DeploymentObject {
  metadata: { name: string };
  spec: {
    replicas: number;
    template: {
      metadata: { labels?: Record<string, string> };
      spec: { serviceAccountName: string; containers: Container[]; volumes?: Array<{ name: string; emptyDir?: unknown }> };
    };
  };
}

/** A Deployment of the release as the cluster holds it, and whether the webhook Service selects its Pods. */
export interface Workload {
  name: string;
  replicas: number;
  servesWebhook: boolean;
  pod: DeploymentObject['spec']['template']['spec'];
}

/** The Pod name replica `index` of a Deployment runs as here (what the downward API's metadata.name gives it). */
export const podName = (deployment: string, index: number): string => `${deployment}-pod-${index}`;

/** The release's Deployments (by Helm's instance label), each marked by whether `service`'s selector matches its Pods. */
export async function chartWorkloads(t: Tools, namespace: string, release: string, service: string): Promise<Workload[]> {
  const selector = (JSON.parse(await runOk(t.kubectl, ['get', 'service', service, '-n', namespace, '-o', 'json'])) as { spec: { selector?: Record<string, string> } }).spec.selector ?? {};
  assert.ok(Object.keys(selector).length > 0, `the Service ${service} selects Pods`);
  const deployments = (JSON.parse(await runOk(t.kubectl, ['get', 'deployments', '-n', namespace, '-l', `app.kubernetes.io/instance=${release}`, '-o', 'json'])) as { items: DeploymentObject[] }).items;
  assert.ok(deployments.length > 0, `the release ${release} has Deployments`);
  return deployments.map((d) => {
    const labels = d.spec.template.metadata.labels ?? {};
    return { name: d.metadata.name, replicas: d.spec.replicas, servesWebhook: Object.entries(selector).every(([key, value]) => labels[key] === value), pod: d.spec.template.spec };
  });
}

/** How many Pods serve the webhook Service: the replicas of the Deployments it selects. */
export const webhookReplicas = (workloads: readonly Workload[]): number => workloads.filter((w) => w.servesWebhook).reduce((sum, w) => sum + w.replicas, 0);

export interface RunDeploymentOptions {
  cluster: E2ECluster;
  tools: Tools;
  home: string;
  namespace: string;
  release: string;
  workloads: readonly Workload[];
  /** `process` mode: the k8or CLI, and the webhook port on 127.0.0.1 of each replica the webhook Service selects, in the order of `workloads`. */
  bin?: string;
  webhookPorts?: readonly number[];
}

/** Starts every replica of the release's Deployments (or waits for the cluster's Pods) until each one is ready. */
export async function runChartDeployment(options: RunDeploymentOptions): Promise<ChartDeployment> {
  const { cluster, tools: t, namespace, release, workloads } = options;
  // the suite's checks need the webhook served by the Pods its Service selects, and by those only
  for (const w of workloads) {
    const args = w.pod.containers[0]!.args;
    const serves = args[0] === 'webhook' || args.includes('--webhook');
    assert.equal(serves, w.servesWebhook, `the Deployment ${w.name} (${args.join(' ')}) ${serves ? 'serves the webhook, but the Service does not select its Pods' : 'does not serve the webhook, but the Service selects its Pods'}`);
  }
  const served = workloads.find((w) => w.servesWebhook);
  assert.ok(served, 'a Deployment serves the webhook');
  const certificateSecret = served.pod.containers[0]!.env?.find((e) => e.name === 'K8OR_WEBHOOK_CERT_SECRET')?.value;
  const replicas = workloads.reduce((sum, w) => sum + w.replicas, 0);

  if (cluster.runner === 'pods') {
    const selector = `app.kubernetes.io/instance=${release}`;
    // the kubelets pull the image and start the containers: Ready means the probes pass
    await waitFor(`${replicas} Pods of ${release} Ready`, async () => {
      const pods = JSON.parse(await runOk(t.kubectl, ['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as { items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }> };
      return pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= replicas;
    }, 300_000, 1_000);
    return {
      certificateSecret,
      processes: [],
      logs: async () => await runOk(t.kubectl, ['logs', '-n', namespace, '-l', selector, '--tail=-1', '--prefix', '--max-log-requests=10']),
      stop: async () => {},
    };
  }

  // The Pods the Deployments would start: the image's entrypoint (the CLI) with the container's args and env, the ServiceAccount's token.
  const ports = [...(options.webhookPorts ?? [])];
  assert.equal(ports.length, webhookReplicas(workloads), 'one webhook port per replica the webhook Service selects');
  const secret = (name: string): Promise<Record<string, string> | undefined> => secretData(t, namespace, name);
  const kubeconfigs = new Map<string, string>();
  const started: Array<Promise<{ pod: ChartProcess; replica: OperatorProcess }>> = [];
  for (const w of workloads) {
    // a process has the Pod's env but no volumes: an emptyDir is its own disk, anything else it would miss
    const mounted = (w.pod.volumes ?? []).filter((v) => !v.emptyDir).map((v) => v.name);
    if (mounted.length > 0) throw new Error(`the Deployment ${w.name} mounts ${mounted.join(', ')}: its replicas cannot run as processes (values such as webhook.certManager or a gcp credentials Secret need the cluster's Pods)`);
    const account = w.pod.serviceAccountName;
    if (!kubeconfigs.has(account)) {
      const token = await serviceAccountToken(t, namespace, account);
      const path = join(options.home, `${account}.kubeconfig`);
      await writeFile(path, kubeconfigWithToken(cluster.kubeconfig, token), { mode: 0o600 });
      kubeconfigs.set(account, path);
    }
    const container = w.pod.containers[0]!;
    for (let i = 0; i < w.replicas; i++) {
      const pod = podName(w.name, i);
      const webhookPort = w.servesWebhook ? ports.shift() : undefined;
      // started together, as a rollout does: the webhook's replicas race to create the shared certificate
      started.push(
        containerEnv(container, secret, { name: pod, namespace }).then(async (env) => {
          const replica = await startOperatorProcess({ bin: options.bin!, args: container.args, kubeconfigPath: kubeconfigs.get(account)!, env, ...(webhookPort !== undefined ? { webhookPort } : {}) });
          return { pod: { pod, deployment: w.name, servesWebhook: w.servesWebhook, metrics: replica.metrics }, replica };
        }),
      );
    }
  }
  const running = await Promise.allSettled(started);
  const processes = running.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const output = (): string => processes.map(({ pod, replica }) => replica.output().replace(/^/gm, `[${pod.pod}] `)).join('\n');
  const stop = async (): Promise<void> => {
    for (const { replica } of processes) await replica.stop();
  };
  try {
    for (const r of running) if (r.status === 'rejected') throw r.reason;
    for (const { pod, replica } of processes) await waitFor(`${pod.pod} ready`, () => probeReady(replica.probes), 60_000);
  } catch (error) {
    await stop();
    throw new Error(`${String(error)}\n${output()}`);
  }
  return { certificateSecret, processes: processes.map((p) => p.pod), logs: async () => output(), stop };
}

/** A Secret's data in the release namespace, decoded, or undefined where there is none. */
async function secretData(t: Tools, namespace: string, name: string): Promise<Record<string, string> | undefined> {
  const result = await run(t.kubectl, ['get', 'secret', name, '-n', namespace, '-o', 'json']);
  if (result.code !== 0) {
    if (/NotFound/.test(result.stderr)) return undefined;
    throw new Error(`kubectl get secret ${namespace}/${name}: ${result.stderr}`);
  }
  const data = (JSON.parse(result.stdout) as { data?: Record<string, string> }).data ?? {};
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
}

/**
 * The container's environment as the kubelet builds it: `envFrom` Secrets first, then `env` (values,
 * and keys of Secrets). A source the kubelet would resolve from the Pod itself (fieldRef, a ConfigMap,
 * resources) is refused, so a process never runs with less than the Pod would have.
 */
export async function containerEnv(container: Container, secret: (name: string) => Promise<Record<string, string> | undefined>, pod: { name: string; namespace: string }): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    if (!from.secretRef) throw new Error(`envFrom ${JSON.stringify(from)}: only Secrets are resolved for the replicas run as processes`);
    const data = await secret(from.secretRef.name);
    if (!data && !from.secretRef.optional) throw new Error(`envFrom: Secret ${from.secretRef.name} does not exist (the Pod would not start)`);
    for (const [key, value] of Object.entries(data ?? {})) env[`${from.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.secretKeyRef) {
      const ref = variable.valueFrom.secretKeyRef;
      const value = (await secret(ref.name))?.[ref.key];
      if (value === undefined && !ref.optional) throw new Error(`env ${variable.name}: key ${ref.key} of Secret ${ref.name} does not exist (the Pod would not start)`);
      if (value !== undefined) env[variable.name] = value;
    } else if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[variable.name] = pod.name;
    else if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[variable.name] = pod.namespace;
    else if (variable.valueFrom) throw new Error(`env ${variable.name}: ${JSON.stringify(variable.valueFrom)} is not resolved for the replicas run as processes`);
    else env[variable.name] = '';
  }
  return env;
}

/** A token of the ServiceAccount `account` in `namespace` (`kubectl create token`), good for 2 h: what its Pods would be given. */
export async function serviceAccountToken(t: Tools, namespace: string, account: string): Promise<string> {
  return (await runOk(t.kubectl, ['create', 'token', account, '-n', namespace, '--duration=2h'])).trim();
}
