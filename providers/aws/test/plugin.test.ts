import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Container } from 'inversify';
import { loadedProviders } from '@k8or/core';
import awsModule, { awsProvider } from '@k8or/provider-aws';
import awsOperatorEntry from '@k8or/provider-aws/module';

/**
 * A fresh Node process that imports the operator's entry, `@k8or/provider-aws/module`, then runs
 * `then` (an async function body given `plugin`); answers the AWS SDK clients it resolved.
 */
function sdkClientsLoaded(then = ''): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const clients = new Set();
    registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); const m = /@aws-sdk\\/client-[a-z0-9-]+/.exec(found.url); if (m) clients.add(m[0]); return found; } });
    const { Container } = await import('inversify');
    const { loadedProviders } = await import('@k8or/core');
    const container = new Container();
    await container.load((await import('@k8or/provider-aws/module')).default);
    const plugin = loadedProviders(container).get('aws');
    await (async (plugin) => { ${then} })(plugin);
    console.log(JSON.stringify([...clients].sort()));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim()) as string[];
}

describe('the package as the operator loads it', () => {
  it('binds the AWS plugin through its default export, a ContainerModule, the same as its ./module entry', async () => {
    assert.equal(awsOperatorEntry, awsModule);
    const container = new Container();
    await container.load(awsModule);
    const plugin = loadedProviders(container).get('aws');
    assert.equal(plugin, awsProvider);
    assert.equal(plugin?.packageName, '@k8or/provider-aws');
    assert.equal(typeof plugin?.connectors.Bucket?.connect, 'function');
    assert.equal(typeof plugin?.connectors.Table?.list, 'function');
    assert.equal(typeof plugin?.validation.validateProviderConfig, 'function');
  });

  it('loads no SDK client with the plugin, S3 with the first Bucket connected, DynamoDB only with a Table', () => {
    assert.deepEqual(sdkClientsLoaded(), []);
    // connect makes the client and reads nothing from the cloud, so no endpoint needs to answer.
    const connect = (kind: 'Bucket' | 'Table') => `
      const providerConfig = { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'us-east-1', endpoints: { bucket: 'http://127.0.0.1:9', table: 'http://127.0.0.1:9' } } };
      const resource = { apiVersion: 'k8or.io/v1alpha1', kind: '${kind}', metadata: { name: 'photos', namespace: 'media' }, spec: { name: 'photos' } };
      await plugin.connectors.${kind}.connect(resource, { providerConfig, credentials: { accessKeyId: 'AKIATEST', secretAccessKey: 'secret' }, externalName: 'photos', ownerTags: {}, recordCall: (_op, call) => call() });`;
    assert.deepEqual(sdkClientsLoaded(connect('Bucket')), ['@aws-sdk/client-s3']);
    assert.deepEqual(sdkClientsLoaded(connect('Table')), ['@aws-sdk/client-dynamodb']);
  });
});

describe('targetOf: where a ProviderConfig points, for the engine\'s pinned target', () => {
  const providerConfig = (spec: Record<string, unknown>) => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'p' }, spec: { provider: 'aws', ...spec } }) as Parameters<NonNullable<typeof awsProvider.targetOf>>[1];
  const targetOf = (kind: 'Bucket' | 'Table', spec: Record<string, unknown>, credentials?: Record<string, string>) => awsProvider.targetOf?.(kind, providerConfig(spec), credentials);

  it('a Table: the region (us-east-1 when unset) and the table endpoint', () => {
    assert.deepEqual(targetOf('Table', {}), { region: 'us-east-1', endpoint: '' });
    assert.deepEqual(targetOf('Table', { region: 'eu-west-1', endpoint: 'http://all:1', endpoints: { table: 'http://ddb:8000' } }), { region: 'eu-west-1', endpoint: 'http://ddb:8000' });
  });

  it('a Bucket: the bucket endpoint only (bucket names are global to S3; a bucket\'s region is its own)', () => {
    assert.deepEqual(targetOf('Bucket', { region: 'eu-west-1' }), { endpoint: '' });
    assert.deepEqual(targetOf('Bucket', { endpoint: 'http://s3:9000' }), { endpoint: 'http://s3:9000' });
  });

  it('never holds credentials: rotating keys keeps the target', () => {
    const before = targetOf('Table', { region: 'eu-west-1' }, { accessKeyId: 'AKIAOLD', secretAccessKey: 'old' });
    assert.deepEqual(targetOf('Table', { region: 'eu-west-1' }, { accessKeyId: 'AKIANEW', secretAccessKey: 'new' }), before);
    assert.ok(!JSON.stringify(before).includes('AKIA'));
  });
});
