// The chart's Deployment, running: as processes here (the embedded API server, or a cluster without
// kubelets) or as the cluster's own Pods. Either way with the env the chart gives its container.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '@k8or/core/testing';
import { kubeconfigWithToken, type E2ECluster } from './cluster.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { runOk } from './run.ts';
import type { Tools } from './tools.ts';

export interface ChartDeployment {
  replicas: number;
  /** Everything the replicas logged so far. */
  logs(): Promise<string>;
  /** The Pods go (in `pods` mode the release's uninstall takes them). */
  stop(): Promise<void>;
}

interface DeploymentObject {
  spec: {
    replicas: number;
    template: { spec: { serviceAccountName: string; containers: Array<{ args: string[]; env: EnvVar[] }> } };
  };
}

interface EnvVar { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }

/** The Pod name replica `index` runs as here (what the downward API's metadata.name gives it). */
export const podName = (release: string, index: number): string => `${release}-pod-${index}`;

/** A container's env as the kubelet gives it to the Pod: the downward API's Pod name and namespace resolved. */
function podEnv(env: readonly EnvVar[], pod: { name: string; namespace: string }): Record<string, string> {
  return Object.fromEntries(env.map((e) => {
    if (e.value !== undefined) return [e.name, e.value];
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.name') return [e.name, pod.name];
    if (field === 'metadata.namespace') return [e.name, pod.namespace];
    throw new Error(`the env ${e.name} of the chart's container comes from ${JSON.stringify(e.valueFrom)}, which these processes cannot resolve`);
  }));
}

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
  assert.deepEqual(pod.containers[0]!.args, ['operator', '--webhook']);
  const replicas = deployment.spec.replicas;

  if (cluster.runner === 'pods') {
    const selector = `app.kubernetes.io/instance=${release}`;
    // the kubelets pull the image and start the containers: Ready means the probes pass
    await waitFor(`${replicas} Pods of ${release} Ready`, async () => {
      const pods = JSON.parse(await runOk(t.kubectl, ['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as { items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }> };
      return pods.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length >= replicas;
    }, 300_000, 1_000);
    return {
      replicas,
      logs: async () => await runOk(t.kubectl, ['logs', '-n', namespace, '-l', selector, '--tail=-1', '--prefix', '--max-log-requests=10']),
      stop: async () => {},
    };
  }

  // The Pods the Deployment would start: the chart's env, the ServiceAccount's token.
  const ports = options.webhookPorts ?? [];
  assert.equal(ports.length, replicas, 'one webhook port per replica');
  const token = (await runOk(t.kubectl, ['create', 'token', pod.serviceAccountName, '-n', namespace, '--duration=2h'])).trim();
  const kubeconfigPath = join(options.home, 'operator.kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigWithToken(cluster.kubeconfig, token), { mode: 0o600 });
  // started together, as a rollout does: they race to create the shared certificate
  const processes: OperatorProcess[] = await Promise.all(ports.map((webhookPort, i) => startOperatorProcess({ bin: options.bin!, kubeconfigPath, env: podEnv(pod.containers[0]!.env, { name: podName(release, i), namespace }), webhookPort })));
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
  return { replicas, logs: async () => output(), stop };
}
