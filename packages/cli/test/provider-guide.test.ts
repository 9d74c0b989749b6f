// The provider guide (docs/providers/writing-a-provider.md) works from an empty folder: the
// page's own commands pack @k8or/api and @k8or/core, its code blocks marked with a file name
// (```ts file=src/index.ts) are written to a fresh folder beside those package files, and the
// page's `npm test` compiles the provider with tsc and runs the conformance kit on it. A wrong
// block (a type error, an observe that breaks a rule) fails this test. Then the provider, packed
// as the page says and installed beside k8or, is loaded by name: `k8or validate` (the webhook's
// own rules, through the operator's provider loader) admits the page's ProviderConfig and Bucket,
// which it refuses with providerconfig.provider-installed while the package is not there.
//
// Installing: by default the two package files are unpacked into the folder's node_modules as
// npm would, and their third-party dependencies (ajv, inversify, ..., typescript) come from this
// repository's node_modules, so the test needs no network. K8OR_GUIDE_NPM_INSTALL=1 runs the
// page's own `npm install` line instead (it may reach the npm registry for what npm's cache lacks).
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PAGE = join(REPO, 'docs', 'providers', 'writing-a-provider.md');
const REAL_INSTALL = process.env['K8OR_GUIDE_NPM_INSTALL'] === '1';
const K8OR = fileURLToPath(new URL('../bin/k8or.js', import.meta.url));

/** The page's code blocks that name a file: ```ts file=src/index.ts. */
function fileBlocks(markdown: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of markdown.matchAll(/^```\w+ file=(\S+)\n([\s\S]*?)^```$/gm)) {
    const [, path = '', body = ''] = match;
    assert.ok(!blocks.has(path), `one block per file: ${path} appears twice`);
    blocks.set(path, body);
  }
  return blocks;
}

/** The one command of the page's shell blocks that starts with `prefix` (its comment cut off). */
function commandLine(markdown: string, prefix: string, exact = false): string {
  const lines = [...markdown.matchAll(/^\s*```sh\n([\s\S]*?)^\s*```$/gm)]
    .flatMap((m) => (m[1] ?? '').split('\n'))
    .map((line) => line.trim().replace(/\s+#.*$/, ''))
    .filter((line) => (exact ? line === prefix : line.startsWith(prefix)));
  assert.equal(lines.length, 1, `the page has one "${prefix}" command: ${JSON.stringify(lines)}`);
  return lines[0] ?? '';
}

/** `k8or validate` of `file`: its exit code and output. */
async function validate(file: string, args: string[] = []): Promise<{ code: number; output: string }> {
  return await run(process.execPath, [K8OR, 'validate', '-f', file, ...args], { env: envWith([]), timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? -1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
}

/** A command line's words (the page's commands quote nothing). */
const words = (line: string): string[] => line.split(/\s+/).filter(Boolean);

/** Node 24 first on PATH, so npm and its scripts run on the repository's Node. */
function envWith(extraPath: string[]): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
  return { ...env, PATH: [dirname(process.execPath), ...extraPath, env['PATH'] ?? ''].join(delimiter) };
}

async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv, timeout = 120_000): Promise<string> {
  try {
    const { stdout, stderr } = await run('npm', args, { cwd, env, timeout, maxBuffer: 32 * 1024 * 1024 });
    return `${stdout}\n${stderr}`;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
  }
}

/** A package file unpacked where npm would put it: node_modules/<name>. */
async function unpack(tarball: string, into: string): Promise<void> {
  await mkdir(into, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', into, '--strip-components=1']);
}

describe('the provider guide, followed from an empty folder', () => {
  let root: string;
  let markdown: string;
  let packages: string;
  let folder: string;

  before(async () => {
    markdown = await readFile(PAGE, 'utf8');
    root = await mkdtemp(join(tmpdir(), 'k8or-provider-guide-'));
    packages = join(root, 'k8or-packages');
    folder = join(root, 'k8or-provider-foo');
    await mkdir(packages);
    await mkdir(folder);
  });
  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("packs @k8or/api and @k8or/core with the page's command, the packed core depending on the packed api's version", async () => {
    const pack = words(commandLine(markdown, 'npm pack -w'));
    const destination = pack.indexOf('--pack-destination');
    assert.ok(destination > 0, 'the pack command names its destination');
    pack[destination + 1] = packages;
    await npm(pack.slice(1), REPO, envWith([]));
    const files = (await readdir(packages)).sort();
    assert.deepEqual(files.map((f) => f.replace(/-\d+\.\d+\.\d+\.tgz$/, '')), ['k8or-api', 'k8or-core']);
    const manifest = async (file: string) => {
      const into = join(root, 'inspect', file);
      await unpack(join(packages, file), into);
      return JSON.parse(await readFile(join(into, 'package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string>; exports?: Record<string, unknown> };
    };
    const [api, core] = await Promise.all(files.map(manifest));
    assert.equal(core?.dependencies?.['@k8or/api'], api?.version, 'the packed core depends on exactly the packed api');
    assert.ok(core?.exports?.['./testing'], 'the conformance kit is exported as @k8or/core/testing');
    assert.ok(existsSync(join(root, 'inspect', files[1] ?? '', 'dist', 'testing', 'index.js')), 'the packed core holds the compiled kit');
  });

  it("writes the page's files and installs the package files as its npm install line says", async () => {
    const blocks = fileBlocks(markdown);
    for (const required of ['package.json', 'tsconfig.json', 'src/index.ts', 'test/conformance.test.ts']) assert.ok(blocks.has(required), `the page has a block for ${required}`);
    for (const [path, body] of blocks) {
      await mkdir(dirname(join(folder, path)), { recursive: true });
      await writeFile(join(folder, path), body);
    }
    const install = words(commandLine(markdown, 'npm install --save-dev ../k8or-packages/'));
    const tarballs = install.filter((word) => word.startsWith('../k8or-packages/'));
    assert.deepEqual(tarballs.map((t) => t.replace('../k8or-packages/', '')).sort(), (await readdir(packages)).sort(), 'the install line names the files npm pack made');
    if (REAL_INSTALL) {
      await npm([...install.slice(1), '--prefer-offline', '--no-audit', '--no-fund'], folder, envWith([]), 300_000);
      return;
    }
    for (const tarball of tarballs) {
      const name = tarball.includes('k8or-core') ? 'core' : 'api';
      await unpack(join(folder, tarball), join(folder, 'node_modules', '@k8or', name));
      // Where this repository's install nests a dependency under the package (another major than the hoisted one), npm nests it too.
      const nested = join(REPO, 'packages', name, 'node_modules');
      if (existsSync(nested)) await symlink(nested, join(folder, 'node_modules', '@k8or', name, 'node_modules'), 'dir');
    }
    await symlink(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
  });

  it("compiles with tsc and passes the conformance kit: the page's npm test", async () => {
    assert.ok(existsSync(join(folder, 'package.json')), 'the folder was written');
    const output = await npm(['test'], folder, envWith(REAL_INSTALL ? [] : [join(root, 'node_modules', '.bin')]), 180_000);
    const passed = Number(/(?:ℹ|#) pass (\d+)/.exec(output)?.[1] ?? 0);
    assert.match(output, /(?:ℹ|#) fail 0/, output);
    assert.ok(passed >= 14, `the kit's cases ran (${passed} passed):\n${output}`);
    assert.match(output, /access denied on observe is an error, never absence/);
  });

  it("installed beside k8or from its npm pack, is what the webhook's rules need to admit the page's ProviderConfig and Bucket", async () => {
    await npm(words(commandLine(markdown, 'npm pack', true)).slice(1), folder, envWith(REAL_INSTALL ? [] : [join(root, 'node_modules', '.bin')]));
    const tarball = (await readdir(folder)).find((f) => /^k8or-provider-foo-.*\.tgz$/.test(f));
    assert.ok(tarball, 'npm pack made k8or-provider-foo-<version>.tgz');
    // Beside k8or: the package file unpacked next to k8or's own @k8or/core and @k8or/api, as in a checkout.
    const beside = join(root, 'beside');
    await unpack(join(folder, tarball), join(beside, 'node_modules', 'k8or-provider-foo'));
    await mkdir(join(beside, 'node_modules', '@k8or'));
    for (const name of ['core', 'api']) await symlink(join(REPO, 'packages', name), join(beside, 'node_modules', '@k8or', name), 'dir');
    const manifests = [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '').filter((text) => /kind: ProviderConfig/.test(text));
    assert.equal(manifests.length, 1, 'the page has one manifest with its ProviderConfig');
    const file = join(root, 'foo.yaml');
    await writeFile(file, manifests[0] ?? '');
    assert.doesNotMatch(manifests[0] ?? '', /metadata: \{ name: default \}/, 'the ProviderConfig is not the default one');
    assert.match(manifests[0] ?? '', /kind: Secret/, 'the page shows the Secret');

    const without = await validate(file);
    assert.equal(without.code, 1, without.output);
    assert.match(without.output, /rule providerconfig\.provider-installed/, 'without the package, the webhook refuses the Bucket');
    const installed = await validate(file, ['--provider-root', beside]);
    assert.equal(installed.code, 0, installed.output);
    assert.match(installed.output, /ProviderConfig foo: valid/);
    assert.match(installed.output, /Bucket default\/photos: valid/);

    // The page's sample of what validate says about a setting foo does not have.
    await writeFile(file, (manifests[0] ?? '').replace('zone: north', 'zone: east'));
    const refused = await validate(file, ['--provider-root', beside]);
    assert.equal(refused.code, 1, refused.output);
    const sample = /^ {4}(spec\.settings\.zone: .*)$/m.exec(markdown)?.[1];
    assert.ok(sample && refused.output.includes(sample), `the page shows what validate says (${sample}):\n${refused.output}`);
  });
});
