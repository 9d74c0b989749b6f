#!/usr/bin/env node
// `npm test`: typecheck, lint and every package's tests through turbo, then one
// closing line that totals every package's node:test summary for CI to read.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

console.log(`node ${process.version}`);
const args = ['run', 'typecheck', 'lint', 'test', '--concurrency=2', '--continue', '--output-logs=full', ...process.argv.slice(2)];
// Node's on-disk compile cache, shared by every process the tests start: the suites start the
// k8or CLI, the operator and the SDKs hundreds of times, and each start compiles the same modules.
// Node checks each entry against its source, so a stale entry is only a miss.
const compileCache = process.env.NODE_COMPILE_CACHE ?? fileURLToPath(new URL('../node_modules/.cache/node-compile/', import.meta.url));
const turbo = spawn('turbo', args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FORCE_COLOR: '0', NODE_COMPILE_CACHE: compileCache } });

let passed = 0;
let failed = 0;
let skipped = 0;
let pending = '';
// Skips are counted from the spec reporter's ﹣ lines, not its summary: the summary's "skipped"
// leaves out a skipped suite (a describe with `skip`), whose tests are never listed.
const count = (line) => {
  if (/^(\S+: )?\s*﹣ /.test(line)) {
    skipped += 1;
    return;
  }
  const m = /ℹ (pass|fail) (\d+)\s*$/.exec(line);
  if (!m) return;
  const n = Number(m[2]);
  if (m[1] === 'pass') passed += n;
  else failed += n;
};
turbo.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (pending + chunk.toString()).split('\n');
  pending = lines.pop() ?? '';
  lines.forEach(count);
});
turbo.on('close', (code) => {
  count(pending);
  console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(code ?? 1);
});
