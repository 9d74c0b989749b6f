// The chart's Deployment, running: as processes here (the embedded API server, or a cluster without
// kubelets) or as the cluster's own Pods. Either way with the env the chart gives its container.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@k8or/core/testing';
import { kubeconfigWithToken, type E2ECluster } from './cluster.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { run, runOk } from './run.ts';
import type { Tools } from './tools.ts';

export interface ChartDeployment {
  replicas: number;
  /** The Secret the replicas share their self-signed webhook certificate through; undefined with cert-manager's. */
  certificateSecret: string | undefined;
  /** Everything the replicas logged so far. */
  logs(): Promise<string>;
  /** The Pods go (in `pods` mode the release's uninstall takes them). */
  stop(): Promise<void>;
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
  spec: {
    replicas: number;
    template: { spec: { serviceAccountName: string; containers: Container[]; volumes?: Array<{ name: string; emptyDir?: unknown }> } };
  };
}

/** The Pod name replica `index` runs as here (what the downward API's metadata.name gives it). */
export const podName = (release: string, index: number): string => `${release}-pod-${index}`;

export interface RunDeploymentOptions {
  cluster: E2ECluster;
  tools: Tools;
  home: string;
  namespace: string;
  release: string;
  /** `process` mode: the k8or CLI, and each replica's webhook port on 127.0.0.1 (one per replica). */
  bin?: string;
  webhookPorts?: readonly number[];
}

/** Starts the Deployment's replicas (or waits for the cluster's Pods) until every one is ready. */
export async function runChartDeployment(options: RunDeploymentOptions): Promise<ChartDeployment> {
  const { cluster, tools: t, namespace, release } = options;
  const deployment = JSON.parse(await runOk(t.kubectl, ['get', 'deployment', release, '-n', namespace, '-o', 'json'])) as DeploymentObject;
  const pod = deployment.spec.template.spec;
  // the suite's checks need the webhook served beside the controllers, as the chart runs them
  assert.deepEqual(pod.containers[0]!.args, ['operator', '--webhook']);
  const replicas = deployment.spec.replicas;
  const certificateSecret = pod.containers[0]!.env?.find((e) => e.name === 'K8OR_WEBHOOK_CERT_SECRET')?.value;

  if (cluster.runner === 'pods') {
    const selector = `app.kubernetes.io/instance=${release}`;
    // the kubelets pull the image and start the containers: Ready means the probes pass
    await waitFor(`${replicas} Pods of ${release} Ready`, async () => {
      const pods = JSON.parse(await runOk(t.kubectl, ['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as { items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }> };
      return pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= replicas;
    }, 300_000, 1_000);
    return {
      replicas,
      certificateSecret,
      logs: async () => await runOk(t.kubectl, ['logs', '-n', namespace, '-l', selector, '--tail=-1', '--prefix', '--max-log-requests=10']),
      stop: async () => {},
    };
  }

  // The Pods the Deployment would start: the image's entrypoint (the CLI) with the container's args and env, the ServiceAccount's token.
  const ports = options.webhookPorts ?? [];
  assert.equal(ports.length, replicas, 'one webhook port per replica');
  // a process has the Pod's env but no volumes: an emptyDir is its own disk, anything else it would miss
  const mounted = (pod.volumes ?? []).filter((v) => !v.emptyDir).map((v) => v.name);
  if (mounted.length > 0) throw new Error(`the Deployment mounts ${mounted.join(', ')}: its replicas cannot run as processes (values such as webhook.certManager or a gcp credentials Secret need the cluster's Pods)`);
  const secret = (name: string): Promise<Record<string, string> | undefined> => secretData(t, namespace, name);
  const envs = await Promise.all(ports.map((_, i) => containerEnv(pod.containers[0]!, secret, { name: podName(release, i), namespace })));
  const token = (await runOk(t.kubectl, ['create', 'token', pod.serviceAccountName, '-n', namespace, '--duration=2h'])).trim();
  const kubeconfigPath = join(options.home, 'operator.kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigWithToken(cluster.kubeconfig, token), { mode: 0o600 });
  // started together, as a rollout does: they race to create the shared certificate
  const processes: OperatorProcess[] = await Promise.all(ports.map((webhookPort, i) => startOperatorProcess({ bin: options.bin!, args: pod.containers[0]!.args, kubeconfigPath, env: envs[i]!, webhookPort })));
  const output = (): string => processes.map((p, i) => p.output().replace(/^/gm, `[replica ${i}] `)).join('\n');
  const stop = async (): Promise<void> => {
    for (const p of processes) await p.stop();
  };
  try {
    for (const replica of processes) await waitFor('the replica ready', async () => (await fetch(`${replica.probes}/readyz`).catch(() => undefined))?.ok === true, 60_000);
  } catch (error) {
    await stop();
    throw new Error(`${String(error)}\n${output()}`);
  }
  return { replicas, certificateSecret, logs: async () => output(), stop };
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
