// The operator and its webhook as a process outside the API server, configured as the chart's
// Deployment configures its container (its env), authenticated with the chart's ServiceAccount token.
import { createServer } from 'node:net';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { spawnOwnedChild, type OwnedChild } from '@k8or/local-clouds';

/** A port free on 127.0.0.1 right now. */
/**
 * A port for a process to bind later. Chosen below the kernel's ephemeral range (32768 and up on
 * Linux), where a port the OS hands out for `listen(0)` can be taken again by the source port of
 * any outgoing connection before the operator binds it (seen as EADDRINUSE in a restarted
 * replica); no outgoing connection takes a port down here, and nothing else in the suites binds one.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port) || !(await canBind(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The `k8or` CLI that has the `operator` command: K8OR_E2E_K8OR_BIN, else this tree's @k8or/cli when
 * @k8or/operator is installed beside it. Undefined says why the suite cannot run the operator.
 */
export function k8orBinary(): { path: string } | { missing: string } {
  const given = process.env['K8OR_E2E_K8OR_BIN'];
  if (given) return existsSync(given) ? { path: given } : { missing: `K8OR_E2E_K8OR_BIN=${given} does not exist` };
  const require = createRequire(import.meta.url);
  try {
    require.resolve('@k8or/operator/package.json');
  } catch {
    return { missing: '@k8or/operator (the manager process behind `k8or operator`) is not in this tree yet' };
  }
  const bin = join(dirname(require.resolve('@k8or/cli/package.json')), 'dist', 'bin.js');
  return existsSync(bin) ? { path: bin } : { missing: `${bin} is not built (npm run build)` };
}

export interface OperatorProcess {
  child: OwnedChild;
  output(): string;
  probes: string;
  /** The Prometheus endpoint's base URL (`${metrics}/metrics`), for diagnostics. */
  metrics: string;
  stop(): Promise<void>;
}

export interface OperatorProcessOptions {
  bin: string;
  kubeconfigPath: string;
  /** The chart's container env (K8OR_*), as the Deployment in the cluster has it. */
  env: Record<string, string>;
  /** Where the webhook listens, on 127.0.0.1; a process that serves none needs none. */
  webhookPort?: number;
  /** Serve the admission webhook too (the chart's `operator --webhook`); default true. */
  webhook?: boolean;
  /** The CLI's arguments, as a container's `args` (the image's entrypoint is the CLI); they replace `webhook`. */
  args?: readonly string[];
  /** Flags for `node` itself, before the CLI (the image's `--max-semi-space-size=2 --optimize-for-size --max-opt=2`). */
  nodeFlags?: readonly string[];
  /** How long `stop()` waits after SIGTERM before SIGKILL (spawnOwnedChild's default: 5 s). */
  stopGraceMs?: number;
}

export async function startOperatorProcess(options: OperatorProcessOptions): Promise<OperatorProcess> {
  const probePort = await freePort();
  const metricsPort = await freePort();
  const args = options.args ?? ['operator', ...(options.webhook === false ? [] : ['--webhook'])];
  const child = spawnOwnedChild(process.execPath, [...(options.nodeFlags ?? []), options.bin, ...args], {
    env: {
      ...process.env,
      ...options.env,
      KUBECONFIG: options.kubeconfigPath,
      // the Pod's ports, on loopback
      ...(options.webhookPort !== undefined ? { K8OR_WEBHOOK_BIND_ADDRESS: `127.0.0.1:${options.webhookPort}` } : {}),
      K8OR_HEALTH_PROBE_BIND_ADDRESS: `127.0.0.1:${probePort}`,
      K8OR_METRICS_BIND_ADDRESS: `127.0.0.1:${metricsPort}`,
    },
    stdout: 'pipe',
    stderr: 'pipe',
    ...(options.stopGraceMs !== undefined ? { stopGraceMs: options.stopGraceMs } : {}),
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  await child.pid;
  return { child, output: () => output, probes: `http://127.0.0.1:${probePort}`, metrics: `http://127.0.0.1:${metricsPort}`, stop: () => child.stop() };
}

/** Whether a replica's /readyz answers 200. The body is read, so a connection reset while it comes is one failed probe rather than an error nobody awaits. */
export async function probeReady(probes: string): Promise<boolean> {
  try {
    const response = await fetch(`${probes}/readyz`);
    await response.text();
    return response.ok;
  } catch {
    return false;
  }
}
