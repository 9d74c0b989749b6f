// The operator process alone, at scale: memory, steady state and restart.
//
//   npm run build && node bench/operator-memory.bench.ts [--resources 10000] [--workers 10]
//        [--node-options "V8 FLAGS"] [--operator-env "NAME=VALUE ..."] [--webhook [--client-node-kubeconfig]] [--template 100] [--resync 1h] [--no-steady] [--steady-sample N] [--first-pass-limit N] [--heap-snapshot DIR] [--cpu-prof DIR] [--imports] [--s3-bucket-rate N]
//
// This process runs the API server (@k8or/apiserver `startSandbox`, request log on) and the S3
// fake (@k8or/local-clouds, keeping its state in a temporary dataDir); the operator
// (@k8or/operator `startManager`, provider aws, the real @aws-sdk/client-s3) runs in a child
// process started with --expose-gc (bench/support/operator-process.mjs), so its RSS and heap are
// its own. Steps:
//  1. idle: the operator with no Bucket, caches synced;
//  2. the operator creates `--template` Buckets (spec.name set, as the webhook would), until
//     every one is Ready for its generation; then it is killed (SIGKILL);
//  3. seed: the rest of the N Buckets are copies of an engine-made one (object, status, S3
//     state with its owner tags), renamed, written through the API and the S3 fake's dataDir,
//     so 50,000 take minutes, not hours; a wrong copy would show as writes in step 4;
//  4. restart: a new operator process; its memory once its caches are synced; time from spawn
//     until every Bucket was reconciled once and the queue is empty; its API writes and S3
//     writes (both must be 0); its memory at N. `--first-pass-limit M` stops after M
//     reconciles (for 50,000 on a slow machine), measures memory there and skips step 5.
//     A restart reconciles no Bucket in sync at once: each is checked at its slot of the
//     `--resync` period (docs/concepts.md, "The check schedule"), so this pass takes one whole
//     period: give a `--resync` of minutes, not the default hour;
//  5. steady state, with a `--resync` period (default 1h) longer than the restart's pass and short
//     enough to wait for: until every Bucket (or `--steady-sample` of them) was resynced once
//     more: the operator's CPU time, API writes and S3 requests per resync. A resync runs the
//     same reconcile as the restart's pass, so on a machine too slow for a short period the
//     restart table's CPU per reconcile is the figure to use (and `--no-steady`).
// `--imports` first measures what importing each module costs a fresh process (RSS after GC, with `--node-options`), and whether it loads node's own copy of undici.
// Prints Markdown for docs/benchmarks.md.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { readFile, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type Bucket } from '@k8or/api';
import { KubeRest, LAST_APPLIED_ANNOTATION, corePath, createInformer, installCrds, isAlreadyExists, k8orPath } from '@k8or/core';
import { specDigest } from '@k8or/core/policy';
import { startSandbox } from '@k8or/apiserver';
import { s3BucketFile, startS3Fake } from '@k8or/local-clouds';

const { values } = parseArgs({
  options: {
    resources: { type: 'string', default: '10000' },
    workers: { type: 'string', default: '10' },
    template: { type: 'string', default: '100' },
    resync: { type: 'string', default: '1h' },
    'no-steady': { type: 'boolean', default: false },
    'steady-sample': { type: 'string' },
    'first-pass-limit': { type: 'string' },
    'heap-snapshot': { type: 'string' },
    'cpu-prof': { type: 'string' },
    'node-options': { type: 'string', default: '' },
    'operator-env': { type: 'string', default: '' },
    webhook: { type: 'boolean', default: false },
    'client-node-kubeconfig': { type: 'boolean', default: false },
    imports: { type: 'boolean', default: false },
    // The ProviderConfig's spec.rateLimits s3-buckets requestsPerSecond (and burst): at the default
    // 50/s a pass of 6 reads per Bucket takes 20 minutes at 10,000 and 100 at 50,000.
    's3-bucket-rate': { type: 'string' },
  },
});
const RESOURCES = Number(values.resources);
const TEMPLATE = Math.min(RESOURCES, Number(values.template));
const SAMPLE = Math.min(RESOURCES, Number(values['steady-sample'] ?? RESOURCES));
const NAMESPACE = 'bench';
const USER_AGENT = 'k8or-bench-user';
const ACCESS_KEY = 'AKIAK8ORBENCH0000001';
const SECRET_KEY = 'bench-secret';
const API_WRITES = new Set(['create', 'update', 'patch', 'delete']);
/** Environment of the operator process only (e.g. MALLOC_ARENA_MAX=2): `--operator-env "A=1 B=2"`. */
const OPERATOR_ENV = Object.fromEntries(
  values['operator-env'].split(' ').filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--operator-env: NAME=VALUE pairs, got ${pair}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const CHILD = new URL('./support/operator-process.mjs', import.meta.url).pathname;

export interface OperatorStats {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** V8 heap spaces by name: bytes used. */
  spaces: Record<string, number>;
  /** Bytes V8 holds outside the JS heap for this isolate (malloced). */
  mallocedMemory: number;
  /** Resident bytes by mapping (/proc/self/smaps): the node binary, other files, anonymous. */
  resident: { nodeBinary: number; otherFiles: number; anonymous: number };
  /** User + system CPU time of the whole process, microseconds. */
  cpuMicros: number;
  /** controller_runtime_reconcile_total for the Bucket controller, every result. */
  reconciles: number;
  /** workqueue_depth of the Bucket queue. */
  queueDepth: number;
  /** controller_runtime_active_workers of the Bucket controller: reconciles running. */
  activeWorkers: number;
}
export type ToOperator = { type: 'stats'; memory: boolean } | { type: 'snapshot'; path: string };
export type FromOperator = { type: 'ready'; readyAt: number } | ({ type: 'stats' } & OperatorStats) | { type: 'snapshot'; path: string };


const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const load = () => loadavg()[0]!.toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (text: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${text}\n`);
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 3_600_000, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`benchmark timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

// --- what importing a module costs --------------------------------------------------------------

function importCost(specifier: string | undefined): { rss: number; heapUsed: number; undici: boolean } {
  const script = `${specifier ? `await import(${JSON.stringify(specifier)});` : ''} globalThis.gc(); await new Promise((r) => setTimeout(r, 50)); globalThis.gc(); const m = process.memoryUsage(); console.log(JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, undici: process.moduleLoadList.some((name) => name.includes('undici')) }));`;
  const run = spawnSync(process.execPath, ['--expose-gc', ...values['node-options'].split(' ').filter(Boolean), '--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`import ${specifier}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim()) as { rss: number; heapUsed: number; undici: boolean };
}

if (values.imports) {
  const modules = [undefined, '@kubernetes/client-node', '@aws-sdk/client-s3', '@k8or/api', '@k8or/core', '@k8or/provider-aws', '@k8or/provider-aws/module', '@k8or/provider-gcp', '@k8or/provider-azure', '@k8or/webhook', '@k8or/operator'];
  console.log(`\nImport cost, a fresh \`node --expose-gc\` process per row, RSS and heap after GC (load ${load()}):\n`);
  console.log("| import | RSS MiB | heap MiB | RSS over bare node | loads node's undici |");
  console.log('|---|---:|---:|---:|---|');
  const runs = 3;
  const bare = importCost(undefined);
  for (const specifier of modules) {
    // The least of a few runs: RSS moves with the allocator's luck.
    const samples = Array.from({ length: runs }, () => importCost(specifier));
    const rss = Math.min(...samples.map((s) => s.rss));
    const heap = Math.min(...samples.map((s) => s.heapUsed));
    console.log(`| ${specifier ?? '(nothing)'} | ${mib(rss)} | ${mib(heap)} | +${mib(rss - bare.rss)} | ${samples.some((s) => s.undici) ? 'yes' : 'no'} |`);
  }
}

// --- the world: API server and S3 fake here, the operator in a child ---------------------------

const sandbox = await startSandbox({ logLevel: 'error', recordRequests: true });
const workDir = await mkdtemp(join(tmpdir(), 'k8or-operator-bench-'));
const s3Options = { accounts: { [ACCESS_KEY]: 'bench-account' }, credentials: { [ACCESS_KEY]: SECRET_KEY }, dataDir: join(workDir, 's3') };
let s3 = await startS3Fake(s3Options);
const s3Port = Number(new URL(s3.endpoint).port);
const kubeconfigPath = join(workDir, 'kubeconfig');
await writeFile(kubeconfigPath, sandbox.kubeconfig);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(sandbox.kubeconfig);
const user = new KubeRest(kubeConfig, { userAgent: USER_AGENT });
await installCrds(kubeConfig);
await until('the CRDs', async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
for (const name of [NAMESPACE, 'k8or-system']) await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const base64 = (text: string) => Buffer.from(text).toString('base64');
await user.create(corePath('secrets', 'k8or-system'), {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'aws', namespace: 'k8or-system' },
  data: { accessKeyId: base64(ACCESS_KEY), secretAccessKey: base64(SECRET_KEY) },
});
await user.create(k8orPath('ProviderConfig', undefined), {
  apiVersion: API_VERSION,
  kind: 'ProviderConfig',
  metadata: { name: 'default' },
  spec: {
    provider: 'aws',
    region: 'us-east-1',
    endpoints: { bucket: s3.endpoint },
    credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws' } },
    ...(values['s3-bucket-rate'] ? { rateLimits: { 's3-buckets': { requestsPerSecond: Number(values['s3-bucket-rate']), burst: Number(values['s3-bucket-rate']) } } } : {}),
  },
});

// Which Buckets are Ready for their generation, from a watch (cheaper than listing 10,000 again and again).
const ready = new Set<string>();
const buckets = createInformer<Bucket>({ kubeConfig, group: 'k8or.io', version: 'v1alpha1', plural: 'buckets', namespace: NAMESPACE });
const track = (b: Bucket): void => {
  const isReady = b.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && b.status?.observedGeneration === b.metadata.generation;
  if (isReady) ready.add(b.metadata.name ?? '');
  else ready.delete(b.metadata.name ?? '');
};
buckets.on('add', track);
buckets.on('update', track);
await buckets.start();

interface Operator {
  child: ChildProcess;
  spawnedAt: number;
  readyAt: number;
  /** Counters; with `memory`, after a full GC, with the resident breakdown. */
  stats(memory?: boolean): Promise<OperatorStats>;
  snapshot(path: string): Promise<string>;
}

async function startOperator(resync: string): Promise<Operator> {
  const spawnedAt = Date.now();
  const child = fork(
    CHILD,
    [
      `--kubeconfig=${kubeconfigPath}`,
      '--providers=aws',
      `--workers=${values.workers}`,
      `--resync-period=${resync}`,
      '--cluster-id=bench',
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--log-level=error',
      // The webhook too, as the image's `operator --webhook` (it registers itself with the API server and caches Buckets as well).
      ...(values.webhook ? ['--components=controllers,webhook', '--webhook-bind-address=127.0.0.1:0'] : []),
      ...(values['client-node-kubeconfig'] ? ['--client-node-kubeconfig'] : []),
    ],
    {
      execArgv: ['--expose-gc', ...values['node-options'].split(' ').filter(Boolean), ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [])],
      env: { ...process.env, ...OPERATOR_ENV },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const replies: { resolve: (m: FromOperator) => void; reject: (e: Error) => void }[] = [];
  child.on('message', (m: FromOperator) => replies.shift()?.resolve(m));
  child.on('exit', (code, signal) => {
    for (const reply of replies.splice(0)) reply.reject(new Error(`operator exited (${code ?? signal})`));
  });
  const next = (): Promise<FromOperator> => new Promise((resolve, reject) => replies.push({ resolve, reject }));
  const readyMessage = await next();
  if (readyMessage.type !== 'ready') throw new Error('unexpected first message from the operator');
  const ask = async <T extends FromOperator['type']>(message: ToOperator, type: T): Promise<Extract<FromOperator, { type: T }>> => {
    const reply = next();
    child.send(message);
    const m = await reply;
    if (m.type !== type) throw new Error(`expected ${type}, got ${m.type}`);
    return m as Extract<FromOperator, { type: T }>;
  };
  return {
    child,
    spawnedAt,
    readyAt: readyMessage.readyAt,
    stats: (memory = false) => ask({ type: 'stats', memory }, 'stats'),
    snapshot: async (path) => (await ask({ type: 'snapshot', path }, 'snapshot')).path,
  };
}

function kill(operator: Operator): Promise<void> {
  return new Promise((resolve) => {
    operator.child.once('exit', () => resolve());
    operator.child.kill('SIGKILL');
  });
}

/** Waits for a quiet moment (nothing queued, no reconcile running), then reads the memory. */
async function settle(operator: Operator): Promise<OperatorStats> {
  for (;;) {
    const stats = await operator.stats();
    if (stats.queueDepth === 0 && stats.activeWorkers === 0) return await operator.stats(true);
    await sleep(500);
  }
}

/** Retries a request that met a connection reset (a keep-alive socket the server had just closed, on a loaded machine). */
async function retried<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= 5 || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw error;
      await sleep(100 * attempt);
    }
  }
}

/** Runs `task(0..count-1)`, 50 at a time. */
async function inBatches(count: number, task: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => task(i + k)));
}

function engineWrites(): number {
  return sandbox.requestLog.filter((e) => e.userAgent?.startsWith('k8or-engine') && API_WRITES.has(e.verb)).length;
}
function cloudCalls(): { reads: number; writes: number; byOperation: Map<string, number> } {
  const byOperation = new Map<string, number>();
  let reads = 0;
  let writes = 0;
  for (const r of s3.requests) {
    const operation = `${r.method} ${r.subresource || (r.bucket ? 'bucket' : 'service')}`;
    byOperation.set(operation, (byOperation.get(operation) ?? 0) + 1);
    if (r.method === 'GET' || r.method === 'HEAD') reads++;
    else writes++;
  }
  return { reads, writes, byOperation };
}
/** Distinct buckets the operator asked GetBucketLocation for since the counts were reset. */
function locatedBuckets(): number {
  return new Set(s3.requests.filter((r) => r.subresource === 'location').map((r) => r.bucket)).size;
}
function resetCounts(): void {
  sandbox.clearRequestLog();
  s3.requests.length = 0;
}

const memoryRow = (label: string, s: OperatorStats) =>
  `| ${label} | **${mib(s.rss)}** | ${mib(s.heapUsed)} | ${mib(s.heapTotal)} | ${mib(s.external)} | ${mib(s.resident.nodeBinary)} | ${mib(s.resident.otherFiles)} | ${mib(s.resident.anonymous)} |`;
const memoryRows: string[] = [];

// 1. idle
log(`load ${load()}: starting the operator with no Bucket`);
let operator = await startOperator(values.resync);
log(`operator ready in ${operator.readyAt - operator.spawnedAt} ms`);
memoryRows.push(memoryRow('idle (no Bucket, caches synced)', await settle(operator)));
const snapshotDir = values['heap-snapshot'];
if (snapshotDir) {
  mkdirSync(snapshotDir, { recursive: true });
  log(`heap snapshot: ${await operator.snapshot(join(snapshotDir, 'operator-idle.heapsnapshot'))}`);
}

// 2. the operator creates the template Buckets
const loadAtCreate = load();
const bucketName = (i: number) => `b-${i}`;
log(`the operator creates ${TEMPLATE} Buckets`);
const createStart = Date.now();
/** A Bucket as `kubectl apply` stores it: with the applied manifest again, as JSON text, in an annotation (as big as the object). */
function appliedBucket(i: number): Bucket {
  const manifest = {
    apiVersion: API_VERSION,
    kind: 'Bucket',
    metadata: { name: bucketName(i), namespace: NAMESPACE, labels: { team: 'bench' } },
    spec: { name: `k8or-bench-${bucketName(i)}`, versioning: true, labels: { app: 'bench' } },
  } as Bucket;
  return { ...manifest, metadata: { ...manifest.metadata, annotations: { [LAST_APPLIED_ANNOTATION]: `${JSON.stringify(manifest)}\n` } } };
}
await inBatches(TEMPLATE, (i) => retried(() => user.create(k8orPath('Bucket', NAMESPACE), appliedBucket(i))));
await until('every Bucket Ready', () => ready.size >= TEMPLATE, 3_600_000, 500);
const createSeconds = (Date.now() - createStart) / 1000;
log(`${TEMPLATE} Ready after ${createSeconds.toFixed(1)} s (load ${load()})`);
await settle(operator);
await kill(operator);

// 3. seed the rest as copies of b-0
if (RESOURCES > TEMPLATE) {
  log(`seeding ${RESOURCES - TEMPLATE} more`);
  const template = await user.get<Bucket>(k8orPath('Bucket', NAMESPACE, bucketName(0)));
  if (!template) throw new Error('template Bucket missing');
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, managedFields: _m, generation: _g, ...metadata } = template.metadata as Bucket['metadata'] & { managedFields?: unknown };
  const objectText = JSON.stringify({ ...template, metadata, status: undefined });
  const statusText = JSON.stringify(template.status);
  const rename = (text: string, i: number) => text.replace(/\bb-0\b/g, bucketName(i));
  await inBatches(RESOURCES - TEMPLATE, async (j) => {
    const i = TEMPLATE + j;
    const created = await retried(async () => {
      try {
        return await user.create<Bucket>(k8orPath('Bucket', NAMESPACE), JSON.parse(rename(objectText, i)));
      } catch (error) {
        // A retried create that had gone through: take the stored object.
        const stored = isAlreadyExists(error) ? await user.get<Bucket>(k8orPath('Bucket', NAMESPACE, bucketName(i))) : undefined;
        if (stored) return stored;
        throw error;
      }
    });
    // The digest of the spec applied is of this copy's spec (its name differs from the template's), as the engine would have written it.
    const status = { ...JSON.parse(rename(statusText, i)), observedGeneration: created.metadata.generation, appliedSpecDigest: specDigest(created.spec as unknown as Record<string, unknown>) };
    status.conditions = status.conditions.map((c: Record<string, unknown>) => ({ ...c, observedGeneration: created.metadata.generation }));
    await retried(() => user.update(k8orPath('Bucket', NAMESPACE, bucketName(i), 'status'), { ...created, status }));
  });
  await s3.stop();
  // The S3 fake's file of b-0's bucket, copied under each new name.
  const entryText = await readFile(s3BucketFile(s3Options.dataDir, `k8or-bench-${bucketName(0)}`), 'utf8');
  for (let i = TEMPLATE; i < RESOURCES; i++) await writeFile(s3BucketFile(s3Options.dataDir, `k8or-bench-${bucketName(i)}`), rename(entryText, i));
  s3 = await startS3Fake({ ...s3Options, port: s3Port });
  await until('every Bucket Ready in the watch', () => ready.size >= RESOURCES, 600_000, 500);
}

// 4. restart
resetCounts();
const loadBeforeRestart = load();
log(`restart: a new operator with ${RESOURCES} Buckets in sync`);
operator = await startOperator(values.resync);
const synced = (operator.readyAt - operator.spawnedAt) / 1000;
const atReady = await operator.stats();
memoryRows.push(memoryRow(`${RESOURCES.toLocaleString('en')} Buckets, caches synced, before the first reconcile (one GC pause within the pass)`, await operator.stats(true)));
const passLimit = values['first-pass-limit'] === undefined ? undefined : Number(values['first-pass-limit']);
let firstPass = await operator.stats();
await until(passLimit === undefined ? 'every Bucket reconciled after the restart' : `${passLimit} reconciles after the restart`, async () => {
  firstPass = await operator.stats();
  if (passLimit !== undefined) return firstPass.reconciles >= passLimit;
  // Every Bucket's observe starts with GetBucketLocation: all located, and nothing queued.
  return firstPass.reconciles >= RESOURCES && firstPass.queueDepth === 0 && locatedBuckets() >= RESOURCES;
}, 3_600_000, 100);
const restartSeconds = (Date.now() - operator.spawnedAt) / 1000;
const restartCalls = cloudCalls();
const restart = [
  `\nRestart with ${RESOURCES.toLocaleString('en')} Buckets in sync (a new operator process; load ${loadBeforeRestart} to ${load()}):\n`,
  '| measure | result |',
  '|---|---:|',
  `| spawn to caches synced (manager ready) | ${synced.toFixed(1)} s |`,
  passLimit === undefined
    ? `| spawn to every Bucket reconciled, queue empty | **${restartSeconds.toFixed(1)} s** |`
    : `| spawn to the first ${passLimit.toLocaleString('en')} reconciles (stopped there) | ${restartSeconds.toFixed(1)} s |`,
  `| reconciles | ${firstPass.reconciles} |`,
  `| operator CPU from spawn | ${(firstPass.cpuMicros / 1e6).toFixed(1)} s |`,
  `| operator CPU from caches synced to the last reconcile, per reconcile (what a no-op resync costs) | **${((firstPass.cpuMicros - atReady.cpuMicros) / 1000 / (firstPass.reconciles - atReady.reconciles)).toFixed(2)} ms** |`,
  `| API writes (engine) | **${engineWrites()}** |`,
  `| S3 writes | **${restartCalls.writes}** |`,
  `| S3 reads | ${restartCalls.reads} (${(restartCalls.reads / firstPass.reconciles).toFixed(2)} per reconcile) |`,
];
const inSync = passLimit === undefined ? await settle(operator) : await operator.stats(true);
memoryRows.push(
  memoryRow(
    passLimit === undefined ? `${RESOURCES.toLocaleString('en')} Buckets in sync (after the restart's pass)` : `${RESOURCES.toLocaleString('en')} Buckets, after ${inSync.reconciles.toLocaleString('en')} reconciles of the first pass`,
    inSync,
  ),
);
if (snapshotDir) log(`heap snapshot: ${await operator.snapshot(join(snapshotDir, `operator-${RESOURCES}.heapsnapshot`))}`);

// 5. steady state: every Bucket resynced once more
let steady: string[] = [];
if (!values['no-steady'] && passLimit === undefined) {
  resetCounts();
  const before = inSync;
  const loadBefore = load();
  const started = Date.now();
  log(`steady state: until every Bucket was resynced (period ${values.resync})`);
  let after = before;
  await until('a resync of every Bucket', async () => {
    after = await operator.stats();
    return after.reconciles - before.reconciles >= SAMPLE;
  }, 3_600_000, 1_000);
  const resyncs = after.reconciles - before.reconciles;
  const cpuMs = (after.cpuMicros - before.cpuMicros) / 1000;
  const calls = cloudCalls();
  const writes = engineWrites();
  const perResync = (n: number) => (n / resyncs).toFixed(2);
  const perHour = (n: number) => Math.round((n / resyncs) * RESOURCES).toLocaleString('en');
  steady = [
    `\nSteady state, ${RESOURCES.toLocaleString('en')} Buckets in sync, resync period ${values.resync}, ${((Date.now() - started) / 1000).toFixed(0)} s watched (load ${loadBefore} to ${load()}):\n`,
    '| measure | over the window | per resync | per hour at the default 1 h resync |',
    '|---|---:|---:|---:|',
    `| resyncs (reconciles) | ${resyncs} | 1 | ${RESOURCES.toLocaleString('en')} |`,
    `| operator CPU (user + system, idle time included) | ${(cpuMs / 1000).toFixed(1)} s | ${(cpuMs / resyncs).toFixed(2)} ms | ${((cpuMs / resyncs) * RESOURCES / 1000).toFixed(1)} s |`,
    `| API writes (engine) | ${writes} | ${perResync(writes)} | **${perHour(writes)}** |`,
    `| S3 reads | ${calls.reads} | ${perResync(calls.reads)} | ${perHour(calls.reads)} |`,
    `| S3 writes | ${calls.writes} | ${perResync(calls.writes)} | ${perHour(calls.writes)} |`,
    '',
    `S3 requests by operation: ${[...calls.byOperation].map(([op, n]) => `${op} ${n}`).join(', ')}`,
  ];
}

console.log(`\nOperator process memory after a full GC (MiB), ${values['node-options'] ? `node ${values['node-options']}, ` : ''}${values['operator-env'] ? `env ${values['operator-env']}, ` : ''}${values.webhook ? `with the webhook${values['client-node-kubeconfig'] ? ' (client-node KubeConfig)' : ''}, ` : ''}${values.workers} workers, Node ${process.version}, load ${loadAtCreate} at the start; the operator created ${TEMPLATE} Buckets in ${createSeconds.toFixed(0)} s:\n`);
console.log('| operator | RSS | heap used | heap total | external | resident: node binary | other files | anonymous |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of memoryRows) console.log(row);
for (const line of [...restart, ...steady]) console.log(line);

operator.child.disconnect();
await new Promise((resolve) => operator.child.once('exit', resolve));
buckets.stop();
user.close();
await s3.stop();
await sandbox.stop();
rmSync(workDir, { recursive: true, force: true });
