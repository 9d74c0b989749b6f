// Admission webhook benchmark: AdmissionReviews per second and p50/p99 latency
// with autocannon against the real @k8or/webhook server (validate and mutate of
// a Bucket, with the real AWS provider's rules), and in the same run against a
// bare fastify HTTPS endpoint that returns a fixed allowed review for the same
// body: the ratio is what admission itself costs on top of HTTPS + JSON.
//
//   npm run build && node bench/webhook.bench.ts [--duration 4] [--connections 1,10,100] [--rounds 7]
//
// `--connections` takes a list: each count is measured in turn (warm-up, then its interleaved
// rounds), one table row per endpoint and count.
//
// The servers run in a child process (one core), autocannon in this one. The
// scenarios are interleaved in short rounds; the table gives medians, and the
// ratio is the median of the per-round ratios, so a change in machine load
// hits the webhook and the bare endpoint alike. Beside the rates, the server
// process's CPU time per review (both servers share its one thread, and the
// scenarios run one at a time), which moves much less with the machine's load.
// Prints a Markdown table for docs/benchmarks.md.
import { fork, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { awsProvider } from '@k8or/provider-aws';
import { admit, generateCertificates, staticContext, startWebhookServer, type AdmissionReview } from '@k8or/webhook';
import type { ProviderConfig } from '@k8or/api';

interface Endpoints {
  webhook: string;
  bare: string;
  caPem: string;
}

const benchContext = () =>
  staticContext({
    providers: [awsProvider],
    // A cluster id, so /mutate defaults the external name too (as the sandbox's webhook does).
    clusterId: 'bench-cluster',
    providerConfigs: [{ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'us-east-1' } } as ProviderConfig],
    namespaces: [{ metadata: { name: 'bench', annotations: { 'k8or.io/deletion-policy': 'Retain' } } }],
  });

if (process.argv.includes('--serve')) {
  // Child: the real webhook and the bare endpoint, both HTTPS with the same kind of certificate.
  const context = benchContext();
  const webhook = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context, logLevel: 'warn', processMetrics: false });
  const certs = generateCertificates({ hosts: ['localhost', '127.0.0.1'] });
  const bare = Fastify({ https: { key: certs.keyPem, cert: certs.certPem }, bodyLimit: 3 * 1024 * 1024 });
  const fixed = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'fixed', allowed: true } };
  bare.post('/validate', async () => fixed);
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const address = bare.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.send?.({ webhook: webhook.url, webhookCa: webhook.caPem, bare: `https://127.0.0.1:${port}`, bareCa: certs.caPem });
  process.on('disconnect', () => void Promise.all([webhook.close(), bare.close()]).then(() => process.exit(0)));
  // CPU time this process has used so far (both servers share its one thread), for CPU per review.
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'cpu', micros: user + system });
  });
} else {
  const { values } = parseArgs({ options: { duration: { type: 'string', default: '4' }, connections: { type: 'string', default: '1,10,100' }, rounds: { type: 'string', default: '7' } } });
  const duration = Number(values.duration);
  const connectionCounts = values.connections.split(',').map((c) => Number(c.trim()));
  if (connectionCounts.some((c) => !Number.isInteger(c) || c < 1)) throw new Error(`--connections must be a comma-separated list of positive integers, got "${values.connections}"`);
  const rounds = Number(values.rounds);

  const child: ChildProcess = fork(new URL(import.meta.url).pathname, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<Endpoints & { webhookCa: string; bareCa: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Endpoints & { webhookCa: string; bareCa: string }));
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
  });

  const bucket = {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: { name: 'photos', namespace: 'bench', uid: randomUUID(), labels: { team: 'media' } },
    spec: { location: 'us-east-1', versioning: true, lifecycle: [{ id: 'old', expirationDays: 365, transitions: [{ days: 30, tier: 'InfrequentAccess' }] }] },
  };
  const review = (object: unknown): string =>
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: randomUUID(),
        kind: { group: 'k8or.io', version: 'v1alpha1', kind: 'Bucket' },
        resource: { group: 'k8or.io', version: 'v1alpha1', resource: 'buckets' },
        name: 'photos',
        namespace: 'bench',
        operation: 'CREATE',
        userInfo: { username: 'bench' },
        object,
        oldObject: null,
        dryRun: false,
      },
    });
  const defaulted = { ...bucket, spec: { ...bucket.spec, providerConfigRef: { name: 'default' }, name: 'bench-photos-0a1b2c3d', deletionPolicy: 'Retain' } };

  const scenarios = [
    { name: 'bare fastify HTTPS, fixed allowed review', url: `${ready.bare}/validate`, ca: ready.bareCa, body: review(defaulted) },
    { name: 'k8or webhook /validate (Bucket CREATE, allowed, with warnings)', url: `${ready.webhook}/validate`, ca: ready.webhookCa, body: review(defaulted) },
    { name: 'k8or webhook /mutate (Bucket CREATE, 3 defaults patched)', url: `${ready.webhook}/mutate`, ca: ready.webhookCa, body: review(bucket) },
  ];
  // Check once that each scenario gets the answer it claims (allowed with warnings, patched), not an error.
  const post = (url: string, ca: string, body: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${url}: ${res.statusCode} ${text}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  const validated = JSON.parse(await post(scenarios[1]!.url, ready.webhookCa, scenarios[1]!.body)) as { response: { allowed: boolean; warnings?: string[] } };
  const mutated = JSON.parse(await post(scenarios[2]!.url, ready.webhookCa, scenarios[2]!.body)) as { response: { allowed: boolean; patch?: string } };
  if (!validated.response.allowed || !validated.response.warnings?.length) throw new Error(`validate scenario is not "allowed with warnings": ${JSON.stringify(validated)}`);
  const patched = mutated.response.patch ? (JSON.parse(Buffer.from(mutated.response.patch, 'base64').toString()) as unknown[]).length : 0;
  if (patched === 0) throw new Error(`mutate scenario patched nothing: ${JSON.stringify(mutated)}`);
  scenarios[2]!.name = `k8or webhook /mutate (Bucket CREATE, ${patched} defaults patched)`;

  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  /** The server process's CPU time so far, in µs. */
  const serverCpu = (): Promise<number> =>
    new Promise((resolve) => {
      child.once('message', (m: { micros: number }) => resolve(m.micros));
      child.send({ type: 'cpu' });
    });
  const rows: { connections: number; name: string; rps: number; p50: number; p99: number; errors: number; ratio: number; cpuMicros: number; cpuRatio: number }[] = [];
  for (const connections of connectionCounts) {
    const samples = scenarios.map(() => [] as { rps: number; p50: number; p99: number; errors: number; cpuMicros: number }[]);
    for (const s of scenarios) {
      // A short warm-up, so JIT and TLS session setup are not measured.
      await autocannon({ url: s.url, method: 'POST', body: s.body, headers: { 'content-type': 'application/json' }, connections, duration: 2, tlsOptions: { ca: s.ca } });
    }
    for (let round = 0; round < rounds; round++) {
      for (const [i, s] of scenarios.entries()) {
        const cpuBefore = await serverCpu();
        const result = await autocannon({ url: s.url, method: 'POST', body: s.body, headers: { 'content-type': 'application/json' }, connections, duration, tlsOptions: { ca: s.ca } });
        const cpuMicros = ((await serverCpu()) - cpuBefore) / Math.max(1, result.requests.total);
        samples[i]!.push({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx, cpuMicros });
      }
    }
    rows.push(
      ...scenarios.map((s, i) => ({
        connections,
        name: s.name,
        rps: median(samples[i]!.map((x) => x.rps)),
        p50: median(samples[i]!.map((x) => x.p50)),
        p99: median(samples[i]!.map((x) => x.p99)),
        errors: samples[i]!.reduce((sum, x) => sum + x.errors, 0),
        ratio: median(samples[i]!.map((x, round) => x.rps / samples[0]![round]!.rps)),
        cpuMicros: median(samples[i]!.map((x) => x.cpuMicros)),
        cpuRatio: median(samples[i]!.map((x, round) => samples[0]![round]!.cpuMicros / x.cpuMicros)),
      })),
    );
  }
  child.disconnect();

  // What admission itself costs, without HTTP: admit() in this process on the same bodies.
  const context = benchContext();
  const perReview = (webhook: 'validate' | 'mutate', body: string): number => {
    const review = JSON.parse(body) as AdmissionReview;
    for (let i = 0; i < 2000; i++) admit(review, context, webhook);
    const n = 20_000;
    // Thread CPU, not wall time: on a shared machine the wall clock also counts time spent descheduled.
    const started = process.threadCpuUsage();
    for (let i = 0; i < n; i++) admit(review, context, webhook);
    const used = process.threadCpuUsage(started);
    return (used.user + used.system) / n;
  };
  const validateMicros = perReview('validate', scenarios[1]!.body);
  const mutateMicros = perReview('mutate', scenarios[2]!.body);

  console.log(`\nnode ${process.version}, ${rounds} interleaved rounds of ${duration} s per scenario and connection count (medians), servers in one child process\n`);
  console.log('| connections | endpoint | reviews/s | p50 ms | p99 ms | errors | vs bare (median of rounds) | server CPU per review | bare CPU / this CPU |');
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.connections} | ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.ratio.toFixed(2)} | ${Math.round(r.cpuMicros)} µs | ${r.cpuRatio.toFixed(2)} |`);
  console.log(`\nadmit() alone, in-process: validate ${validateMicros.toFixed(1)} µs/review, mutate ${mutateMicros.toFixed(1)} µs/review of thread CPU`);
}
