import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { waitFor } from '@k8or/core/testing';
import { k8orBinary, startOperatorProcess } from '../support/operator-process.ts';
import { run, type RunResult, type Tool } from '../support/run.ts';

// Each provider package as a platform team ships it: `npm pack`, installed from its tarball into an
// empty folder beside @k8or/core and @k8or/api (their tarballs too), and loaded there by package name:
// its default export is the ContainerModule that binds its ProviderPlugin. With the operator in the
// tree, `k8or operator --provider-root FOLDER --providers ...` starts with them.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const npm: Tool = { binary: 'npm', env: { npm_config_audit: 'false', npm_config_fund: 'false' } };
const NETWORK_ERRORS = /ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|ETIMEDOUT|ENOTCACHED/;
/** A line of npm's http log: a fetch from the registry. */
const REGISTRY_FETCH = /npm http fetch/;

describe('provider packages pack, install beside the operator and load by name', { timeout: 300_000 }, () => {
  let dir: string;
  let app: string;
  let providers: string[];
  let installSkipped: string | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'k8or-packages-'));
    providers = (await readdir(join(ROOT, 'providers'))).sort();
    const workspaces = ['@k8or/api', '@k8or/core', ...providers.map((p) => `@k8or/provider-${p}`)];
    const packed = await run({ ...npm, cwd: ROOT }, ['pack', '--pack-destination', dir, ...workspaces.flatMap((w) => ['-w', w])], undefined, 120_000);
    assert.equal(packed.code, 0, packed.stderr);
    const tarballs = (await readdir(dir)).filter((f) => f.endsWith('.tgz'));
    assert.equal(tarballs.length, workspaces.length, `one tarball per package: ${tarballs.join(', ')}`);
    app = join(dir, 'app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'k8or-providers', private: true }));
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('installs every provider tarball into an empty folder, and each loads by name there', async (t) => {
    // third-party dependencies come from the npm cache where it has them, else the registry
    // (`--loglevel=http` lists each fetch, so a registry that stalls can be told from a hang of ours)
    const install = await runIn(app, ['install', '--prefer-offline', '--ignore-scripts', '--loglevel=http', '--fetch-timeout=30000', '--fetch-retries=2', ...(await readdir(dir)).filter((f) => f.endsWith('.tgz')).map((f) => join(dir, f))]);
    const registryStalled = install.code === null && REGISTRY_FETCH.test(install.stderr);
    if (install.code !== 0 && (NETWORK_ERRORS.test(install.stderr) || registryStalled)) {
      const lastFetch = install.stderr.split('\n').filter((line) => REGISTRY_FETCH.test(line)).at(-1) ?? '';
      installSkipped = `the npm registry is not reachable for the providers' dependencies${registryStalled ? ` (npm still fetching at the deadline; last: ${lastFetch.trim()})` : ''}`;
      t.skip(installSkipped);
      return;
    }
    assert.equal(install.code, 0, install.stderr);
    const require = createRequire(join(app, 'package.json'));
    const core = (await import(pathToFileURL(require.resolve('@k8or/core')).href)) as { loadedProviders(container: unknown): Map<string, { provider: string }> };
    const { Container } = (await import(pathToFileURL(require.resolve('inversify')).href)) as { Container: new () => { load(...modules: unknown[]): Promise<void> | void } };
    for (const provider of providers) {
      const entry = require.resolve(`@k8or/provider-${provider}`);
      assert.ok(entry.startsWith(app), `@k8or/provider-${provider} resolves inside ${app}: ${entry}`);
      const exports = (await import(pathToFileURL(entry).href)) as { default?: unknown };
      const container = new Container();
      await container.load(exports.default);
      assert.deepEqual([...core.loadedProviders(container).keys()], [provider]);
    }
  });

  it('starts `k8or operator --provider-root FOLDER --providers ...` with them', async (t) => {
    const binary = k8orBinary();
    if ('missing' in binary) return t.skip(binary.missing);
    if (installSkipped) return t.skip(installSkipped);
    const home = await mkdtemp(join(tmpdir(), 'k8or-packages-sandbox-'));
    let sandbox: Sandbox | undefined;
    try {
      sandbox = await startSandbox({ kubeconfigPath: join(home, 'kubeconfig') });
      const operator = await startOperatorProcess({
        bin: binary.path,
        kubeconfigPath: join(home, 'kubeconfig'),
        env: { K8OR_PROVIDER_ROOT: app, K8OR_PROVIDERS: providers.join(','), K8OR_LEADER_ELECT: 'false', K8OR_LOG_LEVEL: 'info' },
        webhookPort: 0,
        webhook: false,
      });
      try {
        await waitFor('providers loaded', () => /"msg":"providers loaded"/.test(operator.output()), 60_000);
        const line = operator.output().split('\n').find((l) => l.includes('"providers loaded"')) ?? '';
        for (const provider of providers) assert.match(line, new RegExp(`"${provider}"`));
      } finally {
        await operator.stop();
      }
    } finally {
      await sandbox?.stop();
      await rm(home, { recursive: true, force: true });
    }
  });
});

/** npm in `cwd` (an install there, never in this workspace). */
function runIn(cwd: string, args: string[]): Promise<RunResult> {
  return run({ ...npm, cwd }, args, undefined, 240_000);
}
