// The operator as a process of its own, for the benchmarks that measure it alone
// (bench/operator-memory.bench.ts; plain JavaScript, so Node does not load its TypeScript
// stripper, about 18 MiB of RSS, into the process measured): `startManager` of @k8or/operator, as `k8or operator`
// runs it, with the settings given as flags after the script name. Started with
// `--expose-gc` and an IPC channel; it answers:
// `--components=controllers,webhook` runs the webhook too (the image's `operator --webhook`).
//   { type: 'stats', memory }   -> CPU time, reconciles so far and, with `memory`, memory after a
//                                  full GC (a GC per poll would slow the operator down)
//   { type: 'snapshot', path }  -> writes a V8 heap snapshot there
// and sends { type: 'ready', startedAt } once the manager is ready (its caches synced).
import { readFileSync } from 'node:fs';
import { writeHeapSnapshot, getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { resolveConfig, startManager } from '@k8or/operator';

const { components = 'controllers', 'client-node-kubeconfig': clientNode, ...flags } = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [key = '', ...value] = arg.replace(/^--/, '').split('=');
    return [key, value.join('=')];
  }),
);
const config = resolveConfig(flags, {}, /** @type {('controllers' | 'webhook')[]} */ (components.split(',')));
// --client-node-kubeconfig: hand the manager a client-node KubeConfig, as it built one for the webhook before
// the webhook took core's KubeAccess (the "before" of `operator --webhook`).
const manager = await startManager(config, clientNode === undefined ? {} : { kubeConfig: await clientNodeKubeConfig(flags.kubeconfig) });
/** @param {import('../operator-memory.bench.ts').FromOperator} message */
const send = (message) => void process.send?.(message);

/** Sums a counter or gauge of the manager's /metrics for the bucket controller or queue. */
/** @param {string} name @param {string} label */
async function metric(name, label) {
  const text = await (await fetch(`${manager.metricsUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(label)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

process.on('message', (/** @type {import('../operator-memory.bench.ts').ToOperator} */ message) => {
  void (async () => {
    if (message.type === 'snapshot') {
      globalThis.gc?.();
      send({ type: 'snapshot', path: writeHeapSnapshot(message.path) });
      return;
    }
    if (message.memory) globalThis.gc?.();
    const memory = process.memoryUsage();
    const cpu = process.cpuUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
    send({
      type: 'stats',
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      spaces,
      mallocedMemory: getHeapStatistics().malloced_memory,
      resident: message.memory ? residentByMapping() : { nodeBinary: 0, otherFiles: 0, anonymous: 0 },
      cpuMicros: cpu.user + cpu.system,
      reconciles: await metric('controller_runtime_reconcile_total', 'controller="bucket"'),
      queueDepth: await metric('workqueue_depth', 'name="bucket"'),
      activeWorkers: await metric('controller_runtime_active_workers', 'controller="bucket"'),
    });
  })();
});
process.on('disconnect', () => void manager.stop().then(() => process.exit(0)));
send({ type: 'ready', readyAt: Date.now() });

/** Sums the Rss lines of /proc/self/smaps by what each mapping holds. */
function residentByMapping() {
  const totals = { nodeBinary: 0, otherFiles: 0, anonymous: 0 };
  /** @type {keyof typeof totals} */
  let bucket = 'anonymous';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const path = mapping[1] ?? '';
      bucket = path === process.execPath ? 'nodeBinary' : path.startsWith('/') ? 'otherFiles' : 'anonymous';
    } else if (line.startsWith('Rss:')) {
      totals[bucket] += Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
    }
  }
  return totals;
}

/** @param {string | undefined} file */
async function clientNodeKubeConfig(file) {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (file) kubeConfig.loadFromFile(file);
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}
