// Cloud rate limits benchmark: the engine creates 1,000 resources (S3 Buckets and DynamoDB Tables)
// through the real AWS provider against the S3 fake and DynamoDB Local, under a ProviderConfig whose
// spec.rateLimits is lower than the rate the engine reaches on its own, and the call rate of each
// service is measured where the calls arrive: the S3 fake's request log, and a counting proxy in front
// of DynamoDB Local. Never at the limiter. A first phase with limits far above anything reachable
// measures that unpaced rate, in the same process, as the baseline.
//
//   npm run build && node bench/cloud-rate-limit.bench.ts [--buckets 500] [--tables 500]
//     [--s3-rate 15] [--s3-burst 10] [--dynamodb-rate 10] [--dynamodb-burst 5] [--workers 10] [--baseline 60]
//
// Prints Markdown for docs/benchmarks.md.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { API_VERSION } from '@k8or/api';
import { CoreMetrics, Engine, corePath, k8orPath } from '@k8or/core';
import { callRateReport, type CallRateReport } from '@k8or/core/testing';
import { awsProvider, destroyDynamoDbClients, destroyS3Clients } from '@k8or/provider-aws';
import { startSandbox } from '@k8or/apiserver';
import { startDynamoDbLocal, startS3Fake } from '@k8or/local-clouds';
import { benchCluster, createMany, readyCount, recordingRateLimits, until, type ManagedKind } from './support/rate-limit-run.ts';

const { values } = parseArgs({
  options: {
    buckets: { type: 'string', default: '500' },
    tables: { type: 'string', default: '500' },
    's3-rate': { type: 'string', default: '15' },
    's3-burst': { type: 'string', default: '10' },
    'dynamodb-rate': { type: 'string', default: '10' },
    'dynamodb-burst': { type: 'string', default: '5' },
    workers: { type: 'string', default: '10' },
    baseline: { type: 'string', default: '60' },
  },
});
const BUCKETS = Number(values.buckets);
const TABLES = Number(values.tables);
const LIMITS = {
  's3-buckets': { requestsPerSecond: Number(values['s3-rate']), burst: Number(values['s3-burst']) },
  'dynamodb-control-plane': { requestsPerSecond: Number(values['dynamodb-rate']), burst: Number(values['dynamodb-burst']) },
};
const WORKERS = Number(values.workers);
const BASELINE = Number(values.baseline);
const NAMESPACE = 'bench';

/** A plain HTTP proxy in front of DynamoDB Local that records when each request arrived. */
async function countingProxy(target: string): Promise<{ endpoint: string; arrivals: { at: number; operation: string }[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const arrivals: { at: number; operation: string }[] = [];
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    arrivals.push({ at: performance.now(), operation: String(incoming.headers['x-amz-target'] ?? '').split('.').pop() ?? '' });
    const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    });
    forward.on('error', () => outgoing.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    arrivals,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const sandbox = await startSandbox({ logLevel: 'error' });
const [s3, dynamodbLocal] = await Promise.all([startS3Fake(), startDynamoDbLocal()]);
const dynamodb = await countingProxy(dynamodbLocal.endpoint);
const { kubeConfig, user } = await benchCluster(sandbox.kubeconfig, [NAMESPACE, 'k8or-system']);
const base64 = (text: string) => Buffer.from(text).toString('base64');
await user.create(corePath('secrets', 'k8or-system'), {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'aws' },
  data: { accessKeyId: base64('AKIAK8ORBENCH0000001'), secretAccessKey: base64('bench-secret') },
});
async function providerConfig(name: string, rateLimits: Record<string, { requestsPerSecond: number; burst: number }>): Promise<void> {
  await user.create(k8orPath('ProviderConfig', undefined), {
    apiVersion: API_VERSION,
    kind: 'ProviderConfig',
    metadata: { name },
    spec: {
      provider: 'aws',
      region: 'us-east-1',
      endpoints: { bucket: s3.endpoint, table: dynamodb.endpoint },
      credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws' } },
      rateLimits,
    },
  });
}
const UNPACED = { requestsPerSecond: 1_000_000, burst: 1_000_000 };
await providerConfig('unpaced', { 's3-buckets': UNPACED, 'dynamodb-control-plane': UNPACED });
await providerConfig('paced', LIMITS);

const metrics = new CoreMetrics();
// When the limiter let each call go, beside the backends' arrival times: the difference is time in transit
// (signing, sockets, an event loop shared with the API server and the fakes on a loaded machine).
const { cloudRateLimits, released } = recordingRateLimits(metrics, (labels) => labels.providerConfig === 'paced');
const engine = new Engine({ kubeConfig, providers: new Map([['aws', awsProvider]]), clusterId: 'bench', workers: WORKERS, metrics, cloudRateLimits, operatorNamespace: 'k8or-system' });
await engine.start();

const readyOf = (kind: ManagedKind, prefix: string) => readyCount(user, kind, NAMESPACE, prefix);
function create(kind: ManagedKind, prefix: string, count: number, providerConfigName: string): Promise<void> {
  return createMany(user, kind, NAMESPACE, prefix, count, (name) => ({ name: `k8or-${name}`, providerConfigRef: { name: providerConfigName }, ...(kind === 'Table' ? { partitionKey: { name: 'id', type: 'string' } } : {}) }));
}
/** Creates the Buckets and Tables at once and waits until all are Ready; the requests that reached each backend for them. */
async function phase(prefix: string, buckets: number, tables: number, providerConfigName: string) {
  const since = performance.now();
  const started = Date.now();
  await Promise.all([create('Bucket', `${prefix}-b-`, buckets, providerConfigName), create('Table', `${prefix}-t-`, tables, providerConfigName)]);
  await until(`${prefix}: ${buckets} Buckets and ${tables} Tables Ready`, async () => (await readyOf('Bucket', `${prefix}-b-`)) >= buckets && (await readyOf('Table', `${prefix}-t-`)) >= tables);
  const seconds = (Date.now() - started) / 1000;
  const s3Arrivals = s3.requests.filter((r) => r.receivedAt >= since && r.bucket?.startsWith(`k8or-${prefix}-`)).map((r) => r.receivedAt);
  const dynamodbArrivals = dynamodb.arrivals.filter((a) => a.at >= since).map((a) => a.at);
  return { seconds, s3Arrivals, dynamodbArrivals };
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const loadBefore = load();
// Baseline: what the engine does when nothing holds it back (limits far above reach).
const baseline = await phase('base', BASELINE, Math.round((BASELINE * TABLES) / Math.max(1, BUCKETS)), 'unpaced');
const baselineS3 = callRateReport(baseline.s3Arrivals, UNPACED);
const baselineDynamoDb = callRateReport(baseline.dynamodbArrivals, UNPACED);
// The run: 1,000 resources under the low limits.
const paced = await phase('run', BUCKETS, TABLES, 'paced');
const pacedS3 = callRateReport(paced.s3Arrivals, LIMITS['s3-buckets']);
const pacedDynamoDb = callRateReport(paced.dynamodbArrivals, LIMITS['dynamodb-control-plane']);
const loadAfter = load();
const limiter = (service: string) => engine.cloudRateLimits.state('paced', service);

const f = (n: number, digits = 1) => n.toFixed(digits);
const averagePerSecond = (r: CallRateReport) => (r.spanSeconds > 0 ? (r.calls - 1) / r.spanSeconds : 0);
console.log(`\nMeasured ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${WORKERS} workers, load average (1/5/15 min) ${loadBefore} before, ${loadAfter} after.\n`);
console.log(`Baseline (ProviderConfig \`unpaced\`, limits of 1,000,000/s): ${BASELINE} Buckets and ${Math.round((BASELINE * TABLES) / Math.max(1, BUCKETS))} Tables Ready in ${f(baseline.seconds)} s; S3 ${baselineS3.calls} requests in ${f(baselineS3.spanSeconds)} s, ${f(averagePerSecond(baselineS3))}/s on average, at most ${baselineS3.maxInOneSecond} in one second; DynamoDB ${baselineDynamoDb.calls} requests in ${f(baselineDynamoDb.spanSeconds)} s, ${f(averagePerSecond(baselineDynamoDb))}/s on average, at most ${baselineDynamoDb.maxInOneSecond} in one second.\n`);
console.log(`Run (ProviderConfig \`paced\`): ${BUCKETS} Buckets and ${TABLES} Tables (${BUCKETS + TABLES} resources) Ready in ${f(paced.seconds)} s.\n`);
console.log('| service | configured rate / burst | requests at the backend | over | sustained rate (after the burst) | most in any 1 s | worst window at the backend: requests vs burst + rate × T | worst window as the limiter let them go | calls that waited for a token | mean wait |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const [service, figures] of [['s3-buckets', pacedS3], ['dynamodb-control-plane', pacedDynamoDb]] as const) {
  const limit = LIMITS[service];
  const state = limiter(service);
  const meanWait = state && state.delayed > 0 ? state.waitedSeconds / state.delayed : 0;
  const atLimiter = callRateReport(released.get(service) ?? [], limit).worstWindow;
  console.log(
    `| ${service} | ${limit.requestsPerSecond}/s, ${limit.burst} | ${figures.calls} | ${f(figures.spanSeconds)} s | ${f(figures.sustainedPerSecond, 2)}/s (${f((100 * figures.sustainedPerSecond) / limit.requestsPerSecond, 0)} % of the limit) | ${figures.maxInOneSecond} (limit allows ${limit.burst + limit.requestsPerSecond}) | ${figures.worstWindow.calls} in ${f(figures.worstWindow.seconds, 3)} s vs ${f(figures.worstWindow.allowed)} (${f((figures.worstWindow.calls - figures.worstWindow.allowed) / limit.requestsPerSecond, 2)} s of arrival lag) | ${atLimiter.calls} in ${f(atLimiter.seconds, 3)} s vs ${f(atLimiter.allowed)} | ${state?.delayed ?? 0} of ${state?.calls ?? 0} | ${f(meanWait, 2)} s |`,
  );
}
console.log(`\nUnpaced over paced peak (most in one second): S3 ${f(baselineS3.maxInOneSecond / Math.max(1, pacedS3.maxInOneSecond), 2)}x, DynamoDB ${f(baselineDynamoDb.maxInOneSecond / Math.max(1, pacedDynamoDb.maxInOneSecond), 2)}x.`);

await engine.stop();
user.close();
destroyS3Clients();
destroyDynamoDbClients();
await Promise.all([sandbox.stop(), s3.stop(), dynamodb.close(), dynamodbLocal.stop()]);
