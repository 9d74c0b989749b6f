// Reconcile engine benchmark: API writes and cloud calls per reconcile (create,
// no-op resync, drift repair), and reconciles per second for many resources,
// against the sandbox API server and the in-memory cloud provider.
//
//   npm run build && node bench/engine.bench.ts [--resources 1000] [--workers 10]
//
// Prints a Markdown table for docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, genericDefaultName, type Bucket } from '@k8or/api';
import { CoreMetrics, Engine, KubeRest, corePath, installCrds, k8orPath } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin } from '@k8or/core/testing';
import { startSandbox, type RequestLogEntry } from '@k8or/apiserver';

const { values } = parseArgs({ options: { resources: { type: 'string', default: '1000' }, workers: { type: 'string', default: '10' } } });
const RESOURCES = Number(values.resources);
const WORKERS = Number(values.workers);
const SAMPLE = 50;
const USER_AGENT = 'k8or-bench-user';
const WRITES = new Set(['create', 'update', 'patch', 'delete']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('benchmark timed out');
    await sleep(20);
  }
}

const sandbox = await startSandbox({ logLevel: 'error', recordRequests: true });
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(sandbox.kubeconfig);
const user = new KubeRest(kubeConfig, { userAgent: USER_AGENT });
await installCrds(kubeConfig);
await until(async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
await user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1' } });
await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });

const cloud = new InMemoryCloud();
const metrics = new CoreMetrics();
const engine = new Engine({
  kubeConfig,
  providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]),
  clusterId: 'bench',
  workers: WORKERS,
  kinds: ['Bucket'],
  metrics,
});
await engine.start();
const controller = engine.controllers.get('Bucket');
if (!controller) throw new Error('no Bucket controller');

const engineWrites = (entries: RequestLogEntry[]) => entries.filter((e) => e.userAgent !== USER_AGENT && WRITES.has(e.verb));
const reconciles = async (): Promise<number> => (await metrics.reconcileTotal.get()).values.filter((v) => v.labels.controller === 'bucket').reduce((sum, v) => sum + v.value, 0);
const isReady = (b: Bucket) => b.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && b.status?.observedGeneration === b.metadata.generation;
async function listBuckets(): Promise<Bucket[]> {
  return (await user.get<{ items: Bucket[] }>(k8orPath('Bucket', 'bench')))?.items ?? [];
}
async function createBuckets(prefix: string, count: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(
      names.slice(i, i + 50).map((name) => user.create(k8orPath('Bucket', 'bench'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'bench' }, spec: {} })),
    );
  }
}
/**
 * Resolves once `count` Buckets named `prefix-*` are Ready, as the engine's own informer sees them:
 * no list polling, which cost the one process more CPU than the engine itself.
 * (bench/throughput.bench.ts runs the API server and the engine in processes of their own.)
 */
function allReady(prefix: string, count: number): Promise<void> {
  const ready = new Set<string>();
  return new Promise((resolve) => {
    const seen = (obj: object) => {
      const b = obj as Bucket;
      if (!b.metadata.name?.startsWith(`${prefix}-`) || !isReady(b)) return;
      ready.add(b.metadata.name);
      if (ready.size === count) resolve();
    };
    controller!.informer.on('add', seen);
    controller!.informer.on('update', seen);
    for (const b of controller!.informer.cache.list()) seen(b);
  });
}
/** Waits until nothing reconciles any more (the counter stops moving). */
async function settle(): Promise<void> {
  let last = -1;
  for (;;) {
    const now = await reconciles();
    if (now === last && controller!.queue.len() === 0) return;
    last = now;
    await sleep(300);
  }
}

const rows: string[][] = [];

// 1. Creating SAMPLE resources, one at a time so each is counted alone: first
// with spec.name empty (no webhook: the engine writes it), then with spec.name
// already defaulted, as the mutating webhook does in a real install.
for (const [label, prefix, withName] of [
  ['create (spec.name set by the engine)', 'sample', false],
  ['create (spec.name defaulted by the webhook)', 'named', true],
] as const) {
  const from = sandbox.requestLog.length;
  const calls = cloud.calls.length;
  const before = await reconciles();
  for (let i = 0; i < SAMPLE; i++) {
    const name = `${prefix}-${i}`;
    const spec = { versioning: true, ...(withName ? { name: genericDefaultName({ clusterId: 'bench', namespace: 'bench', name }) } : {}) };
    await user.create(k8orPath('Bucket', 'bench'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'bench' }, spec });
    await until(async () => Boolean((await user.get<Bucket>(k8orPath('Bucket', 'bench', name)).then((b) => b && isReady(b)))));
  }
  await settle();
  const writes = engineWrites(sandbox.requestLog.slice(from));
  const toResource = writes.filter((w) => w.resource === 'buckets').length / SAMPLE;
  const events = writes.filter((w) => w.resource === 'events').length / SAMPLE;
  rows.push([label, `${toResource}`, `${events}`, `${(writes.length / SAMPLE).toFixed(2)}`, `${((cloud.calls.length - calls) / SAMPLE).toFixed(2)}`, `${((await reconciles()) - before) / SAMPLE}`]);
}

const keys = Array.from({ length: SAMPLE }, (_, i) => `bench/sample-${i}`);
const nameOf = (key: string): string => key.split('/')[1] ?? '';

// 2. A no-op resync of each: nothing changed anywhere.
{
  const from = sandbox.requestLog.length;
  const calls = cloud.calls.length;
  const before = await reconciles();
  for (const key of keys) controller.queue.add(key);
  await until(async () => (await reconciles()) >= before + SAMPLE);
  await settle();
  const writes = engineWrites(sandbox.requestLog.slice(from));
  rows.push(['no-op resync', `${writes.filter((w) => w.resource === 'buckets').length / SAMPLE}`, `${writes.filter((w) => w.resource === 'events').length / SAMPLE}`, `${writes.length / SAMPLE}`, `${((cloud.calls.length - calls) / SAMPLE).toFixed(2)}`, `${((await reconciles()) - before) / SAMPLE}`]);
}

// 3. Drift repair: versioning switched off behind k8or's back, then a resync.
{
  for (const key of keys) {
    const bucket = cloud.buckets.get(genericDefaultName({ clusterId: 'bench', namespace: 'bench', name: nameOf(key) }));
    if (bucket) bucket.versioning = false;
  }
  const from = sandbox.requestLog.length;
  const calls = cloud.calls.length;
  const before = await reconciles();
  for (const key of keys) controller.queue.add(key);
  await until(() => keys.every((key) => cloud.buckets.get(genericDefaultName({ clusterId: 'bench', namespace: 'bench', name: nameOf(key) }))?.versioning));
  await settle();
  const writes = engineWrites(sandbox.requestLog.slice(from));
  rows.push(['drift repair', `${writes.filter((w) => w.resource === 'buckets').length / SAMPLE}`, `${writes.filter((w) => w.resource === 'events').length / SAMPLE}`, `${writes.length / SAMPLE}`, `${((cloud.calls.length - calls) / SAMPLE).toFixed(2)}`, `${((await reconciles()) - before) / SAMPLE}`]);
}

// 4. Throughput: RESOURCES new buckets created at once, until all are Ready; then a no-op resync of all.
const throughput: string[][] = [];
{
  const before = await reconciles();
  const started = performance.now();
  const loaded = allReady('load', RESOURCES);
  await createBuckets('load', RESOURCES);
  await loaded;
  const seconds = (performance.now() - started) / 1000;
  await settle();
  const count = (await reconciles()) - before;
  throughput.push([`create ${RESOURCES}, until all Ready`, seconds.toFixed(2), `${count}`, (count / seconds).toFixed(0), (RESOURCES / seconds).toFixed(0)]);
}
{
  const all = (await listBuckets()).map((b) => `bench/${b.metadata.name}`);
  const before = await reconciles();
  const started = performance.now();
  for (const key of all) controller.queue.add(key);
  await until(async () => (await reconciles()) >= before + all.length);
  const seconds = (performance.now() - started) / 1000;
  throughput.push([`no-op resync of ${all.length}`, seconds.toFixed(2), `${all.length}`, (all.length / seconds).toFixed(0), (all.length / seconds).toFixed(0)]);
}

await engine.stop();
user.close();
await sandbox.stop();

console.log(`\nEngine benchmark: ${RESOURCES} resources, ${WORKERS} workers, node ${process.version}, ${new Date().toISOString()}\n`);
console.log('| reconcile | writes to the resource | Event writes | all API writes | cloud calls | reconciles |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
console.log('\n(per resource, averaged over', SAMPLE, 'resources)\n');
console.log('| run | seconds | reconciles | reconciles/s | resources/s |');
console.log('|---|---|---|---|---|');
for (const row of throughput) console.log(`| ${row.join(' | ')} |`);
