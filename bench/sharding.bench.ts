// Sharding at scale: N replicas of `k8or operator`, each a process and the shard of its own name,
// against the embedded API server and the local backends (the S3 fake, DynamoDB Local behind its
// proxy), with Buckets and Tables on two ProviderConfigs.
//
//   npm run build && node bench/sharding.bench.ts [--objects 1000] [--replicas 3] [--scale-to 5]
//     [--workers 10] [--s3-rate 50] [--s3-burst 100] [--dynamodb-rate 250] [--dynamodb-burst 250]
//     [--steps restart,takeover,kill,scale] [--table-share 0.5] [--template N] [--hold] [--quiet-seconds 600]
//     [--edit-share 0.01] [--takeover relabel|adopt] [--drift-budget-percent P] [--log-level error]
//
// The world is test/reliability/support/shard-fleet.ts (the same as the sharding suite's, but with the
// API server in a process of its own, as a real one is, not on this process's thread): each
// ProviderConfig reaches the backends through recording proxies of its own, and each replica's
// AWS SDK names it in the User-Agent of every call (AWS_SDK_UA_APP_ID), so the proxies' log is a
// trace of every cloud call with its replica, its object (the bucket or table it names), its
// ProviderConfig and service, and when it arrived and was answered. Steps:
//  1. create: the objects, until every one is labelled for a shard and Ready. With `--template N`,
//     the replicas create N of them (both kinds on both ProviderConfigs) and are stopped; the rest
//     are seeded as copies of those (bench/support/fleet-seed.ts: object and status, S3 bucket,
//     DynamoDB table), and the replicas started again label and check them: 100,000 objects take
//     minutes, not the hours the replicas would spend creating them. Their Ready is then the
//     seed's; a copy that differs from what the engine would have made shows as writes when a
//     replica checks it (the restart step counts them);
//  2. steady state: each replica's RSS (VmRSS, no forced GC) and its share of the objects, then what
//     that RSS is made of (test/reliability/support/memory-probe.ts: the kernel's split, V8's heap
//     through the inspector, and the same after a forced GC);
//  3. restart of every replica (SIGTERM to all, then all started again): cloud writes counted at the
//     backends over the restart and 30 s after it (goal 0), API writes, time until every object is on
//     a live shard and the queues are empty (a restart queues no object in sync: each is checked at
//     its slot of the resync period);
//  4. takeover: in a steady fleet where a user edits --edit-share (1 %) of the objects every 2 s, a replica (not the
//     assigner) SIGKILLed: for each edit of one of its objects pending at the kill or made after it,
//     the time from the later of the edit and the kill until the object is Ready at that generation
//     (goal: the Lease duration, 15 s, plus 10 s; with `--takeover adopt` the survivors work its objects
//     before they are relabelled), and the time until its objects are relabelled, if that was done by then;
//  5. kill: a replica (not the assigner) SIGKILLed while it reconciles a user's edit of every object: time
//     until its objects are relabelled, and until every object is Ready for its edit on the
//     survivors (goal: within the Lease duration, 15 s, plus 10 s); then it comes back;
//  6. scaling from --replicas to --scale-to and back, while a user keeps editing a few objects:
//     objects moved against the consistent-hashing ideal, the operator's API writes per object moved;
//     a step ends when every object is on a live shard, none draining, and Ready at its generation
//     but for a user's edit younger than 30 s (Ready and Synced at the generation before);
//  7. over the whole run: no two replicas' calls on one object overlapping, and the fleet's cloud
//     calls per ProviderConfig and service against its limit (burst + rate x window) over windows
//     of 1 s, 10 s and 60 s.
// Prints Markdown for docs/benchmarks.md.
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import {
  FLEET_SERVICES,
  PROVIDER_CONFIGS,
  assignerCounts,
  assignmentOf,
  createObjects,
  editObject,
  editObjects,
  fleetObjects,
  isCloudWrite,
  leaderShard,
  busiestWindow,
  ObjectStatesWatch,
  objectState,
  overlappingCalls,
  replicaStats,
  startFleet,
  type FleetKind,
  type FleetService,
  type ObjectState,
  type RateLimit,
} from '../test/reliability/support/shard-fleet.ts';
import { kernelFigures, memoryBreakdown } from '../test/reliability/support/memory-probe.ts';
import { machineBusySeconds, processCpuSeconds } from '../test/reliability/support/process-cpu.ts';
import { seedBuckets, seedObjects, seedTables } from './support/fleet-seed.ts';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '1000' },
    replicas: { type: 'string', default: '3' },
    'scale-to': { type: 'string', default: '5' },
    workers: { type: 'string', default: '10' },
    's3-rate': { type: 'string', default: '50' },
    's3-burst': { type: 'string', default: '100' },
    'dynamodb-rate': { type: 'string', default: '250' },
    'dynamodb-burst': { type: 'string', default: '250' },
    // the steps after the create and steady state, in this order: restart, takeover, kill, scale
    steps: { type: 'string', default: 'restart,takeover,kill,scale' },
    // the share of the objects that are Tables (the rest are Buckets)
    'table-share': { type: 'string', default: '0.5' },
    // the replicas create this many; the rest are seeded as copies of them (default: none seeded)
    template: { type: 'string' },
    // keep the fleet running after the steps, until SIGINT, to inspect its replicas (pids on stderr)
    hold: { type: 'boolean', default: false },
    // how long to wait for every queue to be empty before measuring (drift checks at their slots may keep them busy at 100,000)
    'quiet-seconds': { type: 'string', default: '600' },
    // how long to read every replica's RSS (every 5 s) after the steady state's first reading; 0: not at all
    'rss-watch-seconds': { type: 'string', default: '330' },
    // the share of the objects the user of the takeover and scaling steps edits every 2 s
    'edit-share': { type: 'string', default: '0.01' },
    // K8OR_SHARD_TAKEOVER of the replicas: how a dead shard's objects reach the live ones
    takeover: { type: 'string', default: 'relabel' },
    // each ProviderConfig's spec.driftCheckBudget.rateLimitPercent: the drift checks' share of its rate limits (default: no budget)
    'drift-budget-percent': { type: 'string' },
    // K8OR_LOG_LEVEL of the replicas, whose output a failed wait prints
    'log-level': { type: 'string', default: 'error' },
  },
});
/** An option's number, or an exit naming the option and the rule it breaks. */
function numberOption(name: string, text: string, rule: string, valid: (value: number) => boolean): number {
  const value = Number(text);
  if (text.trim() === '' || !valid(value)) {
    process.stderr.write(`--${name} ${JSON.stringify(text)}: must be ${rule}\n`);
    process.exit(2);
  }
  return value;
}
const OBJECTS = numberOption('objects', values.objects, 'a whole number of at least 4', (n) => Number.isInteger(n) && n >= 4);
const TABLE_SHARE = numberOption('table-share', values['table-share'], 'a number from 0 to 1', (n) => n >= 0 && n <= 1);
const TEMPLATE = values.template === undefined ? OBJECTS : Math.min(OBJECTS, numberOption('template', values.template, 'a whole number of at least 4 (two of each kind)', (n) => Number.isInteger(n) && n >= 4));
const QUIET_SECONDS = numberOption('quiet-seconds', values['quiet-seconds'], 'a number of seconds, at least 0', (n) => n >= 0);
const RSS_WATCH_SECONDS = numberOption('rss-watch-seconds', values['rss-watch-seconds'], 'a number of seconds, at least 0', (n) => n >= 0);
const EDIT_SHARE = numberOption('edit-share', values['edit-share'], 'a number from 0 to 1', (n) => n >= 0 && n <= 1);
/** In the scaling step, how young a user's edit not yet reconciled may be for the step to count as settled. */
const EDIT_PENDING_MS = 30_000;
/** Objects the user of the takeover and scaling steps edits every 2 s. */
const EDITS_PER_ROUND = Math.max(2, Math.round(OBJECTS * EDIT_SHARE));
const REPLICAS = Number(values.replicas);
if (values.takeover !== 'relabel' && values.takeover !== 'adopt') {
  process.stderr.write(`--takeover ${JSON.stringify(values.takeover)}: must be relabel or adopt\n`);
  process.exit(2);
}
const TAKEOVER: 'relabel' | 'adopt' = values.takeover;
const DRIFT_BUDGET_PERCENT =
  values['drift-budget-percent'] === undefined
    ? undefined
    : numberOption('drift-budget-percent', values['drift-budget-percent'], 'a whole number from 1 to 100', (n) => Number.isInteger(n) && n >= 1 && n <= 100);
const SCALE_TO = Number(values['scale-to']);
const LIMITS: Record<FleetService, RateLimit> = {
  s3: { requestsPerSecond: Number(values['s3-rate']), burst: Number(values['s3-burst']) },
  dynamodb: { requestsPerSecond: Number(values['dynamodb-rate']), burst: Number(values['dynamodb-burst']) },
};
const STEPS = new Set(values.steps.split(',').filter(Boolean));
const LEASE_SECONDS = 15;
const RESTART_WATCH_SECONDS = 30;
/** The takeover step: a user edits for this long before the kill, and this long after it. */
const TAKEOVER_WARMUP_SECONDS = 20;
const TAKEOVER_EDIT_SECONDS = 40;
const shardName = (i: number) => `shard-${i}`;
const BASE = Array.from({ length: REPLICAS }, (_, i) => shardName(i));
const SCALED = Array.from({ length: SCALE_TO }, (_, i) => shardName(i));

/** The value below which a share `p` of `values` lies (nearest rank). */
const percentile = (values: readonly number[], p: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(p * values.length) - 1)]!;
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const load = () => loadavg()[0]!.toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (text: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${text}\n`);
const seconds = (from: number, to = Date.now()) => ((to - from) / 1000).toFixed(1);
/** Prints as each step ends, so a step that fails later leaves the figures of those before it. */
const print = (...lines: string[]) => console.log(lines.join('\n'));

/** CPU time so far (s): the machine's, the API server's, each replica's of `replicas`, and this process's (the S3 fake, the proxies, the bench's watch). */
async function cpuSnapshot(replicas: readonly string[]): Promise<{ machine: number; apiServer: number | undefined; replicas: Map<string, number>; bench: number }> {
  const usage = process.cpuUsage();
  return {
    machine: await machineBusySeconds(),
    apiServer: fleet.apiServerPid === undefined ? undefined : await processCpuSeconds(fleet.apiServerPid),
    replicas: new Map(await Promise.all(replicas.map(async (name) => [name, await processCpuSeconds(fleet.replicas.get(name)!.pid)] as const))),
    bench: (usage.user + usage.system) / 1e6,
  };
}

/** What each part spent between two snapshots, and per object moved, as a table cell. */
function cpuSpent(before: Awaited<ReturnType<typeof cpuSnapshot>>, after: Awaited<ReturnType<typeof cpuSnapshot>>, moved: number, assigner: string): string {
  const part = (label: string, from: number | undefined, to: number | undefined): string =>
    from === undefined || to === undefined ? `${label} –` : `${label} ${(to - from).toFixed(1)} (${((1000 * (to - from)) / moved).toFixed(2)})`;
  return [
    part(`the machine (${cpus().length} cores)`, before.machine, after.machine),
    part('the API server', before.apiServer, after.apiServer),
    ...[...after.replicas.keys()].map((name) => part(name === assigner ? `${name} (the assigner)` : name, before.replicas.get(name), after.replicas.get(name))),
    part('the bench\'s process', before.bench, after.bench),
  ].join('; ');
}

/** Polls `check` (a failed poll, such as a reset connection under load, counts as not yet). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 3_600_000, everyMs = 1_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check().catch(() => undefined);
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`benchmark timed out waiting for ${what}\n${fleet.output()}`);
    await sleep(everyMs);
  }
}

/**
 * `count` objects, every one Ready for its generation (or, where `editPending` says so, a user's
 * edit of it not yet reconciled while it is Ready and Synced for the one before) and labelled for
 * one of `live`, none draining.
 */
const settledOn = (states: readonly ObjectState[], live: readonly string[], count: number, editPending: (s: ObjectState) => boolean = () => false) =>
  states.length === count && states.every((s) => (s.ready || (s.readyAndSynced && editPending(s))) && !s.draining && s.shard !== undefined && live.includes(s.shard));

/** Settled on `live`, every one of them holding objects, and unchanged over two looks `quietMs` apart. */
async function settle(live: readonly string[], what: string, count = OBJECTS, editPending?: (s: ObjectState) => boolean): Promise<ObjectState[]> {
  for (;;) {
    const first = await until(what, async () => {
      const states = await objectStates();
      return settledOn(states, live, count, editPending) && new Set(states.map((s) => s.shard)).size === live.length ? states : undefined;
    });
    await sleep(5_000);
    const second = await objectStates();
    const a = assignmentOf(first);
    if (settledOn(second, live, count, editPending) && second.every((s) => a.get(`${s.kind}/${s.name}`) === s.shard)) return second;
  }
}

/**
 * Waits until the assigner on `leader` has ended two passes in a row that wrote no label (its last
 * full pass is over), for at most `timeoutMs`. Says whether it did.
 */
async function assignerIdle(leader: string, timeoutMs = 600_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let since: { passes: number; labelChanges: number } | undefined;
  while (Date.now() < deadline) {
    const now = await assignerCounts(fleet.replicas.get(leader)!).catch(() => undefined);
    if (now && since && now.labelChanges === since.labelChanges && now.passes >= since.passes + 2) return true;
    if (now && (since === undefined || now.labelChanges !== since.labelChanges)) since = now;
    await sleep(1_000);
  }
  log(`the assigner on ${leader} still wrote labels after ${timeoutMs / 1000} s; going on`);
  return false;
}

/** How often the steady state's RSS is read after the first reading (for `--rss-watch-seconds`; the default, 330, spans one of the assigner's full passes, every 5 minutes). */
const RSS_SAMPLE_MS = 5_000;

/**
 * Reads every replica's RSS every 5 s for `watchMs`: a single reading catches a process at one
 * moment of its garbage collection and the assigner between or during its passes. Returns each
 * replica's lowest, median and highest reading.
 */
async function rssOverTime(names: readonly string[], watchMs: number): Promise<Map<string, { min: number; median: number; max: number }>> {
  const started = Date.now();
  const samples = new Map<string, number[]>(names.map((name) => [name, []]));
  while (Date.now() - started < watchMs) {
    for (const name of names) samples.get(name)!.push((await kernelFigures(fleet.replicas.get(name)!.pid)).rss);
    await sleep(RSS_SAMPLE_MS);
  }
  return new Map(
    [...samples].map(([name, series]) => {
      const sorted = [...series].sort((a, b) => a - b);
      return [name, { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! }];
    }),
  );
}

/**
 * Waits until no replica in `live` has anything queued or running, for at most `timeoutMs`: at
 * 100,000 objects the drift checks of the resync period (each object at its slot) may keep some
 * worker busy all along. Says whether the queues emptied.
 */
async function quiet(live: readonly string[], timeoutMs = QUIET_SECONDS * 1000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const stats = await Promise.all(live.map((name) => replicaStats(fleet.replicas.get(name)!))).catch(() => undefined);
    if (stats?.every((s) => s.queueDepth === 0 && s.activeWorkers === 0)) return true;
    await sleep(1_000);
  }
  log(`the queues did not empty within ${timeoutMs / 1000} s (drift checks at their slots); going on`);
  return false;
}

const fleet = await startFleet({
  workers: Number(values.workers),
  logLevel: values['log-level'],
  rateLimits: LIMITS,
  keepS3State: TEMPLATE < OBJECTS,
  apiServerProcess: true,
  shardTakeover: TAKEOVER,
  ...(DRIFT_BUDGET_PERCENT === undefined ? {} : { driftCheckBudget: { rateLimitPercent: DRIFT_BUDGET_PERCENT } }),
});
const watch = new ObjectStatesWatch(fleet.kubeconfig);
await watch.start();
/** Every object's state as the watch last delivered it (a list of 100,000 objects every second would load the API server). */
const objectStates = async () => watch.states();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void fleet.stop().finally(() => process.exit(1)));
const runStart = Date.now();
// Peak RSS of every replica over the run, sampled every 2 s.
const peakRss = new Map<string, number>();
const sampler = setInterval(() => {
  for (const replica of fleet.replicas.values()) {
    if (replica.exited) continue;
    void replicaStats(replica).then((s) => peakRss.set(replica.name, Math.max(peakRss.get(replica.name) ?? 0, s.rss)), () => undefined);
  }
}, 2_000);

try {
  // 1. create
  log(`load ${load()}: starting ${REPLICAS} replicas`);
  await Promise.all(BASE.map((name) => fleet.startReplica(name)));
  const objects = fleetObjects(OBJECTS, TABLE_SHARE);
  const createStart = Date.now();
  const bucketCount = objects.filter((o) => o.kind === 'Bucket').length;
  // The first of each kind, in proportion: both ProviderConfigs of both kinds among them.
  const templateBuckets = Math.max(2, Math.round(TEMPLATE * (bucketCount / OBJECTS)));
  const firstOf = (kind: FleetKind, count: number) => objects.filter((o) => o.kind === kind).slice(0, count);
  const templates = TEMPLATE < OBJECTS ? [...firstOf('Bucket', templateBuckets), ...firstOf('Table', Math.max(2, TEMPLATE - templateBuckets))] : objects;
  log(`creating ${templates.length} objects`);
  await createObjects(fleet.admin, templates);
  let created = await settle(BASE, 'every object Ready on a shard', templates.length);
  let createSeconds = seconds(createStart);
  log(`all Ready after ${createSeconds} s`);
  let seeded = '';
  if (templates.length < OBJECTS) {
    const templateSet = new Set(templates);
    const seeds = objects.filter((o) => !templateSet.has(o));
    log(`seeding ${seeds.length} objects (${seeds.filter((o) => o.kind === 'Table').length} Tables) as copies of those; the replicas stopped meanwhile`);
    await Promise.all(BASE.map((name) => fleet.stopReplica(name)));
    const seedStart = Date.now();
    const timed = async (what: string, seed: () => Promise<void>) => {
      await seed();
      log(`seeded ${what} in ${seconds(seedStart)} s`);
      return `${what} ${seconds(seedStart)} s`;
    };
    const parts = await Promise.all([
      timed('the API objects', () => seedObjects(fleet.admin, templates, seeds)),
      timed('the S3 buckets', () => seedBuckets(fleet, templates, seeds)),
      timed('the DynamoDB tables', () => seedTables(fleet, templates, seeds)),
    ]);
    const startAgain = Date.now();
    await Promise.all(BASE.map((name) => fleet.startReplica(name)));
    created = await settle(BASE, 'every object labelled and Ready on a shard');
    createSeconds = seconds(createStart);
    seeded = ` ${templates.length.toLocaleString('en')} of them created by the replicas (${seconds(createStart, seedStart)} s), the other ${seeds.length.toLocaleString('en')} seeded as copies of those (${parts.join(', ')}), then the replicas started again: every object labelled and Ready ${seconds(startAgain)} s after;`;
    log(`all Ready after ${createSeconds} s`);
  }

  // 2. steady state
  const steadyQuiet = await quiet(BASE);
  const leader = await leaderShard(fleet.admin, BASE);
  // What the assigner held for the labelling of 99,000 seeded objects is not its steady state.
  if (leader !== undefined) await assignerIdle(leader);
  const atIdle = new Map(await Promise.all(BASE.map(async (name) => [name, (await kernelFigures(fleet.replicas.get(name)!.pid)).rss] as const)));
  const overTime = RSS_WATCH_SECONDS > 0 ? await rssOverTime(BASE, RSS_WATCH_SECONDS * 1000) : undefined;
  const steadyRows = BASE.map((name) => {
    const held = created.filter((s) => s.shard === name);
    const spread = overTime?.get(name);
    const overTimeCell = spread ? `${mib(spread.min)} / **${mib(spread.median)}** / ${mib(spread.max)}` : 'not read';
    return `| ${name}${name === leader ? ' (assigner)' : ''} | ${held.filter((s) => s.kind === 'Bucket').length} | ${held.filter((s) => s.kind === 'Table').length} | **${mib(atIdle.get(name)!)}** | ${overTimeCell} |`;
  });
  print(
    `\nSteady state, ${OBJECTS.toLocaleString('en')} objects (${bucketCount.toLocaleString('en')} Buckets and ${(OBJECTS - bucketCount).toLocaleString('en')} Tables, on two ProviderConfigs) over ${REPLICAS} replicas, ${values.workers} workers each;${DRIFT_BUDGET_PERCENT === undefined ? '' : ` drift checks within ${DRIFT_BUDGET_PERCENT} % of each rate limit (driftCheckBudget.rateLimitPercent);`}${seeded} created and all Ready in ${createSeconds} s; ${steadyQuiet ? 'measured with every queue empty' : 'measured while drift checks still kept workers busy'} (load ${load()}):\n`,
    `RSS MiB once the queues were empty and the assigner idle, then its lowest, median and highest reading every ${RSS_SAMPLE_MS / 1000} s over the ${RSS_WATCH_SECONDS} s after (the assigner makes a full pass every 5 minutes):\n`,
    '| replica | Buckets | Tables | RSS MiB | over time: min / median / max |',
    '|---|---:|---:|---:|---:|',
    ...steadyRows,
  );

  // What that RSS is made of: the kernel's split, and V8's figures through the inspector, before and after a forced GC.
  const breakdownRows: string[] = [];
  for (const name of BASE) {
    const m = await memoryBreakdown(fleet.replicas.get(name)!.pid).catch(() => undefined);
    if (!m) continue;
    const v8 = m.v8;
    const cells = v8
      ? [mib(v8.before.heapUsed), mib(v8.before.heapTotal), mib(v8.codeSpace), mib(v8.before.external), mib(m.rssAnon - v8.before.heapTotal - v8.before.external), mib(v8.afterGc.heapUsed), mib(v8.afterGc.heapTotal), mib(v8.rssAfterGc)]
      : Array.from({ length: 8 }, () => '–');
    breakdownRows.push(`| ${name}${name === leader ? ' (assigner)' : ''} | ${mib(m.rss)} | ${mib(m.rssFile)} | ${mib(m.rssAnon)} | ${cells.join(' | ')} |`);
  }
  print(
    '\nWhat that RSS is made of, MiB: resident pages mapped from files (the node binary and libraries: shared by every Node process on the host) and anonymous ones; of these, V8\'s heap (used, reserved, and the compiled code in it) and the memory Node holds outside it (`external`: buffers, TLS); the rest is malloc, stacks and the engine\'s own. Then the heap and RSS after a full GC forced through the inspector:\n',
    '| replica | RSS | files | anonymous | heap used | heap reserved | code | external | other anonymous | heap used after GC | reserved after GC | RSS after GC |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...breakdownRows,
  );

  // 3. restart of every replica
  if (STEPS.has('restart')) {
    log('restart: every replica stopped, then started again');
    const restartLog = await fleet.requests.count();
    const restartStart = Date.now();
    await Promise.all(BASE.map((name) => fleet.stopReplica(name)));
    await Promise.all(BASE.map((name) => fleet.startReplica(name)));
    await settle(BASE, 'every object on a live shard after the restart');
    const restartQuiet = await quiet(BASE);
    const restartSeconds = seconds(restartStart);
    // A restart queues no object in sync (each is checked at its slot of the resync period): watch a while longer for late writes.
    await sleep(RESTART_WATCH_SECONDS * 1000);
    const sinceRestart = fleet.calls().filter((c) => c.sentAt >= restartStart);
    const restartWrites = await fleet.requests.operatorWritesSince(restartLog);
    const afterRestart = await Promise.all(BASE.map(async (name) => `${name} ${mib((await replicaStats(fleet.replicas.get(name)!)).rss)}`));
    print(
      `\nRestart of every replica (SIGTERM to all ${REPLICAS}, then all started again), ${OBJECTS.toLocaleString('en')} objects in sync:\n`,
      '| measure | result |',
      '|---|---:|',
      `| stop to every object on a live shard, ${restartQuiet ? 'queues empty' : 'queues still busy with drift checks 600 s after that'} | ${restartSeconds} s |`,
      `| cloud calls counted from the stop to ${RESTART_WATCH_SECONDS} s after that | ${sinceRestart.length} |`,
      `| cloud writes (counted at the backends) | **${sinceRestart.filter(isCloudWrite).length}** |`,
      `| cloud reads | ${sinceRestart.filter((c) => !isCloudWrite(c)).length} |`,
      `| operator API writes to Buckets and Tables: labels and metadata / status | ${restartWrites.metadata} / ${restartWrites.status} |`,
      `| RSS after, MiB | ${afterRestart.join(', ')} |`,
    );
  }

  // 4. a replica killed in a steady fleet, while a user edits --edit-share of the objects every 2 s
  if (STEPS.has('takeover')) {
    await settle(BASE, `every object on ${REPLICAS} shards`);
    const assigner = await until('the assigner elected', () => leaderShard(fleet.admin, BASE));
    const beforeKill = await objectStates();
    const victim = BASE.filter((s) => s !== assigner).sort((a, b) => beforeKill.filter((o) => o.shard === b).length - beforeKill.filter((o) => o.shard === a).length)[0]!;
    const keyOf = (o: { kind: string; name: string }) => `${o.kind}/${o.name}`;
    const victimKeys = new Set(beforeKill.filter((o) => o.shard === victim).map(keyOf));
    const perRound = EDITS_PER_ROUND;
    const stepStart = Date.now();
    const edits: Array<{ key: string; kind: FleetKind; name: string; at: number; generation: number; readyAt?: number }> = [];
    let editing = true;
    let watching = true;
    // when the kill was, and from then how many objects were still labelled for the killed replica, read each round
    const timeline: { killedAt?: number; onVictim: { at: number; count: number }[] } = { onVictim: [] };
    log(`takeover: a user edits ${perRound} objects every 2 s; ${victim} (${victimKeys.size} objects) to be SIGKILLed after ${TAKEOVER_WARMUP_SECONDS} s`);
    const editor = (async () => {
      for (let round = 0; editing; round++) {
        const roundStart = Date.now();
        const some = new Set(Array.from({ length: perRound }, () => objects[Math.floor(Math.random() * objects.length)]!));
        await Promise.all([...some].map(async (object) => {
          const at = Date.now();
          const generation = await editObject(fleet.admin, object, `takeover-${round}`).catch(() => undefined);
          if (generation !== undefined) edits.push({ key: keyOf(object), kind: object.kind, name: object.name, at, generation });
        }));
        await sleep(Math.max(0, 2_000 - (Date.now() - roundStart)));
      }
    })();
    // Each edit is done when its object is first seen Ready and Synced at its generation or a later
    // one: read from the API server, each object with an edit pending once a round (a watch of
    // 100,000 objects in this busy process may lag behind, and would then date every edit late).
    const watcher = (async () => {
      while (watching) {
        const seenAt = Date.now();
        const pending = edits.filter((edit) => edit.readyAt === undefined);
        const looked = new Map<string, Promise<ObjectState | undefined>>();
        for (const edit of pending) if (!looked.has(edit.key)) looked.set(edit.key, objectState(fleet.admin, edit.kind, edit.name).catch(() => undefined));
        for (const edit of pending) {
          const state = await looked.get(edit.key);
          if (state?.readyAndSynced && state.observedGeneration >= edit.generation) edit.readyAt = seenAt;
        }
        if (timeline.killedAt !== undefined) timeline.onVictim.push({ at: seenAt, count: watch.countOn(victim) });
        await sleep(250);
      }
    })();
    await sleep(TAKEOVER_WARMUP_SECONDS * 1000);
    const survivors = BASE.filter((s) => s !== victim);
    const cpuBefore = await cpuSnapshot(survivors);
    const killed = Date.now();
    timeline.killedAt = killed;
    await fleet.kill(victim);
    // On the clock of a `--cpu-prof` profile (bench/cpuprofile-top.ts --from), which every process of the machine shares.
    log(`${victim} killed at ${process.hrtime.bigint() / 1000n} µs of the profile clock; the user keeps editing for ${TAKEOVER_EDIT_SECONDS} s`);
    await sleep(TAKEOVER_EDIT_SECONDS * 1000);
    editing = false;
    await editor;
    // The victim's edits pending at the kill or made after it.
    const victimEdits = () => edits.filter((e) => victimKeys.has(e.key) && (e.at >= killed || e.readyAt === undefined || e.readyAt > killed));
    // The edits decide; adopted, its objects are worked before they are relabelled, which goes on behind them.
    await until('every edit of the killed replica\'s objects Ready', async () => (victimEdits().every((e) => e.readyAt !== undefined) ? true : undefined), 1_800_000, 500);
    const editsDoneAt = Date.now();
    // The rest of its objects (relabelling moves the edited ones first, and adopted ones are worked before they move).
    await until('every object of the killed replica relabelled', async () => (timeline.onVictim.at(-1)?.count === 0 ? true : undefined), 1_800_000, 500);
    const cpuAfter = await cpuSnapshot(survivors);
    watching = false;
    await watcher;
    log(`its objects relabelled; profile clock ${process.hrtime.bigint() / 1000n} µs`);
    const cpuRow = cpuSpent(cpuBefore, cpuAfter, victimKeys.size, assigner);
    /** From the kill, when the objects still labelled for the victim first were at most `share` of those it held. */
    const movedBy = (share: number) => seconds(killed, timeline.onVictim.find((sample) => sample.count <= victimKeys.size * share)!.at);
    const firstMove = timeline.onVictim.find((sample) => sample.count < victimKeys.size);
    const relabelledAt = timeline.onVictim.find((sample) => sample.count === 0)!.at;
    const pace = firstMove && relabelledAt > firstMove.at ? Math.round(firstMove.count / ((relabelledAt - firstMove.at) / 1000)) : undefined;
    const latency = (list: typeof edits) => list.map((e) => (e.readyAt! - Math.max(e.at, killed)) / 1000);
    const summary = (values: number[]) => (values.length === 0 ? 'none' : `${percentile(values, 0.95).toFixed(1)} s / ${Math.max(...values).toFixed(1)} s (${values.length})`);
    const mine = latency(victimEdits());
    const pendingAtKill = victimEdits().filter((e) => e.at < killed).length;
    const othersAfter = edits.filter((e) => !victimKeys.has(e.key) && e.at >= killed && e.readyAt !== undefined);
    const othersBefore = edits.filter((e) => e.at < killed && e.readyAt !== undefined && e.readyAt < killed);
    const stepOverlaps = overlappingCalls(fleet.calls().filter((c) => c.sentAt >= stepStart));
    const goal = LEASE_SECONDS + 10;
    print(
      `\nA replica SIGKILLed in a steady fleet: a user edits ${perRound} random objects every 2 s from ${TAKEOVER_WARMUP_SECONDS} s before the kill to ${TAKEOVER_EDIT_SECONDS} s after it; ${victim} (not the assigner) held ${victimKeys.size} objects; Lease duration ${LEASE_SECONDS} s; takeover ${TAKEOVER === 'adopt' ? 'by adoption (--takeover adopt)' : 'by relabelling (--takeover relabel)'} (load ${load()}):\n`,
      '| measure | result |',
      '|---|---:|',
      `| kill to its last edit Ready | ${seconds(killed, editsDoneAt)} s |`,
      `| kill to its first / half / every one of its objects relabelled for a survivor${TAKEOVER === 'adopt' ? ' (the adopters work them meanwhile)' : ''} | ${firstMove ? seconds(killed, firstMove.at) : '–'} s / ${movedBy(0.5)} s / **${seconds(killed, relabelledAt)} s** |`,
      `| objects relabelled per second, from the first read that showed one moved to the last | ${pace ?? '–'} |`,
      `| CPU from the kill to the last object relabelled, s (and ms per object moved) | ${cpuRow} |`,
      `| edits of its objects pending at the kill / made after it | ${pendingAtKill} / ${victimEdits().length - pendingAtKill} |`,
      `| each of those edits: from the later of the edit and the kill to Ready at its generation, p95 / max (count); goal ≤ ${goal} s | **${summary(mine)}** |`,
      `| within the goal | **${mine.every((v) => v <= goal) ? 'yes' : `no (${mine.filter((v) => v > goal).length} over)`}** |`,
      `| for comparison, edits of the survivors' own objects after the kill: edit to Ready, p95 / max (count) | ${summary(othersAfter.map((e) => (e.readyAt! - e.at) / 1000))} |`,
      `| and every edit before the kill (steady state) | ${summary(othersBefore.map((e) => (e.readyAt! - e.at) / 1000))} |`,
      `| pairs of two replicas' calls on one object overlapping in time, from the step's start | **${stepOverlaps.length}** |`,
    );
    log(`${victim} restarted (as its container would be)`);
    await fleet.startReplica(victim);
    // Its objects come back once the assigner's hold of its Lease has expired: the next step starts from a settled fleet.
    await settle(BASE, `every object on ${REPLICAS} shards again`);
  }

  // 5. a replica killed mid-run
  if (STEPS.has('kill')) {
    const killLeader = await until('the assigner elected', () => leaderShard(fleet.admin, BASE));
    const beforeKill = await objectStates();
    const victim = BASE.filter((s) => s !== killLeader).sort((a, b) => beforeKill.filter((o) => o.shard === b).length - beforeKill.filter((o) => o.shard === a).length)[0]!;
    const victimObjects = beforeKill.filter((o) => o.shard === victim);
    const survivors = BASE.filter((s) => s !== victim);
    log(`kill: every object edited, then ${victim} (${victimObjects.length} objects) SIGKILLed while it works on them`);
    const editsFrom = Date.now();
    await editObjects(fleet.admin, objects, '1');
    const editsSent = Date.now();
    await until(`${victim} calling the cloud for the edits`, async () => (fleet.calls().some((c) => c.caller === victim && c.sentAt >= editsFrom) ? true : undefined), 600_000, 50);
    const killedAt = Date.now();
    await fleet.kill(victim);
    const victimKeys = new Set(victimObjects.map((o) => `${o.kind}/${o.name}`));
    const victimDone = victimObjects.length - (await objectStates()).filter((s) => victimKeys.has(`${s.kind}/${s.name}`) && !s.ready).length;
    const relabelledAt = await until('the victim\'s objects relabelled', async () => (watch.countOn(victim) > 0 ? undefined : Date.now()), 3_600_000, 250);
    const victimReadyAt = await until('the victim\'s objects Ready for the edit', async () => {
      const states = await objectStates();
      return states.filter((s) => victimKeys.has(`${s.kind}/${s.name}`)).every((s) => s.ready && s.shard !== undefined && survivors.includes(s.shard)) ? Date.now() : undefined;
    }, 3_600_000, 250);
    await settle(survivors, 'every object Ready for its edit on the survivors');
    const allReadyAt = Date.now();
    const resources = new Set(victimObjects.map((o) => `k8or-fleet-${o.name}`));
    const takenOver = new Set(fleet.calls().filter((c) => c.sentAt > killedAt && c.caller !== victim && c.resource !== undefined && resources.has(c.resource)).map((c) => c.resource));
    print(
      `\nA replica SIGKILLed mid-run: every object edited (the API writes took ${seconds(editsFrom, editsSent)} s), ${victim} killed at its first cloud call for them; Lease duration ${LEASE_SECONDS} s (load ${load()}):\n`,
      '| measure | result |',
      '|---|---:|',
      `| objects of the killed replica / Ready for the edit when it died | ${victimObjects.length} / ${victimDone} |`,
      `| kill to every one of them relabelled for a survivor | ${seconds(killedAt, relabelledAt)} s |`,
      `| kill to every one of them Ready for the edit on a survivor (goal ≤ ${LEASE_SECONDS + 10} s) | **${seconds(killedAt, victimReadyAt)} s** |`,
      `| kill to every object of the fleet Ready for the edit | ${seconds(killedAt, allReadyAt)} s |`,
      `| its objects the survivors called the cloud for | ${takenOver.size} |`,
    );
    log(`${victim} restarted (as its container would be)`);
    await fleet.startReplica(victim);
  }

  // 6. scaling out and back, with a user editing a few objects all along
  if (STEPS.has('scale')) {
    const beforeScale = await settle(BASE, `every object on ${REPLICAS} shards`);
    let revision = 2;
    let editing = true;
    // When the user last edited each object: at the limits, an edit can wait seconds behind drift
    // checks, so with 2 s between edits some are always pending; the step is settled once every
    // pending one is younger than EDIT_PENDING_MS (the rest Ready at their generation).
    const editedAt = new Map<string, number>();
    const editPending = (s: ObjectState): boolean => Date.now() - (editedAt.get(`${s.kind}/${s.name}`) ?? 0) < EDIT_PENDING_MS;
    const editor = (async () => {
      while (editing) {
        const some = Array.from({ length: EDITS_PER_ROUND }, () => objects[Math.floor(Math.random() * objects.length)]!);
        const at = Date.now();
        await editObjects(fleet.admin, some, String(revision++)).catch(() => undefined);
        for (const object of some) editedAt.set(`${object.kind}/${object.name}`, at);
        await sleep(2_000);
      }
    })();
    const scaleRows: string[] = [];
    const move = async (to: readonly string[], from: Map<string, string | undefined>, change: () => Promise<void>, label: string, ideal: number) => {
      const logFrom = await fleet.requests.count();
      const started = Date.now();
      log(`scaling: ${label}`);
      await change();
      const states = await settle(to, `every object on ${to.length} shards`, OBJECTS, editPending);
      const moved = states.filter((s) => from.get(`${s.kind}/${s.name}`) !== s.shard).length;
      const writes = await fleet.requests.operatorWritesSince(logFrom);
      scaleRows.push(`| ${label} | ${seconds(started)} s | ${moved} (${((moved / OBJECTS) * 100).toFixed(1)} %) | ${Math.round(ideal)} | **${(moved / ideal).toFixed(2)}** | ${writes.metadata} | **${(writes.metadata / Math.max(1, moved)).toFixed(2)}** | ${writes.status} |`);
      return states;
    };
    const beforeAssignment = assignmentOf(beforeScale);
    const extra = SCALED.filter((s) => !BASE.includes(s));
    const scaled = await move(SCALED, beforeAssignment, async () => void (await Promise.all(extra.map((name) => fleet.startReplica(name)))), `${REPLICAS} → ${SCALE_TO} (replicas started)`, (OBJECTS * extra.length) / SCALE_TO);
    const scaledAssignment = assignmentOf(scaled);
    const onLeaving = scaled.filter((s) => s.shard !== undefined && extra.includes(s.shard)).length;
    const back = await move(BASE, scaledAssignment, async () => void (await Promise.all(extra.map((name) => fleet.stopReplica(name)))), `${SCALE_TO} → ${REPLICAS} (replicas stopped with SIGTERM)`, (OBJECTS * extra.length) / SCALE_TO);
    editing = false;
    await editor;
    const restored = back.filter((s) => beforeAssignment.get(`${s.kind}/${s.name}`) === s.shard).length;
    print(
      `\nScaling ${REPLICAS} → ${SCALE_TO} → ${REPLICAS} replicas while a user edits ${EDITS_PER_ROUND} random objects every 2 s (load ${load()}). The ideal is the share the new (or leaving) shards hold: ${extra.length}/${SCALE_TO} of the objects. API writes are the operator's (assigner and shards) to Buckets and Tables in the step, apart from status:\n`,
      '| step | until settled | objects moved | ideal | moved / ideal | label and metadata writes | per object moved | status writes |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...scaleRows,
      '',
      `Objects on the leaving shards before scaling back: ${onLeaving}; after it, ${restored} of ${OBJECTS} objects are back on the shard they held before scaling out.`,
    );
  }

  // 7. the trace
  clearInterval(sampler);
  const calls = fleet.calls();
  const overlaps = overlappingCalls(calls);
  const anonymous = calls.filter((c) => c.caller === undefined).length;
  const runSeconds = (Date.now() - runStart) / 1000;
  print(
    `\nThe trace: ${calls.length.toLocaleString('en')} cloud calls over ${runSeconds.toFixed(0)} s, each with its replica (User-Agent \`app/<shard>\`) and object; calls without a replica: **${anonymous}**; pairs of two replicas' calls on one object overlapping in time: **${overlaps.length}**${overlaps.length > 0 ? ` (first: ${overlaps[0]})` : ''}.`,
    `\nThe fleet's cloud calls per ProviderConfig and service, counted at the backends (the proxies in front of them), against the limit (burst + rate × window):\n`,
    '| ProviderConfig | service | calls | limit (rate/s, burst) | most in 1 s / limit | most in 10 s / limit | most in 60 s / limit | within |',
    '|---|---|---:|---:|---:|---:|---:|---|',
  );
  const overLimit: string[] = [];
  for (const providerConfig of PROVIDER_CONFIGS) {
    for (const service of FLEET_SERVICES) {
      const ofService = calls.filter((c) => c.providerConfig === providerConfig && c.service === service);
      const arrivals = ofService.map((c) => c.sentAt);
      const limit = LIMITS[service];
      const windows = [1, 10, 60].map((s) => ({ seconds: s, ...busiestWindow(arrivals, s * 1000), allowed: limit.burst + limit.requestsPerSecond * s }));
      print(`| ${providerConfig} | ${service} | ${arrivals.length} | ${limit.requestsPerSecond}, ${limit.burst} | ${windows.map((w) => `${w.most} / ${w.allowed}`).join(' | ')} | ${windows.every((w) => w.most <= w.allowed) ? 'yes' : '**no**'} |`);
      for (const w of windows.filter((window) => window.most > window.allowed && window.from !== undefined)) {
        // Who called in the window over the limit, and when it was: to tell a share that was wrong from arrivals bunched on the way.
        const inWindow = ofService.filter((c) => c.sentAt >= w.from! && c.sentAt < w.from! + w.seconds * 1000);
        const byCaller = new Map<string, number>();
        for (const c of inWindow) byCaller.set(c.caller ?? '?', (byCaller.get(c.caller ?? '?') ?? 0) + 1);
        overLimit.push(`${providerConfig} ${service}: ${w.most} calls in ${w.seconds} s from +${((w.from! - runStart) / 1000).toFixed(1)} s of the run: ${[...byCaller].sort().map(([caller, n]) => `${caller} ${n}`).join(', ')}`);
      }
    }
  }
  if (overLimit.length > 0) print('', 'Over the limit:', ...overLimit.map((line) => `- ${line}`));
  print(`\nPeak RSS over the run (sampled every 2 s), MiB: ${[...peakRss].map(([name, rss]) => `${name} ${mib(rss)}`).join(', ')}.`);
  if (values.hold) {
    log(`holding the fleet until SIGINT: ${[...fleet.replicas.values()].filter((r) => !r.exited).map((r) => `${r.name} pid ${r.pid}`).join(', ')}`);
    await new Promise(() => undefined);
  }
} finally {
  clearInterval(sampler);
  watch.stop();
  await fleet.stop();
}
