// Sandbox API server benchmark, driven by @kubernetes/client-node as the operator drives it:
//  1. writes/s: create N Buckets (default 10,000) through CustomObjectsApi with C requests in flight
//     (client-node opens a new TLS connection per request), and the same through a keep-alive
//     node:https agent, which shows what the server itself sustains;
//  2. watch fan-out: W watchers (client-node Watch) on one namespace while E Buckets are created
//     there (over the keep-alive agent); events delivered per second = W x E / time until every
//     watcher has seen every event;
//  3. memory of the server process (RSS and V8 heap after a full GC) empty and with every object.
//
//   npm run build && node bench/sandbox.bench.ts [--objects 10000] [--concurrency 32] [--watchers 50] [--events 2000]
//
// The sandbox runs in a child process (so its memory is its own), the clients in this one.
// Prints a Markdown table for docs/benchmarks.md.
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:https';
import { parseArgs } from 'node:util';
import { allCrds, GROUP, VERSION } from '@k8or/api';
import { startSandbox } from '@k8or/apiserver';

interface Memory {
  rss: number;
  heapUsed: number;
}
type ToServer = { type: 'memory' };
type FromServer = { type: 'ready'; kubeconfig: string; url: string; token: string; caPem: string } | ({ type: 'memory' } & Memory);

if (process.argv.includes('--serve')) {
  const sandbox = await startSandbox({ logLevel: 'warn' });
  const send = (message: FromServer): void => void process.send?.(message);
  process.on('message', (message: ToServer) => {
    if (message.type !== 'memory') return;
    globalThis.gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    send({ type: 'memory', rss, heapUsed });
  });
  process.on('disconnect', () => void sandbox.stop().then(() => process.exit(0)));
  send({ type: 'ready', kubeconfig: sandbox.kubeconfig, url: sandbox.url, token: sandbox.token, caPem: sandbox.caPem });
} else {
  // Loaded here only, so the server process's memory holds the sandbox and nothing of the client.
  const { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } = await import('@kubernetes/client-node');
  const { installCrds } = await import('@k8or/core');
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '10000' },
      concurrency: { type: 'string', default: '32' },
      watchers: { type: 'string', default: '50' },
      events: { type: 'string', default: '2000' },
    },
  });
  const objects = Number(values.objects);
  const concurrency = Number(values.concurrency);
  const watchers = Number(values.watchers);
  const events = Number(values.events);

  const child: ChildProcess = fork(new URL(import.meta.url).pathname, ['--serve'], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const nextMessage = (): Promise<FromServer> =>
    new Promise((resolve, reject) => {
      child.once('message', (m) => resolve(m as FromServer));
      child.once('exit', (code) => reject(new Error(`sandbox process exited with ${code}`)));
    });
  const ready = await nextMessage();
  if (ready.type !== 'ready') throw new Error('unexpected message from the sandbox process');
  const memory = async (): Promise<Memory> => {
    const reply = nextMessage();
    child.send({ type: 'memory' } satisfies ToServer);
    const m = await reply;
    if (m.type !== 'memory') throw new Error('unexpected message');
    return m;
  };

  const kc = new KubeConfig();
  kc.loadFromString(ready.kubeconfig);
  const customObjects = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);

  const bucketCrd = allCrds().find((c) => c.spec.names.kind === 'Bucket')!;
  // Plain JSON: client-node's typed serializer would drop `default` and `x-kubernetes-validations`.
  await installCrds(kc, [bucketCrd]);
  for (const name of ['bench', 'fanout', 'keepalive']) await core.createNamespace({ body: { metadata: { name } } });
  for (;;) {
    try {
      await customObjects.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'bench', plural: 'buckets' });
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const empty = await memory();
  const progress = (message: string): void => void (process.env.BENCH_DEBUG && console.error(message));
  progress('crd served');

  const bucket = (namespace: string, name: string): object => ({
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Bucket',
    metadata: { name, namespace, labels: { team: 'media', env: 'bench' } },
    spec: {
      location: 'eu-west-1',
      versioning: true,
      lifecycle: [{ id: 'old', expirationDays: 365, transitions: [{ days: 30, tier: 'InfrequentAccess' }] }],
      labels: { team: 'media' },
    },
  });

  /** Create `count` Buckets with `inFlight` requests at a time; returns per-request latencies (ms). */
  async function createBuckets(namespace: string, prefix: string, count: number, inFlight: number): Promise<number[]> {
    const latencies: number[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const started = performance.now();
        await customObjects.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'buckets', body: bucket(namespace, `${prefix}-${i}`) });
        latencies.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return latencies;
  }
  const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

  // 1. writes per second
  await createBuckets('bench', 'warmup', 200, concurrency);
  const writeStart = performance.now();
  const latencies = (await createBuckets('bench', 'bucket', objects, concurrency)).sort((a, b) => a - b);
  const writeSeconds = (performance.now() - writeStart) / 1000;
  const full = await memory();
  progress(`created ${objects}`);

  // 1b. writes per second over kept-alive connections
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, ca: ready.caPem });
  const post = (path: string, body: object): Promise<void> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = request(new URL(path, ready.url), {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${ready.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`POST ${path}: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(payload);
    });
  let nextKeepAlive = 0;
  const keepAliveStart = performance.now();
  const keepAliveLatencies: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (nextKeepAlive < objects) {
        const i = nextKeepAlive++;
        const started = performance.now();
        await post(`/apis/${GROUP}/${VERSION}/namespaces/keepalive/buckets`, bucket('keepalive', `kept-${i}`));
        keepAliveLatencies.push(performance.now() - started);
      }
    }),
  );
  const keepAliveSeconds = (performance.now() - keepAliveStart) / 1000;
  keepAliveLatencies.sort((a, b) => a - b);
  progress('keep-alive creates done');
  const doubled = await memory();

  // 2. watch fan-out
  const watch = new Watch(kc);
  const seen = new Array<number>(watchers).fill(0);
  const controllers: AbortController[] = [];
  let allSeen: () => void = () => {};
  const everyEvent = new Promise<void>((resolve) => (allSeen = resolve));
  let complete = 0;
  for (let w = 0; w < watchers; w++) {
    controllers.push(
      await watch.watch(
        `/apis/${GROUP}/${VERSION}/namespaces/fanout/buckets`,
        {},
        (phase) => {
          if (phase !== 'ADDED') return;
          seen[w] = (seen[w] ?? 0) + 1;
          if (seen[w] === events && ++complete === watchers) allSeen();
        },
        () => {},
      ),
    );
  }
  progress('watchers started');
  const fanoutStart = performance.now();
  // Created over the kept-alive connections, so the measure is the server's delivery, not client-node's handshakes.
  let nextWatched = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (nextWatched < events) {
        const i = nextWatched++;
        await post(`/apis/${GROUP}/${VERSION}/namespaces/fanout/buckets`, bucket('fanout', `watched-${i}`));
      }
    }),
  );
  progress('created watched');
  await everyEvent;
  const fanoutSeconds = (performance.now() - fanoutStart) / 1000;
  for (const c of controllers) c.abort();
  agent.destroy();

  const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
  const perObject = ((full.heapUsed - empty.heapUsed) / objects / 1024).toFixed(2);
  console.log(`| Measure | Result |`);
  console.log(`|---|---|`);
  console.log(`| Creates (${objects.toLocaleString('en')} Buckets, ${concurrency} in flight) | **${Math.round(objects / writeSeconds).toLocaleString('en')} writes/s** (${writeSeconds.toFixed(1)} s; latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms) |`);
  console.log(`| Creates (${objects.toLocaleString('en')} more, keep-alive node:https, ${concurrency} connections) | **${Math.round(objects / keepAliveSeconds).toLocaleString('en')} writes/s** (${keepAliveSeconds.toFixed(1)} s; latency p50 ${percentile(keepAliveLatencies, 50).toFixed(1)} ms, p99 ${percentile(keepAliveLatencies, 99).toFixed(1)} ms) |`);
  console.log(`| Watch fan-out (${watchers} watchers x ${events.toLocaleString('en')} creates) | **${Math.round((watchers * events) / fanoutSeconds).toLocaleString('en')} events/s delivered** (${fanoutSeconds.toFixed(1)} s until every watcher saw every event) |`);
  console.log(`| Server memory, empty (CRD installed) | RSS ${mib(empty.rss)} MiB, heap ${mib(empty.heapUsed)} MiB |`);
  console.log(`| Server memory, ${(objects + 200).toLocaleString('en')} Buckets stored | RSS ${mib(full.rss)} MiB, heap ${mib(full.heapUsed)} MiB (~${perObject} KiB heap per Bucket) |`);
  const perKeptObject = ((doubled.heapUsed - full.heapUsed) / objects / 1024).toFixed(2);
  console.log(`| Server memory, ${(2 * objects + 200).toLocaleString('en')} Buckets (after the keep-alive creates) | RSS ${mib(doubled.rss)} MiB, heap ${mib(doubled.heapUsed)} MiB (+${perKeptObject} KiB heap per Bucket) |`);
  child.disconnect();
}
