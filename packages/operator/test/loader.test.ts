import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderLoader, ProviderLoadError, packageCandidates } from '@k8or/operator';

describe('provider packages by name', () => {
  it('maps a short name to @k8or/provider-NAME, then k8or-provider-NAME; a package name stays', () => {
    assert.deepEqual(packageCandidates('aws'), ['@k8or/provider-aws', 'k8or-provider-aws']);
    assert.deepEqual(packageCandidates('k8or-provider-foo'), ['k8or-provider-foo']);
    assert.deepEqual(packageCandidates('@acme/k8or-provider-bar'), ['@acme/k8or-provider-bar']);
  });

  it('loads @k8or/provider-aws, installed beside the operator, by its short name', async () => {
    const { providers, packages } = await new ProviderLoader().loadAll(['aws']);
    assert.equal(providers.get('aws')?.packageName, '@k8or/provider-aws');
    assert.deepEqual(packages.map((p) => p.packageName), ['@k8or/provider-aws']);
    // Its ./module export, not the root, which re-exports the SDK-bound modules.
    assert.match(packages[0]?.entryUrl ?? '', /provider-aws\/dist\/module\.js$/);
  });

  it('fails for a provider that is not installed, listing the installed ones', async () => {
    await assert.rejects(new ProviderLoader().load('nimbus'), (error: unknown) => {
      assert.ok(error instanceof ProviderLoadError);
      assert.match(error.message, /provider "nimbus" is not installed \(looked for @k8or\/provider-nimbus and k8or-provider-nimbus/);
      assert.match(error.message, /installed providers: .*@k8or\/provider-aws/);
      return true;
    });
  });

  it('does not discover a private package with a provider\'s name (a monorepo\'s test kit), and loads it when named', async () => {
    const root = mkdtempSync(join(tmpdir(), 'k8or-loader-'));
    try {
      for (const [name, isPrivate] of [['k8or-provider-testkit', true], ['k8or-provider-published', false]] as const) {
        const dir = join(root, 'node_modules', name);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: isPrivate, type: 'module', exports: './index.js' }));
        writeFileSync(join(dir, 'index.js'), 'export default { hello: "world" };\n');
      }
      const loader = new ProviderLoader({ root });
      assert.ok(loader.installed().includes('k8or-provider-published'));
      assert.ok(!loader.installed().includes('k8or-provider-testkit'));
      // named, it is looked at: and refused for what it is
      await assert.rejects(loader.load('k8or-provider-testkit'), /does not export a ContainerModule as its default export/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a package that is not a k8or provider (no ContainerModule default export)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'k8or-loader-'));
    try {
      const dir = join(root, 'node_modules', 'k8or-provider-broken');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'k8or-provider-broken', type: 'module', exports: './index.js' }));
      writeFileSync(join(dir, 'index.js'), 'export default { hello: "world" };\n');
      const loader = new ProviderLoader({ root });
      assert.ok(loader.installed().includes('k8or-provider-broken'));
      await assert.rejects(loader.load('k8or-provider-broken'), /does not export a ContainerModule as its default export/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
