import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

// Every module this process resolves from here on. The packages under test are imported below,
// after the hook, so what the manager loads is recorded.
const resolved = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    resolved.add(result.url);
    return result;
  },
});

const { startSandbox } = await import('@k8or/apiserver');
const { API_VERSION } = await import('@k8or/api');
const { KubeRest, corePath, installCrds, k8orPath, loadKubeAccess, waitFor } = await import('@k8or/core').then(async (core) => ({
  ...core,
  waitFor: (await import('@k8or/core/testing')).waitFor,
}));
const { resolveConfig, startManager } = await import('@k8or/operator');

describe('the manager running the controllers', () => {
  let dir: string;
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  let manager: Awaited<ReturnType<typeof startManager>> | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'k8or-manager-'));
    sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error' });
    await installCrds(await loadKubeAccess(join(dir, 'kubeconfig'), {}));
  });
  after(async () => {
    await manager?.stop();
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads neither @kubernetes/client-node, nor the webhook package, nor an SDK client before a resource needs it, and caches Buckets without managedFields', async () => {
    const rest = new KubeRest(await loadKubeAccess(join(dir, 'kubeconfig'), {}));
    try {
      await waitFor('the Bucket CRD served', async () => (await rest.get(k8orPath('ProviderConfig', undefined))) !== undefined);
      await rest.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
      // Paused: the engine caches and records it, and makes no cloud call.
      const stored = await rest.create<{ metadata: { managedFields?: unknown[] } }>(k8orPath('Bucket', 'team-a'), {
        apiVersion: API_VERSION,
        kind: 'Bucket',
        metadata: { name: 'photos', namespace: 'team-a', annotations: { 'k8or.io/paused': 'true' } },
        spec: { name: 'k8or-test-photos' },
      });
      assert.ok(stored.metadata.managedFields?.length, 'the API server keeps managedFields');

      const flags = {
        kubeconfig: join(dir, 'kubeconfig'),
        providers: 'aws',
        'cluster-id': 'test',
        'metrics-bind-address': '127.0.0.1:0',
        'health-probe-bind-address': '127.0.0.1:0',
        'log-level': 'error',
      };
      manager = await startManager(resolveConfig(flags, {}, ['controllers']));
      const engine = manager.engines[0];
      if (!engine) throw new Error('no engine started');
      assert.ok(engine.hasSynced());
      const cached = engine.controllers.get('Bucket')?.informer.cache.get('team-a/photos');
      assert.equal(cached?.spec.name, 'k8or-test-photos');
      assert.equal(cached?.metadata.managedFields, undefined);

      const loaded = [...resolved];
      assert.deepEqual(loaded.filter((url) => url.includes('/@kubernetes/client-node/')), []);
      assert.deepEqual(loaded.filter((url) => url.includes('/packages/webhook/')), []);
      assert.ok(loaded.some((url) => url.includes('/providers/aws/')), 'the hook sees what the manager loads');
      // The provider's SDK clients load with the first resource that connects; a paused Bucket never does.
      assert.deepEqual(loaded.filter((url) => url.includes('/@aws-sdk/client-')), []);
    } finally {
      rest.close();
    }
  });
  it('with the webhook (the image\'s `operator --webhook`) still loads no @kubernetes/client-node', async () => {
    await manager?.stop();
    manager = undefined;
    const flags = {
      kubeconfig: join(dir, 'kubeconfig'),
      providers: 'aws',
      'cluster-id': 'test',
      'metrics-bind-address': '127.0.0.1:0',
      'health-probe-bind-address': '127.0.0.1:0',
      'webhook-bind-address': '127.0.0.1:0',
      'log-level': 'error',
    };
    manager = await startManager(resolveConfig(flags, {}, ['controllers', 'webhook']));
    assert.ok(manager.webhook?.url, 'the webhook serves');
    await waitFor('the webhook ready', () => manager?.webhook?.isReady() === true);
    const loaded = [...resolved];
    assert.ok(loaded.some((url) => url.includes('/packages/webhook/')), 'the hook sees the webhook package load');
    assert.deepEqual(loaded.filter((url) => url.includes('/@kubernetes/client-node/')), []);
  });
});
