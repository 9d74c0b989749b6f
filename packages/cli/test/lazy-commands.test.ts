import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

/** The k8or modules loaded by importing the CLI's entry module (the program itself not run). */
function modulesLoadedByBin(): Promise<string[]> {
  const script = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
    await import(${JSON.stringify(bin)});
    console.log(JSON.stringify(loaded.filter((url) => url.includes('/cli/dist/'))));
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as string[]);
    });
  });
}

describe('k8or: a command loads its modules when it runs', () => {
  it('the entry module (and so `k8or operator`, the image\'s command) loads neither the sandbox nor the cluster-reading commands', async () => {
    const loaded = await modulesLoadedByBin();
    assert.ok(loaded.some((url) => url.endsWith('/commands/operator.js')), `loaded: ${loaded.join(', ')}`);
    for (const command of ['sandbox', 'import', 'plan', 'validate', 'trace', 'approve', 'reconcile']) {
      assert.ok(!loaded.some((url) => url.endsWith(`/commands/${command}.js`)), `commands/${command}.js loaded`);
    }
  });
});
