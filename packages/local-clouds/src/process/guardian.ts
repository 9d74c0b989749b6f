// The guardian of one owned child (see owned-child.ts), run as
//   node guardian.js GRACE_MS COMMAND [ARGS...]
// with stdin a pipe from the parent, in a session of its own (so a SIGKILL of
// the parent's whole process group spares it). It starts COMMAND in a process
// group of its own and ends that group when stdin closes: the kernel closes the pipe
// when the parent exits, however it exits (SIGKILL included), which is the
// one notice of a parent's death that Linux gives without prctl. It reports
// the backend's pid (or why it could not start) as a JSON line on fd 3, and
// ends as the backend ended (its exit code, or its signal).
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';

const [graceArgument, command, ...args] = process.argv.slice(2);
const graceMs = Number(graceArgument);
if (!command || !Number.isFinite(graceMs)) {
  process.stderr.write('usage: guardian.js GRACE_MS COMMAND [ARGS...]\n');
  process.exit(2);
}

const report = new Socket({ fd: 3, readable: false, writable: true });
// The parent decides when the backend stops; a Ctrl-C meant for it must not reach the backend first.
process.on('SIGINT', () => undefined);

// detached: its own process group, so the whole group (a launcher script and its JVM) can be ended at once.
const backend = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
let ended = false;

const signalGroup = (signal: NodeJS.Signals): void => {
  if (ended || backend.pid === undefined) return;
  try {
    process.kill(-backend.pid, signal);
  } catch {
    backend.kill(signal);
  }
};

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  signalGroup('SIGTERM');
  setTimeout(() => signalGroup('SIGKILL'), graceMs).unref();
};

let spawned = false;
backend.once('spawn', () => {
  spawned = true;
  report.write(`${JSON.stringify({ pid: backend.pid })}\n`);
});
backend.on('error', (error: NodeJS.ErrnoException) => {
  // After the spawn, an error is a failed kill of a backend that is ending anyway.
  if (spawned || ended) return;
  ended = true;
  report.end(`${JSON.stringify({ error: error.message, code: error.code })}\n`, () => process.exit(127));
});
backend.once('exit', (code, signal) => {
  if (!spawned) return;
  ended = true;
  // Whatever the backend left in its group (a launcher script's JVM) goes with it.
  try {
    if (backend.pid !== undefined) process.kill(-backend.pid, 'SIGKILL');
  } catch {
    // the group is already empty
  }
  // End as the backend ended, so the parent reads the backend's status from the guardian's.
  report.end(() => {
    if (signal === null) process.exit(code ?? 1);
    for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(name);
    process.kill(process.pid, signal);
  });
});

process.stdin.on('data', () => undefined);
process.stdin.once('close', stop);
process.stdin.once('end', stop);
process.once('SIGTERM', stop);
process.once('SIGHUP', stop);
