// What the webhook's worker thread costs a process in RSS, as `k8or sandbox` runs it: the embedded
// API server on the main thread (with a client-node KubeConfig, as the sandbox's parent holds one),
// and startWebhookWorker with every provider package's entry, its caches synced. Each round is a
// fresh child process: RSS (and the main thread's heap, after a GC) before the worker starts and
// once it is ready and has settled.
//
//   npm run build && node bench/webhook-worker-memory.bench.ts [--rounds 5] [--settle-ms 3000]
//
// Prints one line per round and the medians, in MiB.
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

interface Round {
  before: number;
  after: number;
}

const MIB = 1024 * 1024;

if (process.argv.includes('--child')) {
  const settleMs = Number(process.argv[process.argv.indexOf('--child') + 1]);
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { installCrds } = await import('@k8or/core');
  const { waitFor } = await import('@k8or/core/testing');
  const { startSandbox } = await import('@k8or/apiserver');
  const { startWebhookWorker } = await import('@k8or/webhook');
  const dir = await mkdtemp(join(tmpdir(), 'k8or-worker-memory-'));
  const sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error' });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sandbox.kubeconfig);
  await installCrds(kubeConfig);
  const settled = async (): Promise<number> => {
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    globalThis.gc?.();
    return process.memoryUsage().rss;
  };
  const before = await settled();
  const webhook = await startWebhookWorker({
    port: 0,
    tls: { selfSigned: {} },
    kubeConfig,
    providers: ['@k8or/provider-aws', '@k8or/provider-gcp', '@k8or/provider-azure'].map((name) => ({ url: import.meta.resolve(name) })),
    clusterId: 'bench',
    logLevel: 'error',
    processMetrics: false,
  });
  await waitFor('the worker caches synced', () => webhook.isReady());
  const after = await settled();
  await webhook.close();
  await sandbox.stop();
  await rm(dir, { recursive: true, force: true });
  process.send?.({ before, after } satisfies Round);
  process.exit(0);
}

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, 'settle-ms': { type: 'string', default: '3000' } } });
const rounds: Round[] = [];
for (let i = 0; i < Number(values.rounds); i++) {
  const child = fork(import.meta.filename, ['--child', values['settle-ms']], { execArgv: ['--expose-gc'] });
  const round = await new Promise<Round>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Round));
    child.once('exit', (code) => reject(new Error(`round ${i + 1}: the child exited with ${code}`)));
  });
  rounds.push(round);
  console.log(`round ${i + 1}: RSS before the worker ${(round.before / MIB).toFixed(1)} MiB, with it ${(round.after / MIB).toFixed(1)} MiB, the worker +${((round.after - round.before) / MIB).toFixed(1)} MiB`);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(
  `median: before ${(median(rounds.map((r) => r.before)) / MIB).toFixed(1)} MiB, with the worker ${(median(rounds.map((r) => r.after)) / MIB).toFixed(1)} MiB, the worker +${(median(rounds.map((r) => r.after - r.before)) / MIB).toFixed(1)} MiB`,
);
