// The cluster the suite runs against: the embedded API server it starts itself, or, with
// K8OR_E2E_KUBECONFIG, a cluster someone else runs (see test/README.md for every variable).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startSandbox, type Sandbox, type SandboxOptions } from '@k8or/apiserver';

/**
 * How the chart's Deployments run:
 * - `process`: their replicas run here as processes of their container's args (`k8or operator
 *   --webhook`; sharded, `k8or operator` and `k8or webhook`), with the Deployment's env and a token of
 *   its ServiceAccount (the embedded API server has no kubelet);
 * - `pods`: the cluster's kubelets run the image (`K8OR_E2E_IMAGE`) and the suite waits for the Pods to be Ready.
 */
export type OperatorRunner = 'process' | 'pods';

export interface E2ECluster {
  /** True with K8OR_E2E_KUBECONFIG: the suite neither started the cluster nor may assume anything of it but the API. */
  external: boolean;
  /** The admin's kubeconfig (a copy in the suite's home). */
  kubeconfigPath: string;
  kubeconfig: string;
  /** The embedded API server when the suite started it: its RBAC accounting and request log. */
  sandbox: Sandbox | undefined;
  runner: OperatorRunner;
  /** `--set` arguments of every `helm install` (the image, in `pods` mode). */
  helmImageArgs: string[];
  /**
   * `process` mode on an external cluster: the port on 127.0.0.1 its API server sends the webhook
   * Service's calls to (K8OR_E2E_WEBHOOK_SERVICE_PORT); the suite's Service proxy listens there.
   */
  webhookServicePort: number | undefined;
  stop(): Promise<void>;
}

export const EXTERNAL_KUBECONFIG = process.env['K8OR_E2E_KUBECONFIG'] || undefined;

/** How this run's Deployment will run (known before the cluster is opened). */
export const RUNNER: OperatorRunner = EXTERNAL_KUBECONFIG && process.env['K8OR_E2E_OPERATOR'] !== 'process' ? 'pods' : 'process';

/** Says what is wrong with the external-cluster variables, or undefined when they fit together. */
export function externalSettingsProblem(): string | undefined {
  if (!EXTERNAL_KUBECONFIG) return undefined;
  const runner = process.env['K8OR_E2E_OPERATOR'] ?? 'pods';
  if (runner !== 'pods' && runner !== 'process') return `K8OR_E2E_OPERATOR must be pods or process, got "${runner}"`;
  if (runner === 'pods' && !process.env['K8OR_E2E_IMAGE']) return 'K8OR_E2E_IMAGE (REPOSITORY:TAG of the k8or image) is needed to run the chart\'s Pods on K8OR_E2E_KUBECONFIG\'s cluster';
  if (runner === 'process' && !/^\d+$/.test(process.env['K8OR_E2E_WEBHOOK_SERVICE_PORT'] ?? '')) {
    return 'K8OR_E2E_WEBHOOK_SERVICE_PORT (where the cluster sends the webhook Service\'s calls, on 127.0.0.1) is needed with K8OR_E2E_OPERATOR=process';
  }
  return undefined;
}

/** `repository:tag` (the tag after the last colon that follows the last slash) as the chart's values. */
function imageArgs(image: string | undefined): string[] {
  if (!image) return [];
  const at = image.lastIndexOf(':');
  const hasTag = at > image.lastIndexOf('/');
  return ['--set', `image.repository=${hasTag ? image.slice(0, at) : image}`, ...(hasTag ? ['--set', `image.tag=${image.slice(at + 1)}`] : [])];
}

/**
 * Opens the suite's cluster. Without K8OR_E2E_KUBECONFIG it starts the embedded API server with
 * `sandboxOptions` (its kubeconfig written into `home`); with it, it copies that kubeconfig into `home`
 * and starts nothing.
 */
export async function openCluster(home: string, sandboxOptions: Omit<SandboxOptions, 'kubeconfigPath'> = {}): Promise<E2ECluster> {
  const kubeconfigPath = join(home, 'admin.kubeconfig');
  if (EXTERNAL_KUBECONFIG) {
    const problem = externalSettingsProblem();
    if (problem) throw new Error(problem);
    const kubeconfig = await readFile(EXTERNAL_KUBECONFIG, 'utf8');
    await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
    return {
      external: true,
      kubeconfigPath,
      kubeconfig,
      sandbox: undefined,
      runner: RUNNER,
      helmImageArgs: imageArgs(process.env['K8OR_E2E_IMAGE']),
      webhookServicePort: RUNNER === 'process' ? Number(process.env['K8OR_E2E_WEBHOOK_SERVICE_PORT']) : undefined,
      stop: async () => {},
    };
  }
  const sandbox = await startSandbox({ ...sandboxOptions, kubeconfigPath });
  return {
    external: false,
    kubeconfigPath,
    kubeconfig: sandbox.kubeconfig,
    sandbox,
    runner: 'process',
    helmImageArgs: imageArgs(process.env['K8OR_E2E_IMAGE']),
    webhookServicePort: undefined,
    stop: () => sandbox.stop(),
  };
}

/**
 * The kubeconfig of a ServiceAccount: the admin's current cluster and server, authenticated with its
 * token only (as a Pod of that ServiceAccount is), so the API server authorizes it by the chart's RBAC.
 */
export function kubeconfigWithToken(adminKubeconfig: string, token: string): string {
  const config = parse(adminKubeconfig) as {
    'current-context'?: string;
    contexts?: Array<{ name: string; context: { cluster: string; namespace?: string } }>;
    clusters?: Array<{ name: string; cluster: Record<string, unknown> }>;
  };
  const context = config.contexts?.find((c) => c.name === config['current-context']) ?? config.contexts?.[0];
  const cluster = config.clusters?.find((c) => c.name === context?.context.cluster);
  if (!context || !cluster) throw new Error('the admin kubeconfig names no current context and cluster');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [cluster],
    users: [{ name: 'k8or', user: { token } }],
    contexts: [{ name: 'k8or', context: { cluster: cluster.name, user: 'k8or' } }],
    'current-context': 'k8or',
  });
}
