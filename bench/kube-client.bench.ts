// CPU per request of core's Kubernetes client (`KubeRest`, what the engine's reads and writes go
// through), on the client's side and the API server's, over keep-alive TLS.
//
//   npm run build && node bench/kube-client.bench.ts [--objects 3000] [--concurrency 50] [--rounds 4]
//
// The API server (`startSandbox`) runs in a child process, so each side's CPU is its own process's
// `cpuUsage`. The client creates `--objects` Buckets, then each round merge-patches every one and
// GETs every one, `--concurrency` requests in flight. CPU per request is machine-independent
// enough to compare two builds run one after the other (copy this file and support/sandbox-process.ts into
// the other tree's bench/ and run it there), which a shared, loaded machine's wall-clock rates are not.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startSandboxProcess } from '../test/support/sandbox-process.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string', default: '3000' },
      concurrency: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '4' },
    },
  });
  const objects = Number(values.objects);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  const server = await startSandboxProcess();
  const { kubeconfig } = server;

  const { KubeConfig } = await import('@kubernetes/client-node');
  const { KubeRest, installCrds, k8orPath } = await import('@k8or/core');
  const { API_VERSION } = await import('@k8or/api');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfig);
  await installCrds(kubeConfig);
  const rest = new KubeRest(kubeConfig, { userAgent: 'k8or-engine/kube-client-bench' });

  const rows: string[] = [];
  const phase = async (label: string, request: (i: number) => Promise<unknown>): Promise<void> => {
    server.mark();
    const clientFrom = process.cpuUsage();
    const started = performance.now();
    let i = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (i < objects) await request(i++);
    }));
    const seconds = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientFrom);
    const cpuMicros = await server.cpuMicros();
    rows.push(`| ${label} | ${Math.round(objects / seconds)} | ${((client.user + client.system) / objects).toFixed(0)} | ${(cpuMicros / objects).toFixed(0)} |`);
  };

  const name = (i: number): string => `b${i}`;
  await phase('create', (i) =>
    rest.create(k8orPath('Bucket', 'default'), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: name(i) }, spec: { location: 'mem-1', name: `bench-${name(i)}` } }),
  );
  for (let round = 1; round <= rounds; round++) {
    await phase(`patch, round ${round}`, (i) => rest.patch(k8orPath('Bucket', 'default', name(i)), { metadata: { annotations: { round: String(round) } } }));
    await phase(`get, round ${round}`, (i) => rest.get(k8orPath('Bucket', 'default', name(i))));
  }
  rest.close();
  await server.stop();

  console.log(`${objects} Buckets, ${concurrency} requests in flight, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  console.log('| phase | requests/s | client CPU per request (µs) | API server CPU per request (µs) |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) console.log(row);
}

await main();
