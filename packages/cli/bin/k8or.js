#!/usr/bin/env node
// The k8or command's entry. No static imports: the Node version is checked
// before any dependency is loaded, so an old Node gets a clear message instead
// of a syntax error from deep inside an SDK.
const NEEDED_MAJOR = 22;
const found = process.versions.node;
if (Number(found.split('.')[0]) < NEEDED_MAJOR) {
  process.stderr.write(
    `k8or needs Node.js ${NEEDED_MAJOR} or later; this is Node.js ${found} (${process.execPath}).\n` +
      'From the repository, run it through npm (npx k8or, npm start), which uses the Node 24 that npm ci installed; or install Node 24.\n',
  );
  process.exit(1);
}

const { existsSync } = await import('node:fs');
const program = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(program)) {
  // A fresh checkout after npm ci: build every package (the providers too: the CLI loads them by name), once.
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  process.stderr.write('k8or: first run in this checkout, building (about a minute)...\n');
  const build = spawnSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) {
    process.stderr.write('k8or: the build failed; run npm run build to see why\n');
    process.exit(1);
  }
}
const { main, exitWhenFlushed } = await import(program.href);
main(process.argv.slice(2)).then(
  (code) => exitWhenFlushed(code),
  (error) => {
    process.stderr.write(`k8or: ${error instanceof Error ? error.message : String(error)}\n`);
    exitWhenFlushed(1);
  },
);
