// Cloud rate limits benchmark, GCP and Azure: the engine creates 1,000 resources per cloud (GCS
// Buckets and Bigtable Tables; Blob containers and Azure tables) through the real providers and SDKs
// against the GCS fake, the Bigtable emulator and Azurite, under ProviderConfigs whose
// spec.rateLimits are lower than the rate the engine reaches on its own. Each service's calls are
// counted where they arrive: a recording HTTP proxy in front of the GCS fake and each Azurite service,
// and an HTTP/2 proxy that counts the gRPC streams reaching the Bigtable emulator. The limiter's own
// release times are recorded beside them. A first phase under limits far above anything reachable
// measures the unpaced rate, in the same process, as the baseline.
//
//   npm run build && node bench/cloud-rate-limit-gcp-azure.bench.ts [--cloud gcp|azure|both] [--per-kind 500] [--workers 40] [--baseline 40]
//     [--limits '{"gcs-bucket-metadata":{"requestsPerSecond":10,"burst":10}}']
//
// Prints Markdown for docs/benchmarks.md.
import { generateKeyPairSync } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import { CoreMetrics, Engine, corePath, k8orPath, type ProviderPlugin } from '@k8or/core';
import { callRateReport } from '@k8or/core/testing';
import { bigtableServiceFor, destroyBigtableClients, destroyStorageClients, gcpProvider } from '@k8or/provider-gcp';
import { azureProvider, clearAzureClients } from '@k8or/provider-azure';
import { startSandbox } from '@k8or/apiserver';
import { startAzurite, startBigtableEmulator, startFaultProxy, startGcsFake, startGrpcCountingProxy } from '@k8or/local-clouds';
import { benchCluster, createMany, readyCount, recordingRateLimits, until } from './support/rate-limit-run.ts';

interface Limit {
  requestsPerSecond: number;
  burst: number;
}

const { values } = parseArgs({
  options: {
    cloud: { type: 'string', default: 'both' },
    'per-kind': { type: 'string', default: '500' },
    workers: { type: 'string', default: '40' },
    baseline: { type: 'string', default: '40' },
    limits: { type: 'string', default: '{}' },
  },
});
const PER_KIND = Number(values['per-kind']);
const WORKERS = Number(values.workers);
const BASELINE = Number(values.baseline);
/**
 * Below what the engine reaches unpaced on these backends (the baseline shows it), so the limits are
 * what hold it back, and low enough that a process that also serves the API server and the fakes
 * on a loaded machine keeps up with them; a burst of two seconds' worth rides out a late timer.
 */
const LIMITS: Record<string, Limit> = {
  'gcs-bucket-create-delete': { requestsPerSecond: 2, burst: 4 },
  'gcs-bucket-metadata': { requestsPerSecond: 6, burst: 12 },
  'bigtable-table-reads': { requestsPerSecond: 6, burst: 12 },
  'bigtable-table-writes': { requestsPerSecond: 2, burst: 4 },
  'blob-containers': { requestsPerSecond: 10, burst: 20 },
  'table-service': { requestsPerSecond: 8, burst: 16 },
  ...(JSON.parse(values.limits) as Record<string, Limit>),
};
const GCP_SERVICES = ['gcs-bucket-create-delete', 'gcs-bucket-metadata', 'bigtable-table-reads', 'bigtable-table-writes'];
const AZURE_SERVICES = ['blob-containers', 'table-service'];
const CLOUDS = values.cloud === 'both' ? ['gcp', 'azure'] : [values.cloud];
const SERVICES = [...(CLOUDS.includes('gcp') ? GCP_SERVICES : []), ...(CLOUDS.includes('azure') ? AZURE_SERVICES : [])];
const NAMESPACE = 'bench';
const PROJECT = 'k8or-bench';

// --- backends, each behind a recording proxy -------------------------------------------------------

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const operatorEmail = `k8or-bench@${PROJECT}.iam.gserviceaccount.com`;
const serviceAccountKey = { type: 'service_account', project_id: PROJECT, client_email: operatorEmail, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };

const sandbox = await startSandbox({ logLevel: 'error' });
const [gcs, bigtable, azurite] = await Promise.all([
  startGcsFake({ serviceAccounts: { [operatorEmail]: { project: PROJECT, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() } } }),
  startBigtableEmulator(),
  startAzurite(),
]);
const gcsProxy = await startFaultProxy({ target: gcs.endpoint, dialect: 'gcs' });
const blobProxy = await startFaultProxy({ target: azurite.blobEndpoint, dialect: 'azure-blob' });
const tableProxy = await startFaultProxy({ target: azurite.tableEndpoint, dialect: 'azure-table' });
const bigtableProxy = await startGrpcCountingProxy(bigtable.host);

/** Where each service's calls arrived (milliseconds; one clock per backend), from `since` on. */
function backendArrivals(service: string, since: { wall: number; mono: number }): number[] {
  const gcsOperation = (operation: string): string => (operation === 'POST /b' || operation === 'DELETE /b/NAME' ? 'gcs-bucket-create-delete' : 'gcs-bucket-metadata');
  if (service.startsWith('gcs-')) return gcsProxy.calls.filter((c) => c.at >= since.wall && gcsOperation(c.operation) === service).map((c) => c.at);
  if (service.startsWith('bigtable-')) return bigtableProxy.arrivals.filter((a) => a.at >= since.mono && bigtableServiceFor(a.method) === service).map((a) => a.at);
  const proxy = service === 'blob-containers' ? blobProxy : tableProxy;
  return proxy.calls.filter((c) => c.at >= since.wall).map((c) => c.at);
}

// --- the cluster: CRDs, Secrets, ProviderConfigs ---------------------------------------------------

const { kubeConfig, user } = await benchCluster(sandbox.kubeconfig, [NAMESPACE, 'k8or-system']);
const secret = (name: string, stringData: Record<string, string>) =>
  user.create(corePath('secrets', 'k8or-system'), { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData });
await secret('gcp', { 'credentials.json': JSON.stringify(serviceAccountKey) });
await secret('azure', { accountKey: azurite.accountKey });

const UNPACED: Limit = { requestsPerSecond: 1_000_000, burst: 1_000_000 };
const limitsFor = (services: string[], limit?: Limit) => Object.fromEntries(services.map((service) => [service, limit ?? LIMITS[service]!]));
const gcpSpec = (rateLimits: Record<string, Limit>): ProviderConfig['spec'] => ({
  provider: 'gcp',
  project: PROJECT,
  bigtableInstance: 'k8or-bench',
  endpoints: { bucket: gcsProxy.endpoint, table: `http://${bigtableProxy.host}` },
  credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'gcp' } },
  rateLimits,
});
const azureSpec = (rateLimits: Record<string, Limit>): ProviderConfig['spec'] => ({
  provider: 'azure',
  storageAccount: azurite.accountName,
  endpoints: { bucket: blobProxy.endpoint, table: tableProxy.endpoint },
  credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'azure' } },
  rateLimits,
});
for (const [name, spec] of [
  ['gcp-unpaced', gcpSpec(limitsFor(GCP_SERVICES, UNPACED))],
  ['gcp-paced', gcpSpec(limitsFor(GCP_SERVICES))],
  ['azure-unpaced', azureSpec(limitsFor(AZURE_SERVICES, UNPACED))],
  ['azure-paced', azureSpec(limitsFor(AZURE_SERVICES))],
] as const) {
  await user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name }, spec });
}

// --- the engine, with the limiter's release times recorded ------------------------------------------

const metrics = new CoreMetrics();
const { cloudRateLimits, released } = recordingRateLimits(metrics, (labels) => labels.providerConfig.endsWith('-paced'));
const providers = new Map<string, ProviderPlugin>([
  ['gcp', gcpProvider],
  ['azure', azureProvider],
]);
const engine = new Engine({ kubeConfig, providers, clusterId: 'bench', workers: WORKERS, metrics, cloudRateLimits, operatorNamespace: 'k8or-system' });
await engine.start();

const KINDS = (
  [
    { kind: 'Bucket', cloud: 'gcp', tag: 'gb' },
    { kind: 'Table', cloud: 'gcp', tag: 'gt' },
    { kind: 'Bucket', cloud: 'azure', tag: 'ab' },
    { kind: 'Table', cloud: 'azure', tag: 'at' },
  ] as const
).filter(({ cloud }) => CLOUDS.includes(cloud));
const TABLE_KEY = { partitionKey: { name: 'id', type: 'string' } };
const AZURE_TABLE_KEY = { partitionKey: { name: 'PartitionKey', type: 'string' }, sortKey: { name: 'RowKey', type: 'string' } };

/** Creates `count` of each kind per cloud at once and waits until every one is Ready; when each cloud's resources were Ready. */
async function phase(prefix: string, count: number, paced: boolean) {
  const since = { wall: Date.now(), mono: performance.now() };
  await Promise.all(
    KINDS.map(({ kind, cloud, tag }) =>
      createMany(user, kind, NAMESPACE, `${prefix}-${tag}-`, count, () => ({
        providerConfigRef: { name: `${cloud}-${paced ? 'paced' : 'unpaced'}` },
        ...(kind === 'Bucket' ? {} : cloud === 'azure' ? AZURE_TABLE_KEY : TABLE_KEY),
      })),
    ),
  );
  const readySeconds: Record<string, number> = {};
  await Promise.all(
    KINDS.map(async ({ kind, cloud, tag }) => {
      await until(`${prefix}: ${count} ${cloud} ${kind}s Ready`, async () => (await readyCount(user, kind, NAMESPACE, `${prefix}-${tag}-`)) >= count, 3_600_000);
      readySeconds[`${cloud} ${kind}`] = (Date.now() - since.wall) / 1000;
    }),
  );
  return { since, readySeconds };
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const f = (n: number, digits = 1) => n.toFixed(digits);
const loadBefore = load();
const startedAt = new Date().toISOString();
const baseline = await phase('base', BASELINE, false);
const baselineReports = new Map(SERVICES.map((service) => [service, callRateReport(backendArrivals(service, baseline.since), UNPACED)]));
const run = await phase('run', PER_KIND, true);
const loadAfter = load();

console.log(`\nMeasured ${startedAt}, Node ${process.version}, ${WORKERS} workers per controller, load average (1/5/15 min) ${loadBefore} before, ${loadAfter} after.\n`);
console.log(`Baseline (ProviderConfigs ${CLOUDS.map((c) => `\`${c}-unpaced\``).join(' and ')}, limits of 1,000,000/s): ${BASELINE} of each kind per cloud, Ready after ${Object.entries(baseline.readySeconds).map(([what, s]) => `${what}s ${f(s)} s`).join(', ')}.\n`);
console.log('| service | requests at the backend | over | mean rate | most in any 1 s |');
console.log('|---|---|---|---|---|');
for (const [service, report] of baselineReports) {
  console.log(`| \`${service}\` | ${report.calls} | ${f(report.spanSeconds)} s | ${f(report.spanSeconds > 0 ? (report.calls - 1) / report.spanSeconds : 0)}/s | ${report.maxInOneSecond} |`);
}
console.log(`\nRun (ProviderConfigs ${CLOUDS.map((c) => `\`${c}-paced\``).join(' and ')}): ${PER_KIND} of each kind per cloud (${KINDS.length * PER_KIND} resources), Ready after ${Object.entries(run.readySeconds).map(([what, s]) => `${what}s ${f(s)} s`).join(', ')}.\n`);
console.log('| service | default (rate, burst) | set in spec.rateLimits | requests at the backend | over | sustained rate after the burst (share of the limit) | most in any 1 s (allowed: burst + rate; share) | worst window at the backend | worst window as the limiter let the calls go | calls that waited | mean wait | unpaced peak in 1 s |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const service of SERVICES) {
  const limit = LIMITS[service]!;
  const plugin = service in (gcpProvider.rateLimits ?? {}) ? gcpProvider : azureProvider;
  const declared = plugin.rateLimits?.[service];
  const config = GCP_SERVICES.includes(service) ? 'gcp-paced' : 'azure-paced';
  const report = callRateReport(backendArrivals(service, run.since), limit);
  const atLimiter = callRateReport(released.get(service) ?? [], limit).worstWindow;
  const state = engine.cloudRateLimits.state(config, service);
  const meanWait = state && state.delayed > 0 ? state.waitedSeconds / state.delayed : 0;
  const allowedInOneSecond = limit.burst + limit.requestsPerSecond;
  console.log(
    `| \`${service}\` | ${declared?.requestsPerSecond}/s, ${declared?.burst} | ${limit.requestsPerSecond}/s, ${limit.burst} | ${report.calls} | ${f(report.spanSeconds)} s | ${f(report.sustainedPerSecond, 2)}/s (${f((100 * report.sustainedPerSecond) / limit.requestsPerSecond, 0)} %) | ${report.maxInOneSecond} (${allowedInOneSecond}; ${f((100 * report.maxInOneSecond) / allowedInOneSecond, 0)} %) | ${report.worstWindow.calls} in ${f(report.worstWindow.seconds, 3)} s, ${f(report.worstWindow.allowed)} allowed | ${atLimiter.calls} in ${f(atLimiter.seconds, 3)} s, ${f(atLimiter.allowed)} allowed | ${state?.delayed ?? 0} of ${state?.calls ?? 0} | ${f(meanWait, 2)} s | ${baselineReports.get(service)?.maxInOneSecond ?? 0} |`,
  );
}

await engine.stop();
user.close();
await destroyStorageClients();
await destroyBigtableClients();
clearAzureClients();
await Promise.all([sandbox.stop(), gcsProxy.stop(), blobProxy.stop(), tableProxy.stop(), bigtableProxy.close()]);
await Promise.all([gcs.stop(), bigtable.stop(), azurite.stop()]);
