// Drift-check schedule benchmark: projected against measured drift-check calls under a
// ProviderConfig's driftCheckBudget, and the calls made right after a restart of resources in
// sync against what the schedule says, over the sandbox API server and the in-memory cloud.
//
//   npm run build && node bench/drift-schedule.bench.ts [--resources 1000] [--interval-seconds 30] [--window-seconds 120] [--restart-seconds 300]
//
// Time is real (the engine's work queue runs on the process clock; it takes no injected clock), so
// the hour is compressed: every Bucket asks for a check four times as often as the budget allows,
// and the budget is set so that it allows one check per Bucket every --interval-seconds. Calls are
// counted where they arrive, in the in-memory cloud's call log (one call per observe).
// Prints Markdown rows for docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type Bucket } from '@k8or/api';
import { CoreMetrics, Engine, KubeRest, corePath, formatGoDuration, installCrds, k8orPath, nextCheckAt } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin } from '@k8or/core/testing';
import { startSandbox } from '@k8or/apiserver';

const { values } = parseArgs({
  options: {
    resources: { type: 'string', default: '1000' },
    'interval-seconds': { type: 'string', default: '30' },
    'window-seconds': { type: 'string', default: '120' },
    'restart-seconds': { type: 'string', default: '300' },
    workers: { type: 'string', default: '10' },
  },
});
const RESOURCES = Number(values.resources);
const INTERVAL_MS = Number(values['interval-seconds']) * 1000;
const WINDOW_MS = Number(values['window-seconds']) * 1000;
const RESTART_MS = Number(values['restart-seconds']) * 1000;
const WORKERS = Number(values.workers);
// One call per check (the in-memory provider's observeCalls): the budget that allows one check per Bucket every INTERVAL_MS.
const BUDGET = Math.round((RESOURCES * 3_600_000) / INTERVAL_MS);
const HOUR = 3_600_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 1_800_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('benchmark timed out');
    await sleep(100);
  }
}

const sandbox = await startSandbox({ logLevel: 'error' });
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(sandbox.kubeconfig);
const user = new KubeRest(kubeConfig, { userAgent: 'k8or-bench-user' });
await installCrds(kubeConfig);
await until(async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
await user.create(k8orPath('ProviderConfig', undefined), {
  apiVersion: API_VERSION,
  kind: 'ProviderConfig',
  metadata: { name: 'default' },
  spec: { provider: 'aws', region: 'mem-1', driftCheckBudget: { callsPerHour: BUDGET } },
});
await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });

const cloud = new InMemoryCloud();
const startEngine = async (metrics: CoreMetrics): Promise<Engine> => {
  const engine = new Engine({
    kubeConfig,
    providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]),
    clusterId: 'bench',
    workers: WORKERS,
    kinds: ['Bucket'],
    metrics,
    // Each Bucket asks for four times as many checks as the budget allows.
    resyncPeriodMs: INTERVAL_MS / 4,
    resyncFloorMs: 1_000,
    eventAggregationIntervalMs: 600_000,
  });
  await engine.start();
  return engine;
};

const isReady = (b: Bucket) => b.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && b.status?.observedGeneration === b.metadata.generation;
const inForce = formatGoDuration(INTERVAL_MS);

let metrics = new CoreMetrics();
let engine = await startEngine(metrics);
const created = performance.now();
const names = Array.from({ length: RESOURCES }, (_, i) => `b-${i}`);
for (let i = 0; i < names.length; i += 50) {
  await Promise.all(names.slice(i, i + 50).map((name) => user.create(k8orPath('Bucket', 'bench'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'bench' }, spec: {} })));
}
const informer = () => engine.controllers.get('Bucket')!.informer;
// Ready, and checked at the interval the budget allows (every status shows it once its first lengthened check is done).
let reported = performance.now();
await until(() => {
  const list = informer().cache.list();
  if (performance.now() - reported > 30_000) {
    reported = performance.now();
    const shown = new Map<string, number>();
    for (const b of list) shown.set(b.status?.driftCheckInterval ?? '-', (shown.get(b.status?.driftCheckInterval ?? '-') ?? 0) + 1);
    process.stderr.write(`${list.length} listed, ${list.filter(isReady).length} ready; intervals shown: ${JSON.stringify(Object.fromEntries(shown))}\n`);
  }
  return list.length === RESOURCES && list.every((b) => isReady(b) && b.status?.driftCheckInterval === inForce);
});
process.stderr.write(`${RESOURCES} Buckets ready at ${inForce} after ${((performance.now() - created) / 1000).toFixed(0)} s\n`);

// 1. Projected against measured, over whole rounds of the schedule.
await sleep(INTERVAL_MS);
const plan = engine.driftCheckPlans().find((p) => p.providerConfig === 'default');
const counted = async () => (await metrics.driftCheckCallsTotal.get()).values.reduce((sum, v) => sum + v.value, 0);
const from = Date.now();
const countedBefore = await counted();
await sleep(WINDOW_MS);
const to = Date.now();
const arrivals = cloud.calls.filter((c) => c.at >= from && c.at < to && c.operation === 'observe').map((c) => c.at);
const measuredPerHour = (arrivals.length * HOUR) / (to - from);
const countedPerHour = (((await counted()) - countedBefore) * HOUR) / (to - from);
// The most calls in any window of one minute (scaled with the hour: INTERVAL_MS / 60 of the compressed hour is one minute's share).
const worstMinute = busiestWindow(arrivals, 60_000);
const budgetPerMinute = BUDGET / 60;

// 2. A restart: the new engine finds every Bucket in sync and checks each at its slot.
const uids = informer().cache.list().map((b) => b.metadata.uid ?? '');
await engine.stop();
metrics = new CoreMetrics();
const restarted = Date.now();
engine = await startEngine(metrics);
const scheduled = Date.now();
await sleep(RESTART_MS);
const restartCalls = cloud.calls.filter((c) => c.at >= restarted && c.at < restarted + RESTART_MS && c.operation === 'observe').map((c) => c.at);
// What the schedule says: every slot of every Bucket from when the engine scheduled them to the end of the window.
let due = 0;
for (const uid of uids) for (let at = nextCheckAt(uid, INTERVAL_MS, scheduled); at < restarted + RESTART_MS; at += INTERVAL_MS) due += 1;
const firstSecond = restartCalls.filter((at) => at < scheduled + 1_000).length;
const busiestSecond = busiestWindow(restartCalls, 1_000);
await engine.stop();
user.close();
await sandbox.stop();

const pct = (a: number, b: number) => `${a >= b ? '+' : ''}${(((a - b) / b) * 100).toFixed(1)} %`;
const n = (x: number) => Math.round(x).toLocaleString('en-US');
console.log(`| resources | budget (calls/h) | interval in force | projected (calls/h) | measured at the cloud (calls/h) | vs projected | k8or_drift_check_calls_total (calls/h) | busiest minute / budget's minute |`);
console.log(`|---|---|---|---|---|---|---|---|`);
console.log(
  `| ${n(RESOURCES)} | ${n(BUDGET)} | ${inForce} (asked ${formatGoDuration(INTERVAL_MS / 4)}) | ${n(plan?.projectedCallsPerHour ?? 0)} | ${n(measuredPerHour)} over ${WINDOW_MS / 1000} s | ${pct(measuredPerHour, plan?.projectedCallsPerHour ?? 1)} | ${n(countedPerHour)} | ${worstMinute} / ${n(budgetPerMinute)} |`,
);
console.log('');
console.log(`| resources in sync | first ${RESTART_MS / 1000} s after the restart: calls | due by the schedule | vs schedule | calls in the first second | busiest second (even spread: ${(RESOURCES / (INTERVAL_MS / 1000)).toFixed(0)}/s) |`);
console.log(`|---|---|---|---|---|---|`);
console.log(`| ${n(RESOURCES)} | ${n(restartCalls.length)} | ${n(due)} | ${pct(restartCalls.length, due)} | ${firstSecond} | ${busiestSecond} |`);

/** The most arrivals in any window of `ms`. */
function busiestWindow(times: readonly number[], ms: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j]! - sorted[i]! >= ms) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}
