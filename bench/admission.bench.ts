// What the admission webhook costs a write through `k8or sandbox`: Bucket creates per second with
// the k8or webhook registered (as `k8or sandbox` registers it) and with its two webhook
// configurations deleted, alternating in one run (with, without, with, without, ...), so the ratio
// compares figures taken under the same load.
//
//   npm run build && node bench/admission.bench.ts [--objects 2000] [--concurrency 32] [--rounds 2] [--warmup 8000]
//
// The local stack (startLocalStack, what `k8or sandbox` runs: API server, webhook, engine, S3 fake,
// DynamoDB Local) runs in a child process; this process drives it over keep-alive HTTPS connections,
// so the client's own TLS set-up is not what is measured. The Buckets carry `k8or.io/paused`, so
// the engine only records them as paused (the same small work in every phase) and no cloud call
// competes with the writes; between phases the bench waits until the engine has seen every Bucket.
// Before the measured rounds, a warm-up phase with and one without the webhook (`--warmup` creates
// each; printed, not counted) lets the JIT compile both paths, so the first measured round is not
// the one that pays for it. CPU per create is split by thread (Linux: /proc/PID/task): the API
// server's thread, the webhook's worker thread, V8's helper threads (GC, compiler) and the rest,
// and the client's (this process's) own, so the cost of each side is seen apart from the machine's
// load. Prints a Markdown table for docs/benchmarks.md.
import { fork } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Annotations, GROUP, VERSION } from '@k8or/api';
import { parse } from 'yaml';

/** CPU time (user + system, ms) the server process has used so far, by thread. */
interface ThreadCpu {
  /** The API server's thread (the process's main thread). */
  main: number;
  /** The webhook's worker thread, when it runs in one. */
  webhook: number;
  /** V8's helper threads: garbage collection and compilation off the main threads. */
  v8: number;
  /** Everything else: libuv's thread pool, the inspector, signal handling. */
  other: number;
}

type FromServer = { type: 'ready'; kubeconfigPath: string } | { type: 'failed'; message: string } | { type: 'cpu'; threads: ThreadCpu; connections: number };

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** The CPU time of each thread of this process, from /proc, grouped by what the thread does (by its name). */
function threadCpu(): ThreadCpu {
  const out: ThreadCpu = { main: 0, webhook: 0, v8: 0, other: 0 };
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    let name: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    // Node names a worker thread after its `name` option (k8or-webhook), else WorkerThread.
    const group = name === 'MainThread' ? 'main' : name === 'k8or-webhook' || name === 'WorkerThread' ? 'webhook' : name.startsWith('V8') ? 'v8' : 'other';
    out[group] += ms;
  }
  return out;
}

if (process.argv.includes('--serve')) {
  const dir = process.argv[process.argv.indexOf('--serve') + 1]!;
  const send = (message: FromServer): void => void process.send?.(message);
  // Connections the server process opens (to the webhook: each one a TLS handshake), counted as Node creates them.
  let connections = 0;
  subscribe('net.client.socket', () => connections++);
  try {
    const stop = process.argv.includes('--no-engine') ? await startAdmissionOnly(join(dir, 'kubeconfig'), process.argv.includes('--webhook-in-worker')) : await startWholeStack(dir);
    process.on('disconnect', () => void stop().then(() => process.exit(0)));
    process.on('message', (message: { type: string }) => {
      if (message.type !== 'cpu') return;
      // With a CPU profile, phase boundaries on the profile's clock, to split it by phase.
      if (process.execArgv.includes('--cpu-prof')) console.error(`phase boundary at ${process.hrtime.bigint() / 1000n} us`);
      send({ type: 'cpu', threads: threadCpu(), connections });
    });
    send({ type: 'ready', kubeconfigPath: join(dir, 'kubeconfig') });
  } catch (error) {
    send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  }
} else {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '2000' },
      concurrency: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '2' },
      // Creates in each of the two warm-up phases (with, then without the webhook), not counted. With
      // 2,000 the "with" rounds still got cheaper round after round (V8 still compiling); 8,000 reach it.
      warmup: { type: 'string', default: '8000' },
      'no-engine': { type: 'boolean', default: false },
      // Run the webhook server in a worker thread (startWebhookWorker) rather than on the API server's thread.
      'webhook-in-worker': { type: 'boolean', default: false },
      // Write a V8 CPU profile of the server process into this directory (read it with bench/cpuprofile-top.ts).
      'server-cpu-prof': { type: 'string' },
      // Extra Node/V8 flags for the server process, space-separated: --server-node-flags="--trace-gc --max-semi-space-size=32".
      'server-node-flags': { type: 'string', default: '' },
    },
  });
  const objects = Number(values.objects);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  const warmup = Number(values.warmup);

  const dir = mkdtempSync(join(tmpdir(), 'k8or-admission-bench-'));
  const child = fork(new URL(import.meta.url).pathname, ['--serve', dir, ...(values['no-engine'] ? ['--no-engine'] : []), ...(values['webhook-in-worker'] ? ['--webhook-in-worker'] : [])], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...(values['server-cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['server-cpu-prof']] : []), ...values['server-node-flags'].split(' ').filter(Boolean)],
  });
  const ready = await new Promise<FromServer>((resolve, reject) => {
    child.once('message', (m) => resolve(m as FromServer));
    child.once('exit', (code) => reject(new Error(`k8or sandbox process exited with ${code}`)));
  });
  if (ready.type !== 'ready') throw new Error(`k8or sandbox did not start: ${ready.type === 'failed' ? ready.message : ''}`);

  /** CPU time (ms) the server process has used so far by thread, this (client) process's, and the connections the server opened. */
  interface Cpu extends ThreadCpu {
    client: number;
    connections: number;
  }
  const serverCpu = (): Promise<Cpu> =>
    new Promise((resolve, reject) => {
      child.once('message', (m: FromServer) => {
        const { user, system } = process.cpuUsage();
        if (m.type === 'cpu') resolve({ ...m.threads, client: (user + system) / 1000, connections: m.connections });
        else reject(new Error(`expected the server's CPU figures, got ${m.type}`));
      });
      child.send({ type: 'cpu' });
    });

  interface Kubeconfig {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  }
  const kubeconfig = parse(readFileSync(ready.kubeconfigPath, 'utf8')) as Kubeconfig;
  const server = kubeconfig.clusters[0]!.cluster.server;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, ca: Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8') });
  const token = kubeconfig.users[0]!.user.token;

  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}`, accept: 'application/json' };
      if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      const req = request(new URL(path, server), { method, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  const ok = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await call(method, path, body);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  };

  const WEBHOOK_KINDS = ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations'] as const;
  const webhookPath = (plural: string): string => `/apis/admissionregistration.k8s.io/v1/${plural}`;
  // The configurations `k8or sandbox` registered, kept to put back after a phase without them.
  const registered = new Map<string, Record<string, unknown>[]>();
  for (const plural of WEBHOOK_KINDS) {
    const items = ((await ok('GET', webhookPath(plural)))['items'] as Record<string, unknown>[]).map((item) => {
      const metadata = item['metadata'] as Record<string, unknown>;
      return { ...item, metadata: { name: metadata['name'], labels: metadata['labels'] } };
    });
    if (items.length === 0) throw new Error(`k8or sandbox registered no ${plural}`);
    registered.set(plural, items);
  }
  const setWebhooks = async (on: boolean): Promise<void> => {
    for (const plural of WEBHOOK_KINDS) {
      for (const item of registered.get(plural)!) {
        const name = String((item['metadata'] as Record<string, unknown>)['name']);
        if (on) await ok('POST', webhookPath(plural), item);
        else await ok('DELETE', `${webhookPath(plural)}/${name}`);
      }
    }
  };

  const bucket = (name: string): object => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Bucket',
    metadata: { name, labels: { team: 'media', env: 'bench' }, annotations: { [Annotations.paused]: 'true' } },
    spec: { versioning: true, lifecycle: [{ id: 'expire-old-versions', noncurrentVersionExpirationDays: 30 }], labels: { team: 'media' } },
  });

  async function createBuckets(namespace: string, count: number): Promise<{ seconds: number; latencies: number[] }> {
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await ok('POST', `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/buckets`, bucket(`b-${i}`));
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { seconds: (performance.now() - started) / 1000, latencies: latencies.sort((a, b) => a - b) };
  }

  /** Waits until the engine has recorded every Bucket of `namespace` (as paused), so it is idle again. */
  async function engineCaughtUp(namespace: string, count: number): Promise<void> {
    if (values['no-engine']) return;
    for (;;) {
      const list = await ok('GET', `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/buckets`);
      const seen = (list['items'] as { status?: { conditions?: unknown[] } }[]).filter((b) => (b.status?.conditions?.length ?? 0) > 0).length;
      if (seen >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  type Phase = 'with' | 'without';
  interface Measured {
    creates: number;
    seconds: number;
    cpu: Omit<Cpu, 'connections'>;
    connections: number;
  }
  const KEYS = ['main', 'webhook', 'v8', 'other', 'client'] as const;
  const rows: { label: string; measured: Measured; p50: number; p99: number; load: number }[] = [];
  const totals: Record<Phase, Measured> = {
    with: { creates: 0, seconds: 0, cpu: { main: 0, webhook: 0, v8: 0, other: 0, client: 0 }, connections: 0 },
    without: { creates: 0, seconds: 0, cpu: { main: 0, webhook: 0, v8: 0, other: 0, client: 0 }, connections: 0 },
  };

  let webhooksOn = true;
  /** One phase: `count` creates into a new namespace, with or without the webhook configurations. */
  const runPhase = async (phase: Phase, namespace: string, count: number, label: string): Promise<Measured> => {
    const wanted = phase === 'with';
    if (webhooksOn !== wanted) {
      await setWebhooks(wanted);
      webhooksOn = wanted;
    }
    await ok('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    const before = await serverCpu();
    const { seconds, latencies } = await createBuckets(namespace, count);
    await engineCaughtUp(namespace, count);
    // Includes the engine's pass over the new (paused) Buckets, the same in every phase.
    const after = await serverCpu();
    const cpu = { main: 0, webhook: 0, v8: 0, other: 0, client: 0 };
    for (const key of KEYS) cpu[key] = after[key] - before[key];
    const measured = { creates: count, seconds, cpu, connections: after.connections - before.connections };
    rows.push({ label, measured, p50: percentile(latencies, 50), p99: percentile(latencies, 99), load: loadavg()[0]! });
    return measured;
  };

  const loadAtStart = loadavg();
  // Warm-up, not counted: the webhook's caches, connection pools, and the JIT of both paths.
  if (warmup > 0) {
    await runPhase('with', 'warmup-with', warmup, 'warm-up, with the webhook (not counted)');
    await runPhase('without', 'warmup-without', warmup, 'warm-up, without the webhook (not counted)');
  }
  for (let round = 1; round <= rounds; round++) {
    for (const phase of ['with', 'without'] as const) {
      const measured = await runPhase(phase, `${phase}-${round}`, objects, `${phase === 'with' ? 'with the webhook' : 'without the webhook'} (round ${round})`);
      const total = totals[phase];
      total.creates += measured.creates;
      total.seconds += measured.seconds;
      for (const key of KEYS) total.cpu[key] += measured.cpu[key];
      total.connections += measured.connections;
    }
  }
  const loadAtEnd = loadavg();

  const perCreate = (m: Measured, key: (typeof KEYS)[number] | 'server'): number => (key === 'server' ? m.cpu.main + m.cpu.webhook + m.cpu.v8 + m.cpu.other : m.cpu[key]) / m.creates;
  const ms = (value: number): string => value.toFixed(3);
  const rate = (m: Measured): number => m.creates / m.seconds;
  console.log(`\nCPU per create in ms: server process (all threads) = API server thread + webhook worker thread + V8 helper threads (GC, compiler) + other threads; client = this process.`);
  console.log(`| Phase (${objects} Bucket creates, ${concurrency} in flight) | Creates/s | p50 / p99 | Server CPU per create | API server thread | Webhook thread | V8 helpers | Other | Client | Connections opened | Load (1 min) |`);
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { label, measured, p50, p99, load } of rows) {
    console.log(
      `| ${label} | ${Math.round(rate(measured)).toLocaleString('en')} | ${p50.toFixed(0)} / ${p99.toFixed(0)} ms | ${ms(perCreate(measured, 'server'))} | ${ms(perCreate(measured, 'main'))} | ${ms(perCreate(measured, 'webhook'))} | ${ms(perCreate(measured, 'v8'))} | ${ms(perCreate(measured, 'other'))} | ${ms(perCreate(measured, 'client'))} | ${measured.connections} | ${load.toFixed(1)} |`,
    );
  }
  const pair = (key: (typeof KEYS)[number] | 'server'): string => `${ms(perCreate(totals.with, key))} / ${ms(perCreate(totals.without, key))}`;
  console.log(
    `| **all ${rounds} rounds, with / without** | **${Math.round(rate(totals.with)).toLocaleString('en')} / ${Math.round(rate(totals.without)).toLocaleString('en')}** | | ${pair('server')} | ${pair('main')} | ${pair('webhook')} | ${pair('v8')} | ${pair('other')} | ${pair('client')} | ${totals.with.connections} / ${totals.without.connections} | |`,
  );
  const extra = (key: (typeof KEYS)[number] | 'server'): string => ms(perCreate(totals.with, key) - perCreate(totals.without, key));
  console.log(`\nRate with / without the webhook: **${(rate(totals.with) / rate(totals.without)).toFixed(2)}** (${rounds} rounds of ${objects} creates each, ${warmup} warm-up creates each way)`);
  console.log(
    `The webhook's extra CPU per create: server ${extra('server')} ms = API server thread ${extra('main')} + webhook thread ${extra('webhook')} + V8 helpers ${extra('v8')} + other ${extra('other')}; client ${extra('client')} ms`,
  );
  console.log(`Load average (1, 5, 15 min): at the start ${loadAtStart.map((l) => l.toFixed(2)).join(', ')}; at the end ${loadAtEnd.map((l) => l.toFixed(2)).join(', ')}; ${new Date().toISOString()}, Node ${process.version}`);

  agent.destroy();
  child.disconnect();
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}

/** What `k8or sandbox` runs (startLocalStack): API server, webhook, engine, local clouds. */
async function startWholeStack(dir: string): Promise<() => Promise<void>> {
  const { localStackLogger, startLocalStack } = await import('@k8or/cli');
  const stack = await startLocalStack({ kubeconfigPath: join(dir, 'kubeconfig'), port: 0, logFile: join(dir, 'sandbox.log'), logLevel: 'warn' }, localStackLogger(join(dir, 'sandbox.log'), 'warn'));
  return () => stack.stop();
}

/** The API server and the webhook wired as `k8or sandbox` wires them, without the engine and the clouds. */
async function startAdmissionOnly(kubeconfigPath: string, inWorker: boolean): Promise<() => Promise<void>> {
  const { startSandbox } = await import('@k8or/apiserver');
  const { installCrds } = await import('@k8or/core');
  const { awsProvider } = await import('@k8or/provider-aws');
  const { startWebhookServer, startWebhookWorker } = await import('@k8or/webhook');
  const { CustomObjectsApi, KubeConfig } = await import('@kubernetes/client-node');
  const { pino } = await import('pino');
  const sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn' });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sandbox.kubeconfig);
  await installCrds(kubeConfig);
  // The default ProviderConfig, as k8or sandbox installs it (no cloud is called here).
  await kubeConfig.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: 'providerconfigs',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'us-east-1', endpoints: { bucket: 'http://127.0.0.1:9' } } },
  });
  const common = { port: 0, tls: { selfSigned: {} }, kubeConfig, secretNamespaces: ['k8or-system'], caBundle: { register: true }, logger: pino({ level: 'warn' }), processMetrics: false };
  const webhook = inWorker
    ? await startWebhookWorker({ ...common, providers: [{ url: import.meta.resolve('@k8or/provider-aws'), export: 'awsProvider' }] })
    : await startWebhookServer({ ...common, providers: [awsProvider] });
  return async () => {
    await webhook.close();
    await sandbox.stop();
  };
}
