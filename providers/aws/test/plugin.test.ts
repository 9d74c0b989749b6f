import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Container } from 'inversify';
import { loadedProviders } from '@k8or/core';
import awsModule, { awsProvider, bucketConnector, tableConnector } from '@k8or/provider-aws';

describe('the package as the operator loads it', () => {
  it('binds the AWS plugin through its default export, a ContainerModule', async () => {
    const container = new Container();
    await container.load(awsModule);
    const plugin = loadedProviders(container).get('aws');
    assert.equal(plugin, awsProvider);
    assert.equal(plugin?.packageName, '@k8or/provider-aws');
    assert.equal(plugin?.connectors.Bucket, bucketConnector);
    assert.equal(plugin?.connectors.Table, tableConnector);
    assert.equal(typeof plugin?.validation.validateProviderConfig, 'function');
  });
});
