// Run a real binary (helm, kubectl) to completion, with its own HOME and caches.
import { spawn } from 'node:child_process';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Tool {
  binary: string;
  /** Environment of every run (KUBECONFIG, HOME, HELM_* dirs). */
  env: Record<string, string>;
  /** Working directory (default: this process's). */
  cwd?: string;
}

export function run(tool: Tool, args: string[], input?: string, timeoutMs = 120_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool.binary, args, { env: { ...process.env, ...tool.env }, stdio: ['pipe', 'pipe', 'pipe'], ...(tool.cwd ? { cwd: tool.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

/** Run and fail with the command's output unless it exits 0. */
export async function runOk(tool: Tool, args: string[], input?: string, timeoutMs?: number): Promise<string> {
  const result = await run(tool, args, input, timeoutMs);
  if (result.code !== 0) throw new Error(`${tool.binary.split('/').pop()} ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result.stdout;
}
