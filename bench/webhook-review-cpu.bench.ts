// CPU per AdmissionReview on each side of an HTTP/2 connection: the real @k8or/webhook server on a
// worker thread (as `k8or sandbox` runs it; static context, the AWS provider, a cluster id so
// /mutate defaults the external name) and a bare HTTP/2 client on the main thread sending Bucket
// CREATE reviews shaped as the sandbox's API server sends them, alternately to /mutate and /validate.
//
//   npm run build && node bench/webhook-review-cpu.bench.ts [--concurrency 1] [--reviews 4000] [--warmup 3000] [--rounds 3]
//
// `--concurrency 1` is one review in flight, each handled in event-loop turns of its own (what a
// webhook sees at a modest rate); 32 lets the server batch. The webhook thread's CPU comes from
// /proc (Linux, 10 ms ticks), the client's from process.threadCpuUsage(). Machine load inflates
// both: compare variants in alternation, in one session, and report the load with them.
import http2 from 'node:http2';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

// At most 15 characters: Linux keeps no more of a thread's name.
const THREAD_NAME = 'webhook-bench';

if (!isMainThread) {
  const { awsProvider } = await import('@k8or/provider-aws');
  const { startWebhookServer, staticContext } = await import('@k8or/webhook');
  const { pino } = await import('pino');
  const context = staticContext({
    providers: [awsProvider],
    clusterId: 'bench-cluster',
    providerConfigs: [{ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'us-east-1' } } as never],
  });
  const server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context, logger: pino({ level: 'warn' }), processMetrics: false });
  parentPort!.postMessage({ url: server.url, caPem: server.caPem });
} else {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '1' },
      reviews: { type: 'string', default: '4000' },
      warmup: { type: 'string', default: '3000' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const concurrency = Number(values.concurrency);
  const reviews = Number(values.reviews);

  const worker = new Worker(new URL(import.meta.url), { name: THREAD_NAME });
  const { url, caPem } = await new Promise<{ url: string; caPem: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  /** The webhook thread's user + system CPU time so far, in µs. */
  const webhookThreadMicros = (): number => {
    for (const tid of readdirSync('/proc/self/task')) {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== THREAD_NAME) continue;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    }
    throw new Error('the webhook thread is gone');
  };

  const session = http2.connect(url, { ca: caPem });
  const now = new Date().toISOString();
  // A Bucket as the sandbox's API server sends it to /validate: defaulted, with its managedFields.
  const object = {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: {
      name: 'b-1',
      namespace: 'bench',
      labels: { team: 'media', env: 'bench' },
      annotations: { 'k8or.io/paused': 'true' },
      uid: randomUUID(),
      creationTimestamp: now,
      generation: 1,
      managedFields: [
        {
          manager: 'node',
          operation: 'Update',
          apiVersion: 'k8or.io/v1alpha1',
          time: now,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:team': {}, 'f:env': {} }, 'f:annotations': { '.': {}, 'f:k8or.io/paused': {} } }, 'f:spec': { '.': {}, 'f:versioning': {}, 'f:lifecycle': {}, 'f:labels': { '.': {}, 'f:team': {} } } },
        },
      ],
    },
    spec: { versioning: true, publicAccess: 'Blocked', lifecycle: [{ id: 'expire-old-versions', noncurrentVersionExpirationDays: 30 }], labels: { team: 'media' }, providerConfigRef: { name: 'default' }, name: 'b-1-abc', deletionPolicy: 'Delete' },
  };
  const kind = { group: 'k8or.io', version: 'v1alpha1', kind: 'Bucket' };
  const resource = { group: 'k8or.io', version: 'v1alpha1', resource: 'buckets' };
  const review = (): string =>
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: randomUUID(), kind, resource, requestKind: kind, requestResource: resource, name: 'b-1', namespace: 'bench', operation: 'CREATE', userInfo: { username: 'k8or-sandbox-admin', groups: ['system:masters', 'system:authenticated'] }, object, oldObject: null, dryRun: false, options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' } },
    });
  const post = (path: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const body = review();
      const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) });
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', () => undefined);
      stream.on('end', () => (status === 200 ? resolve() : reject(new Error(`${path} answered ${status}`))));
      stream.on('error', reject);
      stream.end(body);
    });
  const run = async (count: number): Promise<void> => {
    let sent = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < count) await post(sent++ % 2 === 0 ? '/mutate' : '/validate');
      }),
    );
  };

  await run(Number(values.warmup));
  console.log(`| Round (${reviews} reviews, ${concurrency} in flight) | Webhook thread CPU per review | Client thread CPU per review | Load (1 min) |`);
  console.log('|---|---:|---:|---:|');
  for (let round = 1; round <= Number(values.rounds); round++) {
    const webhookBefore = webhookThreadMicros();
    const clientBefore = process.threadCpuUsage();
    await run(reviews);
    const client = process.threadCpuUsage(clientBefore);
    console.log(`| ${round} | ${((webhookThreadMicros() - webhookBefore) / reviews).toFixed(1)} µs | ${((client.user + client.system) / reviews).toFixed(1)} µs | ${loadavg()[0]!.toFixed(1)} |`);
  }
  console.log(`${new Date().toISOString()}, Node ${process.version}`);
  session.close();
  await worker.terminate();
}
