// What the cloud rate-limit benchmarks share: waiting for a condition, creating resources in
// batches, counting the Ready ones, and a CloudRateLimits that records when it let each call go.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type ManagedResource } from '@k8or/api';
import { CloudRateLimits, KubeRest, corePath, installCrds, isConflict, k8orPath, type CoreMetrics, type RateLimitLabels } from '@k8or/core';

export type ManagedKind = 'Bucket' | 'Table';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it holds; a benchmark waits as long as its run takes (30 min by default). A
 * check that fails (a connection the loaded API server reset) is a poll that did not hold.
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 1_800_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`benchmark timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** Creates one object, again after a failure other than 409 (a connection reset under load), at most 5 times. */
async function createOnce(user: KubeRest, path: string, body: Record<string, unknown>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await user.create(path, body);
      return;
    } catch (error) {
      if (isConflict(error)) return;
      if (attempt >= 5) throw error;
      await sleep(200 * attempt);
    }
  }
}

/** The sandbox's cluster with the k8or CRDs served and `namespaces` made, and a client acting as the user. */
export async function benchCluster(kubeconfig: string, namespaces: readonly string[]): Promise<{ kubeConfig: KubeConfig; user: KubeRest }> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  const user = new KubeRest(kubeConfig, { userAgent: 'k8or-bench-user' });
  await installCrds(kubeConfig);
  await until('CRDs', async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
  for (const name of namespaces) await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return { kubeConfig, user };
}

/** Ready and Synced for the current generation. */
export const isReady = (r: ManagedResource): boolean =>
  r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true &&
  r.status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True') === true &&
  r.status?.observedGeneration === r.metadata.generation;

/** How many `kind` objects named `prefix*` in `namespace` are Ready. */
export async function readyCount(user: KubeRest, kind: ManagedKind, namespace: string, prefix: string): Promise<number> {
  const items = (await user.get<{ items: ManagedResource[] }>(k8orPath(kind, namespace)))?.items ?? [];
  return items.filter((r) => r.metadata.name?.startsWith(prefix) && isReady(r)).length;
}

/** Creates `prefix0` .. `prefix{count-1}` with `spec`, 50 at a time. */
export async function createMany(user: KubeRest, kind: ManagedKind, namespace: string, prefix: string, count: number, spec: (name: string) => Record<string, unknown>): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, k) => {
        const name = `${prefix}${i + k}`;
        return createOnce(user, k8orPath(kind, namespace), { apiVersion: API_VERSION, kind, metadata: { name, namespace }, spec: spec(name) });
      }),
    );
  }
}

/**
 * The engine's CloudRateLimits, reporting to `metrics`, that also records when it let each call of
 * a recorded bucket go (performance.now(), per service): beside the backends' arrival times, the
 * difference is time in transit.
 */
export function recordingRateLimits(metrics: CoreMetrics, recorded: (labels: RateLimitLabels) => boolean): { cloudRateLimits: CloudRateLimits; released: Map<string, number[]> } {
  const released = new Map<string, number[]>();
  const reported = metrics.cloudRateLimitMetrics();
  const cloudRateLimits = new CloudRateLimits({
    metrics: {
      ...reported,
      admitted: (labels, seconds) => {
        reported.admitted(labels, seconds);
        if (!recorded(labels)) return;
        const times = released.get(labels.service) ?? [];
        times.push(performance.now());
        released.set(labels.service, times);
      },
    },
  });
  return { cloudRateLimits, released };
}
