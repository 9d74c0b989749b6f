import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@k8or/core/testing';

/** Whether `pid` is a live process (a zombie waiting to be reaped by init counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether something accepts connections on 127.0.0.1:port. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts test/fixtures/owning-parent.ts and reads the `{ pid, port }` of the backend it owns. */
export async function startOwningParent(kind: 'server' | 'dynamodb' | 'bigtable' | 'azurite'): Promise<{ parent: ChildProcess; backend: { pid: number; port: number } }> {
  const script = fileURLToPath(new URL('./fixtures/owning-parent.ts', import.meta.url));
  const parent = spawn(process.execPath, [script, kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  const backend = await new Promise<{ pid: number; port: number }>((resolve, reject) => {
    let output = '';
    parent.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const newline = output.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(output.slice(0, newline)) as { pid: number; port: number });
    });
    parent.once('exit', (code) => reject(new Error(`owning parent exited with ${code} before it reported`)));
  });
  return { parent, backend };
}

/**
 * Starts a parent that owns a backend of `kind`, kills the parent with SIGKILL, and waits until the
 * backend's process has ended and its port is free (failing after waitFor's deadline otherwise).
 */
export async function assertBackendEndsWithItsKilledParent(kind: 'server' | 'dynamodb'): Promise<void> {
  const { parent, backend } = await startOwningParent(kind);
  try {
    assert.ok(isRunning(backend.pid), 'the backend runs');
    assert.ok(await isListening(backend.port), 'the backend listens');
    parent.kill('SIGKILL');
    await waitFor(`the ${kind} backend to end after its parent was killed`, () => !isRunning(backend.pid));
    await waitFor(`the ${kind} backend's port to be free`, async () => !(await isListening(backend.port)));
  } finally {
    parent.kill('SIGKILL');
    if (isRunning(backend.pid)) process.kill(backend.pid, 'SIGKILL');
  }
}
