import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface OwnedChildOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** `pipe` to read the backend's output from `stdout` / `stderr`; `ignore` (the default) drops it. */
  stdout?: 'pipe' | 'ignore';
  stderr?: 'pipe' | 'ignore';
  /** How long the backend has after SIGTERM before it gets SIGKILL (default 5 s). */
  stopGraceMs?: number;
}

export interface OwnedChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface OwnedChild {
  /** The backend's process id once it runs; rejects with the reason when it cannot start (e.g. ENOENT). */
  readonly pid: Promise<number>;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Settles when the backend has ended. */
  readonly exited: Promise<OwnedChildExit>;
  /** Whether the backend has ended. */
  hasExited(): boolean;
  /** SIGTERM to the backend, SIGKILL after `stopGraceMs`; resolves once it has ended. Safe to repeat. */
  stop(): Promise<void>;
}

/** An error starting the backend, with the system's code (`ENOENT`, `EACCES`, ...). */
export class OwnedChildSpawnError extends Error {
  constructor(
    readonly command: string,
    message: string,
    readonly code: string | undefined,
  ) {
    super(`cannot run ${command}: ${message}`);
    this.name = 'OwnedChildSpawnError';
  }
}

const GUARDIAN = fileURLToPath(new URL('./guardian.js', import.meta.url));

/**
 * Starts `command` (an emulator, a JVM) so that it ends when this process ends, however this process
 * ends, SIGKILL included. A small Node guardian sits between the two: it holds a pipe from this
 * process, and when the kernel closes that pipe (this process is gone) it ends the backend's whole
 * process group. Linux gives no other notice of a parent's death to a Node program (no prctl).
 * The guardian and the backend each run in a process group of their own, outside this process's: a
 * Ctrl-C in the terminal reaches this process first, which then stops the backend in order, and a
 * SIGKILL of this process's whole group leaves the guardian alive to end the backend.
 */
export function spawnOwnedChild(command: string, args: readonly string[], options: OwnedChildOptions = {}): OwnedChild {
  const guardian = spawn(process.execPath, [GUARDIAN, String(options.stopGraceMs ?? 5_000), command, ...args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['pipe', options.stdout ?? 'ignore', options.stderr ?? 'ignore', 'pipe'],
    // A session of its own: a SIGKILL sent to this process's whole group (CI runners, `timeout -s KILL`,
    // terminal multiplexers) must not take the guardian along, or nothing would be left to end the backend.
    detached: true,
  });
  const lifeline = guardian.stdin;
  // The guardian reads nothing; a stop() that closes the pipe after it has gone must not throw EPIPE.
  lifeline?.on('error', () => undefined);

  const exited = new Promise<OwnedChildExit>((resolve) => guardian.once('exit', (code, signal) => resolve({ code, signal })));

  const pid = new Promise<number>((resolve, reject) => {
    const report = guardian.stdio[3] as Readable | null;
    let buffered = '';
    report?.setEncoding('utf8');
    report?.on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = JSON.parse(buffered.slice(0, newline)) as { pid?: number; error?: string; code?: string };
        buffered = buffered.slice(newline + 1);
        if (typeof line.pid === 'number') resolve(line.pid);
        else if (typeof line.error === 'string') reject(new OwnedChildSpawnError(command, line.error, line.code));
      }
    });
    guardian.once('error', (error) => reject(new OwnedChildSpawnError(process.execPath, error.message, (error as NodeJS.ErrnoException).code)));
    // 'close' comes after the report has been read, so a pid that was reported is never missed.
    guardian.once('close', () => reject(new OwnedChildSpawnError(command, 'it ended before it started', undefined)));
  });
  // A caller that only ever awaits `exited` must not see an unhandled rejection.
  pid.catch(() => undefined);

  return {
    pid,
    stdout: guardian.stdout,
    stderr: guardian.stderr,
    exited,
    hasExited: () => guardian.exitCode !== null || guardian.signalCode !== null,
    async stop(): Promise<void> {
      if (guardian.exitCode === null && guardian.signalCode === null) lifeline?.end();
      await exited;
    },
  };
}
