import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Container } from 'inversify';
import { loadedProviders } from '@k8or/core';
import gcpModule, { gcpProvider, gcpSettingsSchema } from '@k8or/provider-gcp';
import gcpOperatorEntry from '@k8or/provider-gcp/module';

describe('the package as the operator loads it', () => {
  it('binds the GCP plugin through its default export, a ContainerModule, the same as its ./module entry', async () => {
    assert.equal(gcpOperatorEntry, gcpModule);
    const container = new Container();
    await container.load(gcpModule);
    const plugin = loadedProviders(container).get('gcp');
    assert.equal(plugin, gcpProvider);
    assert.equal(plugin?.packageName, '@k8or/provider-gcp');
    assert.equal(typeof plugin?.connectors.Bucket?.list, 'function');
    assert.equal(typeof plugin?.connectors.Table?.connect, 'function');
    assert.equal(plugin?.settingsSchema, gcpSettingsSchema);
    assert.ok(plugin?.naming?.Bucket && plugin.naming.Table);
  });

  it('loads none of the cloud\'s SDKs with the plugin and its validation: they load with the first resource', () => {
    const script = `
      import { registerHooks } from 'node:module';
      const sdks = new Set();
      registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); const m = /@google-cloud\\/[a-z-]+/.exec(found.url); if (m) sdks.add(m[0]); return found; } });
      const { Container } = await import('inversify');
      const { loadedProviders } = await import('@k8or/core');
      const container = new Container();
      await container.load((await import('@k8or/provider-gcp/module')).default);
      const plugin = loadedProviders(container).get('gcp');
      plugin.validation.validateProviderConfig({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'gcp' } });
      console.log(JSON.stringify([...sdks].sort()));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim()), []);
  });
});
