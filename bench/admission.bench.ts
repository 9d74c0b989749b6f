// What the admission webhook costs a write through `k8or sandbox`: Bucket creates per second with
// the k8or webhook registered (as `k8or sandbox` registers it) and with its two webhook
// configurations deleted, alternating in one run (with, without, with, without, ...), so the ratio
// compares figures taken under the same load.
//
//   npm run build && node bench/admission.bench.ts [--objects 2000] [--concurrency 32] [--rounds 2]
//
// The local stack (startLocalStack, what `k8or sandbox` runs: API server, webhook, engine, S3 fake,
// DynamoDB Local) runs in a child process; this process drives it over keep-alive HTTPS connections,
// so the client's own TLS set-up is not what is measured. The Buckets carry `k8or.io/paused`, so
// the engine only records them as paused (the same small work in every phase) and no cloud call
// competes with the writes; between phases the bench waits until the engine has seen every Bucket.
// Prints a Markdown table for docs/benchmarks.md.
import { fork } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Annotations, GROUP, VERSION } from '@k8or/api';
import { parse } from 'yaml';

type FromServer = { type: 'ready'; kubeconfigPath: string } | { type: 'failed'; message: string } | { type: 'cpu'; micros: number; mainThreadMicros: number; connections: number };

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
      const { user, system } = process.cpuUsage();
      // With a CPU profile, phase boundaries on the profile's clock, to split it by phase.
      if (process.execArgv.includes('--cpu-prof')) console.error(`phase boundary at ${process.hrtime.bigint() / 1000n} us`);
      const thread = process.threadCpuUsage();
      send({ type: 'cpu', micros: user + system, mainThreadMicros: thread.user + thread.system, connections });
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
      'no-engine': { type: 'boolean', default: false },
      // Run the webhook server in a worker thread (startWebhookWorker) rather than on the API server's thread.
      'webhook-in-worker': { type: 'boolean', default: false },
      // Write a V8 CPU profile of the server process into this directory (read it with bench/cpuprofile-top.ts).
      'server-cpu-prof': { type: 'string' },
    },
  });
  const objects = Number(values.objects);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);

  const dir = mkdtempSync(join(tmpdir(), 'k8or-admission-bench-'));
  const child = fork(new URL(import.meta.url).pathname, ['--serve', dir, ...(values['no-engine'] ? ['--no-engine'] : []), ...(values['webhook-in-worker'] ? ['--webhook-in-worker'] : [])], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: values['server-cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['server-cpu-prof']] : [],
  });
  const ready = await new Promise<FromServer>((resolve, reject) => {
    child.once('message', (m) => resolve(m as FromServer));
    child.once('exit', (code) => reject(new Error(`k8or sandbox process exited with ${code}`)));
  });
  if (ready.type !== 'ready') throw new Error(`k8or sandbox did not start: ${ready.type === 'failed' ? ready.message : ''}`);

  /** CPU time (user + system) the k8or sandbox process has used so far, in ms, and the connections it opened. */
  const serverCpu = (): Promise<{ ms: number; mainMs: number; connections: number }> =>
    new Promise((resolve) => {
      child.once('message', (m: FromServer) =>
        resolve(m.type === 'cpu' ? { ms: m.micros / 1000, mainMs: m.mainThreadMicros / 1000, connections: m.connections } : { ms: Number.NaN, mainMs: Number.NaN, connections: Number.NaN }),
      );
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
  const rows: { phase: string; rate: number; seconds: number; p50: number; p99: number; cpuPerCreate: number; mainCpuPerCreate: number; connections: number }[] = [];
  const totals = { with: { n: 0, s: 0, cpu: 0, main: 0 }, without: { n: 0, s: 0, cpu: 0, main: 0 } };

  // Warm-up through the webhook: its caches, JIT, connection pools.
  await ok('POST', '/api/v1/namespaces', { metadata: { name: 'warmup' } });
  await createBuckets('warmup', 200);
  await engineCaughtUp('warmup', 200);

  let webhooksOn = true;
  for (let round = 1; round <= rounds; round++) {
    for (const phase of ['with', 'without'] as const) {
      const wanted = phase === 'with';
      if (webhooksOn !== wanted) {
        await setWebhooks(wanted);
        webhooksOn = wanted;
      }
      const namespace = `${phase}-${round}`;
      await ok('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
      const before = await serverCpu();
      const { seconds, latencies } = await createBuckets(namespace, objects);
      const rate = objects / seconds;
      await engineCaughtUp(namespace, objects);
      // Includes the engine's pass over the new (paused) Buckets, the same in every phase.
      const after = await serverCpu();
      const cpu = after.ms - before.ms;
      rows.push({ phase: `${wanted ? 'with the webhook' : 'without the webhook'} (round ${round})`, rate, seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuPerCreate: cpu / objects, mainCpuPerCreate: (after.mainMs - before.mainMs) / objects, connections: after.connections - before.connections });
      totals[phase].n += objects;
      totals[phase].s += seconds;
      totals[phase].cpu += cpu;
      totals[phase].main += after.mainMs - before.mainMs;
    }
  }

  const withRate = totals.with.n / totals.with.s;
  const withoutRate = totals.without.n / totals.without.s;
  const cpuWith = totals.with.cpu / totals.with.n;
  const cpuWithout = totals.without.cpu / totals.without.n;
  console.log(`| Phase (${objects} Bucket creates, ${concurrency} in flight) | Creates/s | Time | Latency p50 | p99 | Server CPU per create | of it, API server thread | Connections opened |`);
  console.log('|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    console.log(`| ${row.phase} | ${Math.round(row.rate).toLocaleString('en')} | ${row.seconds.toFixed(1)} s | ${row.p50.toFixed(1)} ms | ${row.p99.toFixed(1)} ms | ${row.cpuPerCreate.toFixed(2)} ms | ${row.mainCpuPerCreate.toFixed(2)} ms | ${row.connections} |`);
  }
  console.log(
    `| **all rounds, with / without** | **${Math.round(withRate).toLocaleString('en')} / ${Math.round(withoutRate).toLocaleString('en')}** (ratio **${(withRate / withoutRate).toFixed(2)}**) | | | | ${cpuWith.toFixed(2)} / ${cpuWithout.toFixed(2)} ms (ratio ${(cpuWith / cpuWithout).toFixed(2)}) | ${(totals.with.main / totals.with.n).toFixed(2)} / ${(totals.without.main / totals.without.n).toFixed(2)} ms | |`,
  );

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
