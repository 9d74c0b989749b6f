import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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

/** The processes whose parent is `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // it ended while we looked
    }
  }
  return children;
}

/** Every live descendant of `pid` (children, their children, ...). */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  for (let next = childrenOf(pid); next.length > 0; next = next.flatMap(childrenOf)) found.push(...next);
  return found;
}

/** How a test kills the owning parent: the parent alone, or its whole process group at once (as CI runners and `timeout -s KILL` do). */
export type ParentKill = 'parent' | 'group';

/**
 * Starts test/fixtures/owning-parent.ts and reads the `{ pid, port }` of the backend it owns. The
 * parent leads a process group of its own, so a test can SIGKILL that whole group without killing itself.
 */
export async function startOwningParent(kind: 'server' | 'dynamodb' | 'bigtable' | 'azurite'): Promise<{ parent: ChildProcess; backend: { pid: number; port: number } }> {
  const script = fileURLToPath(new URL('./fixtures/owning-parent.ts', import.meta.url));
  const parent = spawn(process.execPath, [script, kind], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
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
 * Starts a parent that owns a backend of `kind`, kills the parent (or its whole process group) with
 * SIGKILL, and waits until every process the parent had started (the backend, and whatever sits
 * between) has ended and the backend's port is free, failing after waitFor's deadline otherwise.
 */
export async function assertBackendEndsWithItsKilledParent(kind: 'server' | 'dynamodb' | 'bigtable' | 'azurite', kill: ParentKill = 'parent'): Promise<void> {
  const { parent, backend } = await startOwningParent(kind);
  const parentPid = parent.pid as number;
  const started = descendantsOf(parentPid);
  try {
    assert.ok(started.includes(backend.pid), 'the backend descends from its parent');
    assert.ok(isRunning(backend.pid), 'the backend runs');
    assert.ok(await isListening(backend.port), 'the backend listens');
    process.kill(kill === 'group' ? -parentPid : parentPid, 'SIGKILL');
    await waitFor(`every process the ${kind} parent started to end after its ${kill === 'group' ? 'process group' : 'process'} was killed`, () => started.every((pid) => !isRunning(pid)));
    await waitFor(`the ${kind} backend's port to be free`, async () => !(await isListening(backend.port)));
  } finally {
    parent.kill('SIGKILL');
    for (const pid of started) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
}
