// What the assigner's full pass allocates, and what it does to the RSS of the process it runs in.
//
//   npm run build && node bench/assigner-full-pass.bench.ts [--objects 30000] [--page-size 100] [--passes 10] [--node-flags="--no-maglev"]
//
// The assigner (`ShardAssigner` of @k8or/core, on the leader) lists every Bucket and Table of the
// cluster in a full pass, at least every 5 minutes, a page of `fullPassPageSize` at a time, and keeps
// none of it. This runs it alone, with the image's Node flags and malloc settings (the bench runs
// itself again as a child with them; a malloc setting already in the environment is kept, to
// compare; `--node-flags` adds Node/V8 flags to the image's), against the embedded API server in a process of its own with
// `--objects` fleet objects (test/reliability/support/shard-fleet.ts) labelled for three live
// shards, and reports:
//  - this process's RSS, and the memory of its ArrayBuffers and Buffers, every 100 ms: over 10 s of the assigner's `run()` between full passes, then
//    over `--passes` full passes 2 s apart (this process loads client-node too: compare the
//    readings with each other, not with an operator's);
//  - the garbage collections per full pass over those passes, young-generation and full, and the
//    process's CPU time per pass (every thread: the compilers' and the collector's too);
//  - then the bytes a full pass allocates per object, sampled by V8's heap profiler over `--passes`
//    more passes (objects collected since included), the share of it that outlives a
//    young-generation collection (over `--passes` more), the functions that allocate the most, and
//    those whose allocations outlive one the most: figures that hold on any machine.
import { spawn } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeRest, ShardAssigner, shardLease, type LeaderElector } from '@k8or/core';
import { awsProvider } from '@k8or/provider-aws';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, OPERATOR_NAMESPACE, createObjects, fleetObjects, prepareFleetApi } from '../test/reliability/support/shard-fleet.ts';
import { startSandboxProcess } from '../test/support/sandbox-process.ts';

const options = { objects: { type: 'string', default: '30000' }, 'page-size': { type: 'string', default: '100' }, passes: { type: 'string', default: '10' }, 'node-flags': { type: 'string', default: '' } } as const;
const { values } = parseArgs({ options });
const positive = (option: keyof typeof options): number => {
  const value = Number(values[option]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${option} must be a whole number of at least 1, got ${values[option]}`);
  return value;
};
const OBJECTS = positive('objects');
const PAGE_SIZE = positive('page-size');
const PASSES = positive('passes');

if (process.env.K8OR_BENCH_IMAGE_FLAGS !== '1') {
  const child = spawn(process.execPath, [...IMAGE_NODE_FLAGS, ...values['node-flags'].split(' ').filter(Boolean), import.meta.filename, ...process.argv.slice(2)], { stdio: 'inherit', env: { ...IMAGE_ENV, ...process.env, K8OR_BENCH_IMAGE_FLAGS: '1' } });
  const code = await new Promise<number>((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 1)));
  process.exit(code);
}

const RING = 'k8or';
const LEASE_NAMESPACE = OPERATOR_NAMESPACE;
const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
const log = (text: string): void => void process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${text}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Self bytes per function (`name file:line`) of a sampling heap profile. */
function selfBytes(root: ProfileNode): Map<string, number> {
  const bytes = new Map<string, number>();
  const walk = (node: ProfileNode): void => {
    const frame = node.callFrame;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
    bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(root);
  return bytes;
}

/** RSS, and the memory of ArrayBuffers and Buffers (malloc's, outside V8's heap), every 100 ms while `work` runs. */
async function rssDuring(work: () => Promise<void>): Promise<{ rss: number[]; arrayBuffers: number[] }> {
  const readings = { rss: [] as number[], arrayBuffers: [] as number[] };
  const sampling = setInterval(() => {
    const usage = process.memoryUsage();
    readings.rss.push(usage.rss);
    readings.arrayBuffers.push(usage.arrayBuffers);
  }, 100);
  try {
    await work();
  } finally {
    clearInterval(sampling);
  }
  return readings;
}

const spread = (readings: number[]): string => {
  const sorted = [...readings].sort((a, b) => a - b);
  return `${mib(sorted[0]!)} / **${mib(sorted[Math.floor(sorted.length / 2)]!)}** / ${mib(sorted.at(-1)!)}`;
};

const sandbox = await startSandboxProcess();
const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(sandbox.kubeconfig);
const admin = new KubeRest(kubeConfig);
const leases: LeaderElector[] = [];
const base = { kubeConfig, namespace: LEASE_NAMESPACE, ring: RING, providers: new Map([['aws', awsProvider]]), clusterId: 'bench-cluster', fullPassPageSize: PAGE_SIZE };
try {
  await prepareFleetApi(admin, kubeConfig);
  log(`creating ${OBJECTS} objects`);
  await createObjects(admin, fleetObjects(OBJECTS));
  for (const shard of ['shard-0', 'shard-1', 'shard-2']) {
    const lease = shardLease({ kubeConfig, namespace: LEASE_NAMESPACE, ring: RING, shard, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    void lease.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    leases.push(lease);
  }
  const labeller = new ShardAssigner(base);
  try {
    for (let labelled = 0; ; ) {
      const result = await labeller.sync();
      if (result.membership.live.length < 3) {
        await sleep(200);
        continue;
      }
      labelled += result.applied.length;
      if (labelled >= OBJECTS && result.applied.length === 0 && result.skipped.length === 0) break;
    }
  } finally {
    labeller.close();
  }
  log('every object labelled');

  // Between full passes: run() as the leader runs it, its next full pass an hour away.
  const idle = new ShardAssigner({ ...base, fullPassEveryMs: 3_600_000 });
  const stop = new AbortController();
  const running = idle.run(stop.signal);
  await sleep(10_000);
  const idleRss = await rssDuring(() => sleep(10_000));
  stop.abort();
  await running;
  idle.close();

  const sweeping = new ShardAssigner({ ...base, fullPassEveryMs: 0 });
  try {
    await sweeping.sync();
    const collections = { minor: 0, major: 0 };
    const gcs = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MINOR) collections.minor++;
        else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) collections.major++;
      }
    });
    gcs.observe({ entryTypes: ['gc'] });
    let passCpuMicros = 0;
    const passRss = await rssDuring(async () => {
      for (let i = 0; i < PASSES; i++) {
        const cpu = process.cpuUsage();
        await sweeping.sync();
        const spent = process.cpuUsage(cpu);
        passCpuMicros += spent.user + spent.system;
        await sleep(2_000);
      }
    });
    gcs.disconnect();
    // What a pass allocates, then what of it outlives a young-generation collection (promoted to
    // the old generation, which only a full collection frees): each over PASSES passes.
    const sampled = async (includeCollectedYoung: boolean): Promise<Map<string, number>> => {
      const session = new Session();
      session.connect();
      await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: includeCollectedYoung });
      for (let i = 0; i < PASSES; i++) await sweeping.sync();
      const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
      session.disconnect();
      return selfBytes(profile.head);
    };
    const bytes = await sampled(true);
    const survived = await sampled(false);
    const sum = (of: Map<string, number>): number => [...of.values()].reduce((total, value) => total + value, 0);
    const total = sum(bytes);
    const top = [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 8);
    const topSurvived = [...survived].sort((a, b) => b[1] - a[1]).slice(0, 6);
    const perObject = (value: number): string => Math.round(value / PASSES / OBJECTS).toLocaleString('en');
    console.log(
      [
        `\nThe assigner's full pass, ${OBJECTS.toLocaleString('en')} objects, ${PAGE_SIZE} a page, ${PASSES} passes (node ${process.execArgv.join(' ')}):\n`,
        '| measure | result |',
        '|---|---:|',
        `| allocated per full pass (V8's sampling heap profiler, collected objects included) | ${mib(total / PASSES)} MiB, **${perObject(total)} B per object** |`,
        `| of it, outlived a young-generation collection (the same profiler, objects the young generation's collections freed left out) | ${mib(sum(survived) / PASSES)} MiB, **${perObject(sum(survived))} B per object** |`,
        `| garbage collections per full pass, young generation / full (over the ${PASSES} passes of the RSS readings) | ${(collections.minor / PASSES).toFixed(1)} / **${(collections.major / PASSES).toFixed(1)}** |`,
        `| CPU time per full pass, every thread of the process (over the ${PASSES} passes of the RSS readings) | ${(passCpuMicros / PASSES / 1000).toFixed(0)} ms, **${(passCpuMicros / PASSES / OBJECTS).toFixed(1)} µs per object** |`,
        `| RSS every 100 ms, min / median / max: between full passes (run(), 10 s) | ${spread(idleRss.rss)} MiB |`,
        `| RSS every 100 ms, min / median / max: over ${PASSES} full passes 2 s apart | ${spread(passRss.rss)} MiB |`,
        `| ArrayBuffers and Buffers (\`process.memoryUsage().arrayBuffers\`), min / median / max: between full passes | ${spread(idleRss.arrayBuffers)} MiB |`,
        `| the same over ${PASSES} full passes 2 s apart | ${spread(passRss.arrayBuffers)} MiB |`,
        '',
        'Most allocated, per full pass and object:',
        '',
        '| function | B per object |',
        '|---|---:|',
        ...top.map(([name, value]) => `| \`${name}\` | ${perObject(value)} |`),
        '',
        'Most of what outlived a young-generation collection, per full pass and object:',
        '',
        '| function | B per object |',
        '|---|---:|',
        ...topSurvived.map(([name, value]) => `| \`${name}\` | ${perObject(value)} |`),
      ].join('\n'),
    );
  } finally {
    sweeping.close();
  }
} finally {
  await Promise.all(leases.map((lease) => lease.stop({ release: false })));
  await sandbox.stop();
}
process.exit(0);
