// What the drift benchmarks share: the sandbox API server, a ProviderConfig whose drift-check
// budget allows one check per Bucket every interval, an Engine over the in-memory cloud in which
// every Bucket asks for four times as many checks (so the budget decides every interval), and the
// Buckets, created and waited for until each shows the budget's interval in status.
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type Bucket } from '@k8or/api';
import { CoreMetrics, Engine, KubeRest, corePath, formatGoDuration, installCrds, k8orPath } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 1_800_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('benchmark timed out');
    await sleep(100);
  }
}

export interface DriftRunOptions {
  resources: number;
  /** The interval the budget allows each Bucket. */
  intervalMs: number;
  workers: number;
  /** The spec of every Bucket. */
  spec?: Bucket['spec'];
}

export class DriftRun {
  readonly cloud = new InMemoryCloud();
  readonly names: string[];
  /** The budget (calls an hour, one call per check) that allows one check per Bucket every interval. */
  readonly budget: number;
  /** The interval in force as status writes it (`30s`). */
  readonly inForce: string;
  metrics = new CoreMetrics();
  engine!: Engine;
  #sandbox!: Sandbox;
  #kubeConfig = new KubeConfig();
  user!: KubeRest;

  readonly options: DriftRunOptions;

  constructor(options: DriftRunOptions) {
    this.options = options;
    this.names = Array.from({ length: options.resources }, (_, i) => `b-${i}`);
    this.budget = Math.round((options.resources * 3_600_000) / options.intervalMs);
    this.inForce = formatGoDuration(options.intervalMs);
  }

  /** The API server, the ProviderConfig `default` with the budget, the namespace `bench`, and the engine. */
  async start(): Promise<void> {
    this.#sandbox = await startSandbox({ logLevel: 'error' });
    this.#kubeConfig.loadFromString(this.#sandbox.kubeconfig);
    this.user = new KubeRest(this.#kubeConfig, { userAgent: 'k8or-bench-user' });
    await installCrds(this.#kubeConfig);
    await until(async () => (await this.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    await this.user.create(k8orPath('ProviderConfig', undefined), {
      apiVersion: API_VERSION,
      kind: 'ProviderConfig',
      metadata: { name: 'default' },
      spec: { provider: 'aws', region: 'mem-1', driftCheckBudget: { callsPerHour: this.budget } },
    });
    await this.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await this.startEngine();
  }

  /** A new engine (and metrics) over the same API server and cloud: a restart. */
  async startEngine(): Promise<void> {
    this.metrics = new CoreMetrics();
    this.engine = new Engine({
      kubeConfig: this.#kubeConfig,
      providers: new Map([['aws', inMemoryProviderPlugin(this.cloud)]]),
      clusterId: 'bench',
      workers: this.options.workers,
      kinds: ['Bucket'],
      metrics: this.metrics,
      // Each Bucket asks for four times as many checks as the budget allows.
      resyncPeriodMs: this.options.intervalMs / 4,
      resyncFloorMs: 1_000,
      eventAggregationIntervalMs: 600_000,
    });
    await this.engine.start();
  }

  /** The engine's own view of the Buckets (its informer's cache, filled by a watch of the API server). */
  buckets(): Bucket[] {
    return this.engine.controllers.get('Bucket')!.informer.cache.list() as Bucket[];
  }

  /** Creates every Bucket, 50 at a time, and waits until each is Ready and shows the interval in force. */
  async createBuckets(): Promise<void> {
    const created = performance.now();
    for (let i = 0; i < this.names.length; i += 50) {
      await Promise.all(
        this.names
          .slice(i, i + 50)
          .map((name) => this.user.create(k8orPath('Bucket', 'bench'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'bench' }, spec: this.options.spec ?? {} })),
      );
    }
    const isReady = (b: Bucket) => b.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && b.status?.observedGeneration === b.metadata.generation;
    let reported = performance.now();
    await until(() => {
      const list = this.buckets();
      if (performance.now() - reported > 30_000) {
        reported = performance.now();
        const shown = new Map<string, number>();
        for (const b of list) shown.set(b.status?.driftCheckInterval ?? '-', (shown.get(b.status?.driftCheckInterval ?? '-') ?? 0) + 1);
        process.stderr.write(`${list.length} listed, ${list.filter(isReady).length} ready; intervals shown: ${JSON.stringify(Object.fromEntries(shown))}\n`);
      }
      return list.length === this.options.resources && list.every((b) => isReady(b) && b.status?.driftCheckInterval === this.inForce);
    });
    process.stderr.write(`${this.options.resources} Buckets ready at ${this.inForce} after ${((performance.now() - created) / 1000).toFixed(0)} s\n`);
  }

  async stop(): Promise<void> {
    await this.engine.stop();
    this.user.close();
    await this.#sandbox.stop();
  }
}

/** The most arrivals in any window of `ms`. */
export function busiestWindow(times: readonly number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= ms) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}
