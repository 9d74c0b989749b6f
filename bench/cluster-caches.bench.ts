// What a replica of a sharded fleet keeps of every object of the cluster, not of its share, at scale.
//
//   npm run build && node --expose-gc bench/cluster-caches.bench.ts [--objects 20000] [--passes 5]
//
// The assigner (`ShardAssigner` of @k8or/core, on the leader only) keeps a record of the objects
// without a shard and reads every object only in a full pass, a page at a time; the admission
// webhook's cache (`ClusterContext` of @k8or/webhook, in the webhook's Pods) holds every Bucket and
// Table of the cluster whatever a replica's share.
// This measures each in this process: the embedded API server runs in a child process
// (bench/support/sandbox-process.ts) with `--objects` fleet objects
// (test/reliability/support/shard-fleet.ts: Buckets and Tables, half each, on two ProviderConfigs of
// the aws provider), three shard Leases are held here, and
//  1. the assigner (with the aws provider plugin, as the operator loads it) starts its watches and
//     labels every object for a shard (one label patch each), passes until a pass finds nothing to
//     write (its watch has caught up with its own patches), then runs `--passes` more passes with
//     nothing to do: wall time and CPU of each; then as many full passes (a new assigner that
//     makes every pass a full one): wall time, CPU, and this process's peak RSS over them;
//  2. the webhook's ClusterContext starts its caches;
//  3. the webhook as the chart runs it with sharding on: a `k8or webhook` process (the image's Node
//     flags and malloc settings), until it is ready (its caches synced), then its RSS (VmRSS) each
//     second for 20 s.
// What each keeps per object is the V8 heap used after a forced GC that it frees when it is closed,
// divided by the objects (and, as a check, what the heap grew while it filled: that also counts the
// code the first pass compiles and loads). Prints Markdown for docs/benchmarks.md.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeRest, ShardAssigner, shardLease, type LeaderElector } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { awsProvider } from '@k8or/provider-aws';
import { ClusterContext } from '@k8or/webhook';
import { pino } from 'pino';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, OPERATOR_NAMESPACE, createObjects, fleetObjects, prepareFleetApi } from '../test/reliability/support/shard-fleet.ts';
import { kernelFigures } from '../test/reliability/support/memory-probe.ts';
import { freePort, k8orBinary, probeReady, startOperatorProcess, type OperatorProcess } from '../test/support/operator-process.ts';
import { startSandboxProcess } from '../test/support/sandbox-process.ts';

const { values } = parseArgs({ options: { objects: { type: 'string', default: '20000' }, passes: { type: 'string', default: '5' } } });
const OBJECTS = Number(values.objects);
const PASSES = Number(values.passes);
const RING = 'k8or';
const LEASE_NAMESPACE = OPERATOR_NAMESPACE;
const SHARDS = ['shard-0', 'shard-1', 'shard-2'];

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const log = (text: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${text}\n`);
const load = () => loadavg()[0]!.toFixed(1);
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
/** Heap used after two forced GCs (the second collects what the first's finalizers let go). */
const settledHeap = () => {
  gc();
  gc();
  return process.memoryUsage();
};
/** Heap used once a closed cache is gone: its watches end asynchronously, and hold it until they have. */
async function heapOnceFreed(): Promise<NodeJS.MemoryUsage> {
  let last = settledHeap();
  for (let unchanged = 0, i = 0; unchanged < 3 && i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = settledHeap();
    unchanged = now.heapUsed < last.heapUsed - 64 * 1024 ? 0 : unchanged + 1;
    last = now;
  }
  return last;
}

/** `PASSES` passes of `assigner`, each with nothing to write: wall time and CPU of each. */
async function timedPasses(assigner: ShardAssigner, what: string): Promise<Array<{ wallMs: number; cpuMs: number }>> {
  const timings: Array<{ wallMs: number; cpuMs: number }> = [];
  for (let i = 0; i < PASSES; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const result = await assigner.sync();
    const used = process.cpuUsage(cpu);
    timings.push({ wallMs: performance.now() - start, cpuMs: (used.user + used.system) / 1000 });
    if (result.applied.length + result.skipped.length > 0) throw new Error(`${what} with nothing to do wrote ${result.applied.length} and skipped ${result.skipped.length}`);
  }
  return timings;
}

// V8 drops the bytecode of functions unused over a few GCs, and every measure here forces some:
// that would free megabytes unrelated to the caches between two measures.
setFlagsFromString('--no-flush-bytecode');
const sandbox = await startSandboxProcess();
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(sandbox.kubeconfig);
const admin = new KubeRest(kubeConfig);
const leases: LeaderElector[] = [];
let assigner: ShardAssigner | undefined;
let context: ClusterContext | undefined;
let webhookProcess: OperatorProcess | undefined;
const home = await mkdtemp(join(tmpdir(), 'k8or-caches-'));
try {
  await prepareFleetApi(admin, kubeConfig);
  log(`load ${load()}: creating ${OBJECTS} objects`);
  const createStart = Date.now();
  await createObjects(admin, fleetObjects(OBJECTS));
  log(`created in ${((Date.now() - createStart) / 1000).toFixed(1)} s`);
  for (const shard of SHARDS) {
    const lease = shardLease({ kubeConfig, namespace: LEASE_NAMESPACE, ring: RING, shard, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    void lease.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    leases.push(lease);
  }

  const before = settledHeap();
  assigner = new ShardAssigner({ kubeConfig, namespace: LEASE_NAMESPACE, ring: RING, providers: new Map([['aws', awsProvider]]), clusterId: 'bench-cluster' });
  const labelStart = Date.now();
  let labelled = 0;
  let passes = 0;
  for (;;) {
    const result = await assigner.sync();
    passes++;
    if (result.membership.live.length < SHARDS.length) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    labelled += result.applied.length;
    if (labelled >= OBJECTS && result.applied.length === 0 && result.skipped.length === 0) break;
    if (result.applied.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const labelSeconds = (Date.now() - labelStart) / 1000;
  log(`labelled ${labelled} in ${labelSeconds.toFixed(1)} s over ${passes} passes`);

  const timings = await timedPasses(assigner, 'a pass');
  const after = settledHeap();
  const grownPerObject = (after.heapUsed - before.heapUsed) / OBJECTS;
  assigner.close();
  assigner = undefined;
  const closed = await heapOnceFreed();

  // Full passes: what a change of the shards, a Namespace or a ProviderConfig costs (every object listed, nothing to write).
  const sweeping = new ShardAssigner({ kubeConfig, namespace: LEASE_NAMESPACE, ring: RING, providers: new Map([['aws', awsProvider]]), clusterId: 'bench-cluster', fullPassEveryMs: 0 });
  assigner = sweeping;
  await sweeping.sync();
  let fullPeakRss = 0;
  const sampling = setInterval(() => (fullPeakRss = Math.max(fullPeakRss, process.memoryUsage.rss())), 20);
  const fullTimings = await timedPasses(sweeping, 'a full pass');
  clearInterval(sampling);
  sweeping.close();
  assigner = undefined;
  await heapOnceFreed();
  const perObject = (after.heapUsed - closed.heapUsed) / OBJECTS;

  // Started once every label is written: nothing changes while it fills.
  const beforeWebhook = settledHeap();
  const webhookStart = Date.now();
  context = new ClusterContext({ kubeConfig, providers: [awsProvider], defaultDeletionPolicy: 'Delete', secretNamespaces: '*', clusterId: 'bench-cluster', logger: pino({ level: 'silent' }) });
  await context.start();
  const webhookSynced = (Date.now() - webhookStart) / 1000;
  const withWebhook = settledHeap();
  const webhookGrownPerObject = (withWebhook.heapUsed - beforeWebhook.heapUsed) / OBJECTS;
  context.stop();
  context = undefined;
  const webhookClosed = await heapOnceFreed();
  const webhookPerObject = (withWebhook.heapUsed - webhookClosed.heapUsed) / OBJECTS;

  // The webhook's own Pod: what the chart runs beside the shards.
  const binary = k8orBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const kubeconfigPath = join(home, 'kubeconfig');
  await writeFile(kubeconfigPath, sandbox.kubeconfig, { mode: 0o600 });
  const processStart = Date.now();
  webhookProcess = await startOperatorProcess({
    bin: binary.path,
    kubeconfigPath,
    args: ['webhook'],
    webhookPort: await freePort(),
    nodeFlags: IMAGE_NODE_FLAGS,
    env: { ...IMAGE_ENV, K8OR_PROVIDERS: 'aws', K8OR_CLUSTER_ID: 'bench-cluster', K8OR_LOG_LEVEL: 'error' },
  });
  const running = webhookProcess;
  await waitFor('the webhook process ready', () => probeReady(running.probes), 600_000, 250);
  const processReady = (Date.now() - processStart) / 1000;
  const pid = await running.child.pid;
  const processRss: number[] = [];
  for (let second = 0; second < 20; second++) {
    processRss.push((await kernelFigures(pid)).rss);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  await running.stop();
  webhookProcess = undefined;

  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  console.log(
    [
      `\nThe caches of every object, ${OBJECTS.toLocaleString('en')} objects (Buckets and Tables, half each, two ProviderConfigs, three live shards; load ${load()}):\n`,
      '| measure | result |',
      '|---|---:|',
      `| the assigner: labelling every object (one patch each) | ${labelSeconds.toFixed(1)} s |`,
      `| V8 heap used after GC: before the assigner / with its records / once closed | ${mib(before.heapUsed)} / ${mib(after.heapUsed)} / ${mib(closed.heapUsed)} MiB |`,
      `| heap the assigner keeps per object: freed when closed (grown while it filled) | **${perObject.toFixed(0)} B** (${grownPerObject.toFixed(0)} B) |`,
      `| RSS before / after | ${mib(before.rss)} / ${mib(after.rss)} MiB |`,
      `| a pass with nothing to write, median of ${PASSES}: wall / CPU | ${median(timings.map((t) => t.wallMs)).toFixed(1)} / ${median(timings.map((t) => t.cpuMs)).toFixed(1)} ms |`,
      `| a full pass (lists every object, 100 a page) with nothing to write, median of ${PASSES}: wall / CPU; peak RSS over them | ${median(fullTimings.map((t) => t.wallMs)).toFixed(0)} / ${median(fullTimings.map((t) => t.cpuMs)).toFixed(0)} ms; ${mib(fullPeakRss)} MiB |`,
      `| the admission webhook's caches (ClusterContext), started after: start to synced | ${webhookSynced.toFixed(1)} s |`,
      `| V8 heap used after GC: before the webhook's caches / with them / once stopped | ${mib(beforeWebhook.heapUsed)} / ${mib(withWebhook.heapUsed)} / ${mib(webhookClosed.heapUsed)} MiB |`,
      `| heap the webhook's caches keep per object: freed when stopped (grown while they filled) | **${webhookPerObject.toFixed(0)} B** (${webhookGrownPerObject.toFixed(0)} B) |`,
      `| a \`k8or webhook\` process (the chart's webhook Pod): start to ready | ${processReady.toFixed(1)} s |`,
      `| its RSS once ready, each second for 20 s: first / median / most | **${mib(processRss[0]!)} / ${mib(median(processRss))} / ${mib(Math.max(...processRss))} MiB** |`,
    ].join('\n'),
  );
} finally {
  await webhookProcess?.stop().catch(() => undefined);
  await rm(home, { recursive: true, force: true });
  context?.stop();
  assigner?.close();
  await Promise.all(leases.map((lease) => lease.stop({ release: false })));
  admin.close();
  await sandbox.stop();
}
