// The embedded API server in a child process, as a real API server is a process of its own: its CPU
// is that process's `cpuUsage`, and the clients, fakes and proxies of the parent do not share its
// thread. `startSandboxProcess()` in the parent; this file is also the child's entry point.
import { fork } from 'node:child_process';
import type { RequestLogEntry } from '@k8or/apiserver';

export interface SandboxProcessOptions {
  /** Node flags of the child (`--cpu-prof`, ...). */
  execArgv?: string[];
  /** Where the child writes its admin kubeconfig, as `startSandbox` does. */
  kubeconfigPath?: string;
  /** Keep the request log, for `requestCount` and `operatorWritesSince`. */
  recordRequests?: boolean;
}

export interface SandboxProcess {
  kubeconfig: string;
  /** The child's process id. */
  pid: number;
  /** Starts a CPU measurement; under `--cpu-prof` the child prints `label` on the profile clock. */
  mark(label?: string): void;
  /** The server's CPU (user + system, µs) since the last mark. */
  cpuMicros(): Promise<number>;
  /** Requests logged so far (with `recordRequests`). */
  requestCount(): Promise<number>;
  /** `operatorObjectWrites` of the requests logged from index `from` on (with `recordRequests`). */
  operatorWritesSince(from: number): Promise<OperatorObjectWrites>;
  /** Stops the server and waits for the child to exit. */
  stop(): Promise<void>;
}

export interface OperatorObjectWrites {
  metadata: number;
  status: number;
}

const API_WRITES = new Set(['create', 'update', 'patch', 'delete']);

/** The operator's writes to Buckets and Tables in `entries` (the API server's request log): labels and metadata apart from status. */
export function operatorObjectWrites(entries: readonly RequestLogEntry[]): OperatorObjectWrites {
  let metadata = 0;
  let status = 0;
  for (const entry of entries) {
    if ((entry.resource !== 'buckets' && entry.resource !== 'tables') || !API_WRITES.has(entry.verb) || !(entry.userAgent ?? '').startsWith('k8or-')) continue;
    if (entry.subresource === 'status') status++;
    else metadata++;
  }
  return { metadata, status };
}

type Question = { ask: 'cpu' | 'count' } | { ask: 'writes'; from: number } | { ask: 'mark'; label: string };
type Ask = Question & { id: number };
type Answer = { kubeconfig: string } | { id: number; value: unknown };

export async function startSandboxProcess(options: SandboxProcessOptions = {}): Promise<SandboxProcess> {
  const args = ['--serve', ...(options.kubeconfigPath ? ['--kubeconfig', options.kubeconfigPath] : []), ...(options.recordRequests ? ['--record-requests'] : [])];
  const child = fork(new URL(import.meta.url).pathname, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: options.execArgv ?? [] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waiting = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  const { kubeconfig } = await new Promise<{ kubeconfig: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the API server process exited (${String(code)}) before it served`)));
    child.on('message', (message: Answer) => {
      if ('kubeconfig' in message) resolve(message);
      else waiting.get(message.id)?.(message.value);
    });
  });
  const ask = <T>(question: Question): Promise<T> =>
    new Promise<T>((resolve) => {
      const id = ++nextId;
      waiting.set(id, (value) => {
        waiting.delete(id);
        resolve(value as T);
      });
      child.send({ ...question, id });
    });
  return {
    kubeconfig,
    pid: child.pid!,
    mark: (label = '') => void ask({ ask: 'mark', label }),
    cpuMicros: () => ask<number>({ ask: 'cpu' }),
    requestCount: () => ask<number>({ ask: 'count' }),
    operatorWritesSince: (from) => ask<OperatorObjectWrites>({ ask: 'writes', from }),
    stop: async () => {
      if (child.connected) child.disconnect();
      await exited;
    },
  };
}

async function serve(argv: readonly string[]): Promise<void> {
  const { startSandbox } = await import('@k8or/apiserver');
  const at = argv.indexOf('--kubeconfig');
  const recordRequests = argv.includes('--record-requests');
  const sandbox = await startSandbox({ logLevel: 'error', recordRequests, ...(at >= 0 ? { kubeconfigPath: argv[at + 1]! } : {}) });
  let from = process.cpuUsage();
  process.on('message', (message: Ask) => {
    const answer = (value: unknown): void => void process.send?.({ id: message.id, value } satisfies Answer);
    switch (message.ask) {
      case 'mark':
        if (process.execArgv.includes('--cpu-prof')) console.error(`server: mark ${message.label} at ${process.hrtime.bigint() / 1000n} us (profile clock)`);
        from = process.cpuUsage();
        return answer(undefined);
      case 'cpu': {
        const cpu = process.cpuUsage(from);
        return answer(cpu.user + cpu.system);
      }
      case 'count':
        return answer(sandbox.requestLog.length);
      case 'writes':
        return answer(operatorObjectWrites(sandbox.requestLog.slice(message.from)));
    }
  });
  process.on('disconnect', () => void sandbox.stop().finally(() => process.exit(0)));
  process.send?.({ kubeconfig: sandbox.kubeconfig } satisfies Answer);
}

if (process.argv[2] === '--serve') await serve(process.argv.slice(3));
