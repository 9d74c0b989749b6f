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
import { nextCheckAt, formatGoDuration } from '@k8or/core';
import { DriftRun, busiestWindow, sleep } from './support/drift-run.ts';

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
const HOUR = 3_600_000;

// One call per check (the in-memory provider's observeCalls): the budget allows one check per Bucket every INTERVAL_MS.
const run = new DriftRun({ resources: RESOURCES, intervalMs: INTERVAL_MS, workers: Number(values.workers) });
const { cloud, budget: BUDGET, inForce } = run;
await run.start();
await run.createBuckets();

// 1. Projected against measured, over whole rounds of the schedule.
await sleep(INTERVAL_MS);
const plan = run.engine.driftCheckPlans().find((p) => p.providerConfig === 'default');
const counted = async () => (await run.metrics.driftCheckCallsTotal.get()).values.reduce((sum, v) => sum + v.value, 0);
const from = Date.now();
const countedBefore = await counted();
process.stderr.write(`counting the calls of ${WINDOW_MS / 1000} s\n`);
await sleep(WINDOW_MS);
const to = Date.now();
const arrivals = cloud.calls.filter((c) => c.at >= from && c.at < to && c.operation === 'observe').map((c) => c.at);
const measuredPerHour = (arrivals.length * HOUR) / (to - from);
const countedPerHour = (((await counted()) - countedBefore) * HOUR) / (to - from);
// The most calls in any window of one minute (scaled with the hour: INTERVAL_MS / 60 of the compressed hour is one minute's share).
const worstMinute = busiestWindow(arrivals, 60_000);
const budgetPerMinute = BUDGET / 60;

// 2. A restart: the new engine finds every Bucket in sync and checks each at its slot.
const uids = run.buckets().map((b) => b.metadata.uid ?? '');
await run.engine.stop();
const restarted = Date.now();
await run.startEngine();
const scheduled = Date.now();
process.stderr.write(`restarted in ${scheduled - restarted} ms; counting the calls of ${RESTART_MS / 1000} s\n`);
await sleep(RESTART_MS);
const restartCalls = cloud.calls.filter((c) => c.at >= restarted && c.at < restarted + RESTART_MS && c.operation === 'observe').map((c) => c.at);
// What the schedule says: every slot of every Bucket from when the engine scheduled them to the end of the window.
let due = 0;
for (const uid of uids) for (let at = nextCheckAt(uid, INTERVAL_MS, scheduled); at < restarted + RESTART_MS; at += INTERVAL_MS) due += 1;
const firstSecond = restartCalls.filter((at) => at < scheduled + 1_000).length;
const busiestSecond = busiestWindow(restartCalls, 1_000);
await run.stop();

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
