// Drift latency benchmark: the time from a change made in the cloud to its report in status, across
// many Buckets under a drift-check interval, against that interval (the goal: never later).
//
//   npm run build && node bench/drift-latency.bench.ts [--resources 1000] [--interval-seconds 30] [--changes 200] [--window-seconds 60] [--seed 1]
//
// The setup is the drift-check schedule benchmark's (support/drift-run.ts): the sandbox API server
// and an Engine over the in-memory cloud, a ProviderConfig budget that allows one check per Bucket
// every --interval-seconds, Buckets that ask for four times as many. Every Bucket has a label and
// driftPolicy Report, so drift stays in status once shown. Once every Bucket shows the interval in
// force, --changes Buckets drawn at random (seeded) have their label changed in the cloud, each at
// a random moment of --window-seconds; each is timed from its change to the first moment the
// engine's informer (a watch of the API server) holds a status that shows the drift (polled every
// 50 ms). Prints a Markdown row for docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { Annotations, type Bucket } from '@k8or/api';
import { seededRandom } from '@k8or/local-clouds';
import { DriftRun, sleep } from './support/drift-run.ts';

const { values } = parseArgs({
  options: {
    resources: { type: 'string', default: '1000' },
    'interval-seconds': { type: 'string', default: '30' },
    changes: { type: 'string', default: '200' },
    'window-seconds': { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    workers: { type: 'string', default: '10' },
  },
});
const RESOURCES = Number(values.resources);
const INTERVAL_MS = Number(values['interval-seconds']) * 1000;
const CHANGES = Math.min(Number(values.changes), RESOURCES);
const WINDOW_MS = Number(values['window-seconds']) * 1000;
const POLL_MS = 50;

const next = seededRandom(Number(values.seed));

const run = new DriftRun({
  resources: RESOURCES,
  intervalMs: INTERVAL_MS,
  workers: Number(values.workers),
  spec: { labels: { team: 'media' }, driftPolicy: { default: 'Report' } },
});
await run.start();
await run.createBuckets();

const shows = (b: Bucket | undefined) => b?.status?.drift?.some((d) => d.field.startsWith('spec.labels')) === true;
const byName = () => new Map(run.buckets().map((b) => [b.metadata.name ?? '', b]));
const externalName = (b: Bucket) => b.metadata.annotations?.[Annotations.externalName] ?? b.spec.name ?? b.metadata.name ?? '';

// The draw: which Buckets change, and when (ms after the window opens).
const pool = [...run.names];
const planned = Array.from({ length: CHANGES }, () => {
  const [name] = pool.splice(Math.floor(next() * pool.length), 1);
  return { name: name!, offset: Math.floor(next() * WINDOW_MS) };
}).sort((a, b) => a.offset - b.offset);

const changedAt = new Map<string, number>();
const latency = new Map<string, number>();
const opened = Date.now();
const changing = (async () => {
  const objects = byName();
  for (const { name, offset } of planned) {
    const wait = opened + offset - Date.now();
    if (wait > 0) await sleep(wait);
    const object = objects.get(name);
    const bucket = object ? run.cloud.buckets.get(externalName(object)) : undefined;
    if (!bucket) throw new Error(`no bucket in the cloud for ${name}`);
    bucket.labels = { ...bucket.labels, team: `changed-${offset}` };
    changedAt.set(name, Date.now());
  }
})();
const watching = (async () => {
  while (latency.size < CHANGES) {
    const objects = byName();
    const now = Date.now();
    for (const [name, at] of changedAt) if (!latency.has(name) && shows(objects.get(name))) latency.set(name, now - at);
    if (now - opened > WINDOW_MS + 10 * INTERVAL_MS) break;
    await sleep(POLL_MS);
  }
})();
await Promise.all([changing, watching]);
// A Bucket that did not change must not show drift: the count of false reports.
const falseReports = [...byName().values()].filter((b) => !changedAt.has(b.metadata.name ?? '') && shows(b)).length;

// Where the time went: until the first check (observe) after the change, and from it to the status.
const toCheck: number[] = [];
const checkToStatus: number[] = [];
for (const [name, at] of changedAt) {
  const shown = latency.get(name);
  const object = byName().get(name);
  const checked = run.cloud.calls.find((c) => c.operation === 'observe' && c.at >= at && object && c.name === externalName(object));
  if (!checked || shown === undefined) continue;
  toCheck.push(checked.at - at);
  checkToStatus.push(at + shown - checked.at);
}
await run.stop();

const ordered = (values: Iterable<number>) => [...values].sort((a, b) => a - b);
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const sorted = ordered(latency.values());
const late = sorted.filter((ms) => ms > INTERVAL_MS);
const worst = sorted.at(-1) ?? NaN;
const checks = ordered(toCheck);
const pipeline = ordered(checkToStatus);
console.log('| resources | interval in force | changes (over) | change to status: p50 | p99 | max | later than the interval (by at most) | change to its first check: max | check to status: p50 / max | never shown | shown without a change |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
console.log(
  `| ${RESOURCES.toLocaleString('en-US')} | ${run.inForce} | ${CHANGES} (${WINDOW_MS / 1000} s) | ${s(quantile(sorted, 0.5))} | ${s(quantile(sorted, 0.99))} | ${s(worst)} | ${late.length}${late.length > 0 ? ` (${Math.round(worst - INTERVAL_MS)} ms)` : ''} | ${s(checks.at(-1) ?? NaN)} | ${Math.round(quantile(pipeline, 0.5))} / ${Math.round(pipeline.at(-1) ?? NaN)} ms | ${CHANGES - latency.size} | ${falseReports} |`,
);
