// The embedded API server in a child process of a benchmark, so that its CPU is its own process's
// `cpuUsage`: `startSandboxProcess()` in the benchmark; this file is also the child's entry point.
import { fork } from 'node:child_process';

type FromServer = { kubeconfig: string } | { cpuMicros: number };

export interface SandboxProcess {
  kubeconfig: string;
  /** Starts a CPU measurement; under `--cpu-prof` the child prints `label` on the profile clock. */
  mark(label?: string): void;
  /** The server's CPU (user + system, µs) since the last mark. */
  cpuMicros(): Promise<number>;
  stop(): void;
}

export async function startSandboxProcess(execArgv: string[] = []): Promise<SandboxProcess> {
  const child = fork(new URL(import.meta.url).pathname, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  const next = (): Promise<FromServer> => new Promise((resolve) => child.once('message', (m) => resolve(m as FromServer)));
  const { kubeconfig } = (await next()) as { kubeconfig: string };
  return {
    kubeconfig,
    mark: (label = '') => child.send(`mark ${label}`),
    cpuMicros: async () => {
      const reply = next();
      child.send('cpu');
      return ((await reply) as { cpuMicros: number }).cpuMicros;
    },
    stop: () => child.disconnect(),
  };
}

async function serve(): Promise<void> {
  const { startSandbox } = await import('@k8or/apiserver');
  const sandbox = await startSandbox({ logLevel: 'error' });
  let from = process.cpuUsage();
  process.on('message', (message: string) => {
    if (process.execArgv.includes('--cpu-prof')) console.error(`server: ${message} at ${process.hrtime.bigint() / 1000n} us (profile clock)`);
    if (message.startsWith('mark')) from = process.cpuUsage();
    else {
      const cpu = process.cpuUsage(from);
      process.send?.({ cpuMicros: cpu.user + cpu.system } satisfies FromServer);
    }
  });
  process.on('disconnect', () => void sandbox.stop().finally(() => process.exit(0)));
  process.send?.({ kubeconfig: sandbox.kubeconfig } satisfies FromServer);
}

if (process.argv[2] === '--serve') await serve();
