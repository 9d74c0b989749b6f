import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Container } from 'inversify';
import { loadedProviders } from '@k8or/core';
import gcpModule, { bucketConnector, gcpProvider, gcpSettingsSchema, tableConnector } from '@k8or/provider-gcp';

describe('the package as the operator loads it', () => {
  it('binds the GCP plugin through its default export, a ContainerModule', async () => {
    const container = new Container();
    await container.load(gcpModule);
    const plugin = loadedProviders(container).get('gcp');
    assert.equal(plugin, gcpProvider);
    assert.equal(plugin?.packageName, '@k8or/provider-gcp');
    assert.equal(plugin?.connectors.Bucket, bucketConnector);
    assert.equal(plugin?.connectors.Table, tableConnector);
    assert.equal(plugin?.settingsSchema, gcpSettingsSchema);
    assert.ok(plugin?.naming?.Bucket && plugin.naming.Table);
  });
});
