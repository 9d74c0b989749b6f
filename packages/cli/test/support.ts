import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { installCrds } from '@k8or/core';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** The k8or command as a user runs it: the package's bin entry. */
export const k8orBin = fileURLToPath(new URL('../bin/k8or.js', import.meta.url));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `k8or ...args` to its end (with `input` on stdin) and resolves its exit code and output. */
export function k8or(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [k8orBin, ...args], { env: options.env ?? process.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A long-running `k8or ...args` (operator, webhook, sandbox) with its output collected as it comes. */
export interface Running {
  child: ChildProcess;
  output(): string;
  /** Resolves the exit code once it has ended. */
  exited: Promise<number>;
}

export function startK8or(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Running {
  const child = spawn(process.execPath, [k8orBin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  return { child, output: () => output, exited };
}

/** The embedded API server with k8or's CRDs and the `k8or-system` namespace, as plan and import find a cluster; its kubeconfig written to `kubeconfigPath`. */
export async function startCommandCluster(kubeconfigPath: string): Promise<{ sandbox: Sandbox; kubeConfig: KubeConfig }> {
  const sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn' });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sandbox.kubeconfig);
  await installCrds(kubeConfig);
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'k8or-system' } } });
  return { sandbox, kubeConfig };
}
