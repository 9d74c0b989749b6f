// Throughput to Ready: Buckets and Tables applied at once, until every one is
// Ready, with the API server, the engine and this benchmark's client in three
// processes, each result next to the bound the API server sets in the same run.
//
//   npm run build && node bench/throughput.bench.ts [--buckets 1000] [--tables 1000] [--workers 1,10,50] [--warm-up 400] [--bound-rounds 3] [--cpu-prof DIR] [--engine-node-flags="--max-opt=2"]
//
// For each worker count, on a fresh API server (`startSandbox`, its own
// process, the request log on):
//   1. bound: the server's raw keep-alive write rate, Bucket and Table creates
//      (alternating) over 32 keep-alive connections from this process, in a
//      namespace the engine does not watch; after a warm-up round, `--bound-rounds`
//      rounds before the run and as many after it, the median taken;
//   2. the engine (`Engine`, its own process, in-memory provider, the given
//      workers per kind, watching namespace `bench`) starts and syncs;
//   3. warm-up: `--warm-up` resources (names `w-…`) are taken to Ready the same
//      way and left in place, so the measured writes, like the bound's creates
//      (which have a warm-up round of their own), run on code V8 has compiled;
//      nothing of the warm-up is counted;
//   4. this process creates every Bucket and Table (32 in flight, `spec.name`
//      set as the mutating webhook sets it) and reads readiness from the
//      engine's informer cache or its own (a watch; never list polling):
//      Ready=True with observedGeneration = generation;
//   5. API writes and reads per resource come from the server's request log
//      (the engine's user agent only), cloud calls from the in-memory cloud.
// The bound in resources/s is the raw write rate divided by the API writes
// each resource costs the server: the engine's, plus the user's create.
// Prints Markdown for docs/benchmarks.md.
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Informer } from '@k8or/core';

const BENCH_UA = 'k8or-throughput-bench';
const ENGINE_UA_PREFIX = 'k8or-engine/';
const NAMESPACE = 'bench';
const BOUND_NAMESPACE = 'bound';
const IN_FLIGHT = 32;
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

type Kind = 'Bucket' | 'Table';
/** The warm-up batch (names `w-…`) or the measured one. */
type Batch = 'warm-up' | 'measured';
const WARM_UP_PREFIX = 'w-';
const batchOf = (name: string): Batch => (name.startsWith(WARM_UP_PREFIX) ? 'warm-up' : 'measured');
type ReadyFrom = 'engine' | 'watch';

interface RequestCounts {
  /** Engine writes by `resource[/subresource] verb`. */
  writes: Record<string, number>;
  /** Engine reads (get, list, watch) by `resource verb`. */
  reads: Record<string, number>;
  /** Requests the server answered 409. */
  conflicts: number;
}
type ToServer = { type: 'mark' } | { type: 'counts' } | { type: 'cpu' };
type FromServer = { type: 'ready'; kubeconfig: string } | { type: 'counts'; counts: RequestCounts } | { type: 'cpu'; micros: number };
type ToEngine = { type: 'mark' } | { type: 'stop' };
type FromEngine =
  | { type: 'ready' }
  | { type: 'all-ready'; batch: Batch; readyAt: [string, number][] }
  | { type: 'stopped'; cloudCalls: Record<string, number>; reconciles: Record<string, number>; cpuMicros: number };


// ---- the API server process ------------------------------------------------

async function serve(): Promise<void> {
  const { startSandbox } = await import('@k8or/apiserver');
  const sandbox = await startSandbox({ logLevel: 'error', recordRequests: true });
  let from = 0;
  let cpuFrom = process.cpuUsage();
  process.on('message', (message: ToServer) => {
    if (process.execArgv.includes('--cpu-prof')) console.error(`server: ${message.type} at ${process.hrtime.bigint() / 1000n} us (profile clock)`);
    if (message.type === 'mark') {
      from = sandbox.requestLog.length;
      cpuFrom = process.cpuUsage();
      return;
    }
    if (message.type === 'cpu') {
      const cpu = process.cpuUsage(cpuFrom);
      send({ type: 'cpu', micros: cpu.user + cpu.system });
      return;
    }
    const counts: RequestCounts = { writes: {}, reads: {}, conflicts: 0 };
    for (const entry of sandbox.requestLog.slice(from)) {
      if (!entry.userAgent?.startsWith(ENGINE_UA_PREFIX)) continue;
      if (entry.status === 409) counts.conflicts++;
      // Buckets and Tables alike: what each resource costs, whatever its kind.
      const resource = entry.resource === 'buckets' || entry.resource === 'tables' ? 'object' : entry.resource;
      const what = `${resource}${entry.subresource ? `/${entry.subresource}` : ''} ${entry.verb}`;
      const into = WRITE_VERBS.has(entry.verb) ? counts.writes : counts.reads;
      into[what] = (into[what] ?? 0) + 1;
    }
    send({ type: 'counts', counts });
  });
  process.on('disconnect', () => void sandbox.stop().finally(() => process.exit(0)));
  send({ type: 'ready', kubeconfig: sandbox.kubeconfig });
}

// ---- the engine process ----------------------------------------------------

/**
 * `readyCounts`: report when that many objects of each batch are Ready in the engine's own informer
 * cache (all 0: do not).
 */
async function runEngine(kubeconfig: string, workers: number, readyCounts: Record<Batch, number>): Promise<void> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { CoreMetrics, Engine } = await import('@k8or/core');
  const { InMemoryCloud, inMemoryProviderPlugin } = await import('@k8or/core/testing');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  const cloud = new InMemoryCloud();
  const metrics = new CoreMetrics();
  const engine = new Engine({
    kubeConfig,
    providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]),
    clusterId: 'bench',
    identity: 'throughput',
    workers,
    namespace: NAMESPACE,
    metrics,
  });
  let cpuFrom = process.cpuUsage();
  let callsFrom = 0;
  let reconcilesFrom: Record<string, number> = {};
  const reconcilesByController = async (): Promise<Record<string, number>> => {
    const reconciles: Record<string, number> = {};
    for (const v of (await metrics.reconcileTotal.get()).values) reconciles[String(v.labels.controller)] = (reconciles[String(v.labels.controller)] ?? 0) + v.value;
    return reconciles;
  };
  await engine.start();
  if (readyCounts.measured > 0) {
    // Readiness from the engine's own watch: no extra watcher for the API server to feed.
    const seen = readinessTracker(readyCounts, (batch, readyAt) => send({ type: 'all-ready', batch, readyAt: [...readyAt] }));
    for (const [kind, controller] of engine.controllers) {
      controller.informer.on('add', seen(kind));
      controller.informer.on('update', seen(kind));
    }
  }
  process.on('message', (message: ToEngine) => {
    if (message.type === 'mark') {
      // The measured batch starts: what the warm-up cost is not counted.
      cpuFrom = process.cpuUsage();
      callsFrom = cloud.calls.length;
      void reconcilesByController().then((r) => (reconcilesFrom = r));
      return;
    }
    void (async () => {
      await engine.stop();
      const cloudCalls: Record<string, number> = {};
      for (const call of cloud.calls.slice(callsFrom)) cloudCalls[`${call.kind} ${call.operation}`] = (cloudCalls[`${call.kind} ${call.operation}`] ?? 0) + 1;
      const reconciles = await reconcilesByController();
      for (const [controller, n] of Object.entries(reconcilesFrom)) reconciles[controller] = (reconciles[controller] ?? 0) - n;
      const cpu = process.cpuUsage(cpuFrom);
      send({ type: 'stopped', cloudCalls, reconciles, cpuMicros: cpu.user + cpu.system });
      process.disconnect();
    })();
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

function send(message: FromServer | FromEngine): void {
  process.send?.(message);
}

// ---- the benchmark's client ------------------------------------------------

interface Scenario {
  workers: number;
  seconds: number;
  resources: number;
  latencies: Record<Kind, number[]>;
  counts: RequestCounts;
  cloudCalls: Record<string, number>;
  reconciles: Record<string, number>;
  engineCpuMicros: number;
  serverCpuMicros: number;
  /** The bound's rounds of raw creates, before the run and after it. */
  bound: { rate: number; cpuMicros: number }[];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      buckets: { type: 'string', default: '1000' },
      tables: { type: 'string', default: '1000' },
      workers: { type: 'string', default: '1,10,50' },
      'bound-writes': { type: 'string', default: '2000' },
      // Rounds of raw creates before the run and again after it; the bound is their median.
      'bound-rounds': { type: 'string', default: '3' },
      // Resources (half Buckets, half Tables) taken to Ready before the measured batch, so its
      // writes run on code V8 has already compiled, as the bound's creates do; 0: none.
      'warm-up': { type: 'string', default: '400' },
      // V8 CPU profiles of the API server and engine processes (`node bench/cpuprofile-top.ts FILE`).
      'cpu-prof': { type: 'string' },
      // Node/V8 flags for the engine's process alone, space-separated (the image's: --engine-node-flags="--max-semi-space-size=2 --optimize-for-size --max-opt=2").
      'engine-node-flags': { type: 'string', default: '' },
      // engine: readiness from the engine's own informer cache; watch: from a watch in this process.
      'ready-from': { type: 'string', default: 'engine' },
    },
  });
  const readyFrom = values['ready-from'];
  if (readyFrom !== 'engine' && readyFrom !== 'watch') throw new Error('--ready-from: engine or watch');
  const counts = { Bucket: Number(values.buckets), Table: Number(values.tables) };
  const workerCounts = values.workers.split(',').map(Number);
  const boundWrites = Number(values['bound-writes']);
  const boundRounds = Number(values['bound-rounds']);
  const warmUpTotal = Number(values['warm-up']);
  const warmUp = { Bucket: Math.ceil(warmUpTotal / 2), Table: Math.floor(warmUpTotal / 2) };
  const scenarios: Scenario[] = [];
  const loadBefore = loadAverage();
  for (const workers of workerCounts) {
    scenarios.push(await runScenario(workers, counts, warmUp, boundWrites, boundRounds, readyFrom, values['cpu-prof'], values['engine-node-flags'].split(' ').filter(Boolean)));
    console.error(`workers ${workers}: ${scenarios.at(-1)?.seconds.toFixed(2)} s`);
  }
  report(scenarios, counts, warmUp, loadBefore, loadAverage(), boundWrites, boundRounds, readyFrom);
}

function loadAverage(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

function child(args: string[], cpuProfileDir?: string, nodeFlags: string[] = []): { process: ChildProcess; next: <T>() => Promise<T> } {
  const execArgv = [...nodeFlags, ...(cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfileDir] : [])];
  const proc = fork(new URL(import.meta.url).pathname, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  const next = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`child ${args[0]} exited with ${code}`));
      proc.once('exit', onExit);
      proc.once('message', (m) => {
        proc.off('exit', onExit);
        resolve(m as T);
      });
    });
  return { process: proc, next };
}

async function runScenario(workers: number, counts: Record<Kind, number>, warmUp: Record<Kind, number>, boundWrites: number, boundRounds: number, readyFrom: ReadyFrom, cpuProfileDir: string | undefined, engineNodeFlags: string[]): Promise<Scenario> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { API_VERSION, genericDefaultName } = await import('@k8or/api');
  const { KubeRest, corePath, createInformer, installCrds, k8orPath } = await import('@k8or/core');

  const server = child(['--serve'], cpuProfileDir);
  const ready = await server.next<FromServer>();
  if (ready.type !== 'ready') throw new Error('unexpected message from the API server process');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(ready.kubeconfig);
  const user = new KubeRest(kubeConfig, { userAgent: BENCH_UA });
  await installCrds(kubeConfig);
  for (;;) {
    try {
      await user.get(k8orPath('Table', NAMESPACE));
      await user.get(k8orPath('Bucket', NAMESPACE));
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1' } });
  for (const name of [NAMESPACE, BOUND_NAMESPACE]) await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

  const manifest = (kind: Kind, namespace: string, name: string): object => ({
    apiVersion: API_VERSION,
    kind,
    metadata: { name, namespace },
    spec: {
      name: genericDefaultName({ clusterId: 'bench', namespace, name }),
      ...(kind === 'Bucket' ? { location: 'mem-1', versioning: true } : { partitionKey: { name: 'id', type: 'string' } }),
    },
  });
  /** Creates the objects, IN_FLIGHT at a time; calls `created` with each one's acknowledgement time. */
  const createAll = async (items: { kind: Kind; namespace: string; name: string }[], created?: (kind: Kind, name: string, at: number) => void): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < items.length) {
          const item = items[next++]!;
          await user.create(k8orPath(item.kind, item.namespace), manifest(item.kind, item.namespace, item.name));
          created?.(item.kind, item.name, now());
        }
      }),
    );
  };
  let boundRound = 0;
  /** Raw keep-alive creates per second, Buckets and Tables alternating, in a namespace the engine does not watch. */
  const serverCpuMicros = async (): Promise<number> => {
    const reply = server.next<FromServer>();
    server.process.send({ type: 'cpu' } satisfies ToServer);
    const cpu = await reply;
    if (cpu.type !== 'cpu') throw new Error('unexpected message');
    return cpu.micros;
  };
  /** Raw keep-alive creates: per second, and the server's CPU per create. */
  const measureBound = async (): Promise<{ rate: number; cpuMicros: number }> => {
    const round = boundRound++;
    const items = Array.from({ length: boundWrites }, (_, i) => ({ kind: (i % 2 === 0 ? 'Bucket' : 'Table') as Kind, namespace: BOUND_NAMESPACE, name: `raw-${round}-${i}` }));
    server.process.send({ type: 'mark' } satisfies ToServer);
    const started = performance.now();
    await createAll(items);
    const rate = boundWrites / ((performance.now() - started) / 1000);
    return { rate, cpuMicros: (await serverCpuMicros()) / boundWrites };
  };

  await measureBound(); // warm-up: the schemas compile, the connections open
  const bound: { rate: number; cpuMicros: number }[] = [];
  for (let i = 0; i < boundRounds; i++) bound.push(await measureBound());

  const total = counts.Bucket + counts.Table;
  const warmUpTotal = warmUp.Bucket + warmUp.Table;
  const totals: Record<Batch, number> = { 'warm-up': warmUpTotal, measured: total };
  const engineArgs = readyFrom === 'engine' ? [warmUpTotal, total] : [0, 0];
  const engine = child(['--engine', ready.kubeconfig, String(workers), ...engineArgs.map(String)], cpuProfileDir, engineNodeFlags);
  if ((await engine.next<FromEngine>()).type !== 'ready') throw new Error('unexpected message from the engine process');

  // Readiness: each object counts once, the first time it is seen Ready for its generation, either in
  // the engine's own informer cache or in a watch of this process's (a second watcher on the server).
  const createdAt = new Map<string, number>();
  let readyAt = new Map<string, number>();
  const informers: Informer<Watched & { metadata: { name?: string } }>[] = [];
  let warmedUp = (): void => {};
  const warm = new Promise<void>((resolve) => (warmedUp = resolve));
  const done = new Promise<void>((resolve) => {
    const allReady = (batch: Batch, all: Map<string, number>): void => {
      if (batch === 'warm-up') return warmedUp();
      readyAt = all;
      resolve();
    };
    if (readyFrom === 'engine') {
      engine.process.on('message', (m: FromEngine) => {
        if (m.type === 'all-ready') allReady(m.batch, new Map(m.readyAt));
      });
      return;
    }
    const seen = readinessTracker(totals, allReady);
    for (const kind of ['Bucket', 'Table'] as const) {
      const informer = createInformer<Watched & { metadata: { name?: string } }>({ kubeConfig, group: 'k8or.io', version: 'v1alpha1', plural: kind === 'Bucket' ? 'buckets' : 'tables', namespace: NAMESPACE });
      informer.on('add', seen(kind));
      informer.on('update', seen(kind));
      informers.push(informer);
    }
  });
  await Promise.all(informers.map((i) => i.start()));

  /** Buckets and Tables alternating, as many of each as asked. */
  const batch = (of: Record<Kind, number>, prefix: string): { kind: Kind; namespace: string; name: string }[] => {
    const items: { kind: Kind; namespace: string; name: string }[] = [];
    for (let i = 0; i < Math.max(of.Bucket, of.Table); i++) {
      if (i < of.Bucket) items.push({ kind: 'Bucket', namespace: NAMESPACE, name: `${prefix}b-${i}` });
      if (i < of.Table) items.push({ kind: 'Table', namespace: NAMESPACE, name: `${prefix}t-${i}` });
    }
    return items;
  };
  if (warmUpTotal > 0) {
    await createAll(batch(warmUp, WARM_UP_PREFIX));
    await warm;
  }

  server.process.send({ type: 'mark' } satisfies ToServer);
  engine.process.send({ type: 'mark' } satisfies ToEngine);
  const items = batch(counts, '');
  const started = now();
  await createAll(items, (kind, name, at) => createdAt.set(`${kind}/${name}`, at));
  await done;
  const seconds = (Math.max(...readyAt.values()) - started) / 1000;

  const serverCpu = await serverCpuMicros();
  const countsReply = server.next<FromServer>();
  server.process.send({ type: 'counts' } satisfies ToServer);
  const requestCounts = await countsReply;
  for (const informer of informers) informer.stop();
  const stopped = engine.next<FromEngine>();
  engine.process.send({ type: 'stop' } satisfies ToEngine);
  const engineResult = await stopped;
  if (engineResult.type !== 'stopped' || requestCounts.type !== 'counts') throw new Error('unexpected message');
  for (let i = 0; i < boundRounds; i++) bound.push(await measureBound());

  user.close();
  server.process.disconnect();
  await new Promise((resolve) => server.process.once('exit', resolve));

  const latencies: Record<Kind, number[]> = { Bucket: [], Table: [] };
  for (const [key, at] of readyAt) {
    const [kind] = key.split('/') as [Kind];
    latencies[kind].push(at - (createdAt.get(key) ?? started));
  }
  return {
    workers,
    seconds,
    resources: total,
    latencies,
    counts: requestCounts.counts,
    cloudCalls: engineResult.cloudCalls,
    reconciles: engineResult.reconciles,
    engineCpuMicros: engineResult.cpuMicros,
    serverCpuMicros: serverCpu,
    bound,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const sum = (record: Record<string, number>, match: (key: string) => boolean = () => true): number =>
  Object.entries(record).reduce((total, [key, n]) => total + (match(key) ? n : 0), 0);

function report(scenarios: Scenario[], counts: Record<Kind, number>, warmUp: Record<Kind, number>, loadBefore: string, loadAfter: string, boundWrites: number, boundRounds: number, readyFrom: ReadyFrom): void {
  console.log(`\nThroughput to Ready: ${counts.Bucket} Buckets + ${counts.Table} Tables, readiness from ${readyFrom === 'engine' ? "the engine's informer cache" : 'a watch of the benchmark'}, after a warm-up batch of ${warmUp.Bucket} Buckets + ${warmUp.Table} Tables taken to Ready, node ${process.version}, ${new Date().toISOString()}, load average ${loadBefore} (start) / ${loadAfter} (end)\n`);
  console.log(`| workers | all Ready (s) | resources/s | raw writes/s (median; least to most) | API writes per resource (engine + create) | bound (resources/s) | **ratio** | p50 / p99 to Ready, Bucket (ms) | p50 / p99 to Ready, Table (ms) |`);
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of scenarios) {
    const engineWrites = sum(s.counts.writes) / s.resources;
    const rates = s.bound.map((b) => b.rate);
    const raw = median(rates);
    const bound = raw / (engineWrites + 1);
    const rate = s.resources / s.seconds;
    const lat = (kind: Kind) => `${percentile(s.latencies[kind], 50).toFixed(0)} / ${percentile(s.latencies[kind], 99).toFixed(0)}`;
    console.log(
      `| ${s.workers} | ${s.seconds.toFixed(2)} | ${rate.toFixed(0)} | ${raw.toFixed(0)} (${Math.min(...rates).toFixed(0)} to ${Math.max(...rates).toFixed(0)}) | ${engineWrites.toFixed(2)} + 1 | ${bound.toFixed(0)} | **${(rate / bound).toFixed(2)}** | ${lat('Bucket')} | ${lat('Table')} |`,
    );
  }
  console.log(`\n(raw writes: ${boundRounds} rounds of ${boundWrites} creates over ${IN_FLIGHT} keep-alive connections before each run and ${boundRounds} after it; bound = the rounds' median raw rate / API writes per resource)\n`);
  console.log('| workers | API server CPU per raw create (ms, median; least to most) | API server CPU per resource in the run (ms) | CPU the writes need (ms: raw create x writes per resource) | **CPU ratio** (need / spent) |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const s of scenarios) {
    const cpus = s.bound.map((b) => b.cpuMicros / 1000);
    const perRaw = median(cpus);
    const spent = s.serverCpuMicros / 1000 / s.resources;
    const need = perRaw * (sum(s.counts.writes) / s.resources + 1);
    console.log(`| ${s.workers} | ${perRaw.toFixed(2)} (${Math.min(...cpus).toFixed(2)} to ${Math.max(...cpus).toFixed(2)}) | ${spent.toFixed(2)} | ${need.toFixed(2)} | **${(need / spent).toFixed(2)}** |`);
  }
  console.log('');
  console.log('| workers | engine writes per resource, by request | engine reads per resource | 409s | cloud calls per Bucket | cloud calls per Table | reconciles per resource | engine CPU per resource (ms) | API server CPU per resource (ms) |');
  console.log('|---:|---|---|---:|---:|---:|---:|---:|---:|');
  for (const s of scenarios) {
    const per = (n: number) => (n / s.resources).toFixed(2);
    const writes = Object.entries(s.counts.writes).sort().map(([k, n]) => `${k} ${per(n)}`).join(', ');
    const reads = Object.entries(s.counts.reads).sort().map(([k, n]) => `${k} ${per(n)}`).join(', ');
    console.log(
      `| ${s.workers} | ${writes} | ${reads} | ${s.counts.conflicts} | ${(sum(s.cloudCalls, (k) => k.startsWith('Bucket ')) / counts.Bucket).toFixed(2)} | ${(sum(s.cloudCalls, (k) => k.startsWith('Table ')) / counts.Table).toFixed(2)} | ${per(sum(s.reconciles))} | ${(s.engineCpuMicros / 1000 / s.resources).toFixed(2)} | ${(s.serverCpuMicros / 1000 / s.resources).toFixed(2)} |`,
    );
  }
}

/** The wall clock shared by the three processes (ms). */
const now = (): number => performance.timeOrigin + performance.now();

interface Watched {
  metadata?: { name?: string; generation?: number };
  status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
}

/**
 * Records when each object is first seen Ready for its generation (Ready=True, observedGeneration =
 * generation); calls `allReady` once `total` objects are.
 */
function readinessTracker(totals: Record<Batch, number>, allReady: (batch: Batch, readyAt: Map<string, number>) => void): (kind: Kind) => (obj: Watched) => void {
  const readyAt: Record<Batch, Map<string, number>> = { 'warm-up': new Map(), measured: new Map() };
  return (kind) => (obj) => {
    const name = obj.metadata?.name ?? '';
    const batch = readyAt[batchOf(name)];
    const key = `${kind}/${name}`;
    if (batch.has(key)) return;
    const isReady = obj.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && obj.status.observedGeneration === obj.metadata?.generation;
    if (!isReady) return;
    batch.set(key, now());
    if (batch.size === totals[batchOf(name)]) allReady(batchOf(name), batch);
  };
}

const role = process.argv[2];
if (role === '--serve') await serve();
else if (role === '--engine') await runEngine(process.argv[3] ?? '', Number(process.argv[4]), { 'warm-up': Number(process.argv[5]), measured: Number(process.argv[6]) });
else await main();
