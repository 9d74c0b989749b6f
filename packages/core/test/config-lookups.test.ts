import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { Annotations } from '@k8or/api';
import { CachedLookups, KubeRest, ObjectCache } from '@k8or/core';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

describe('the engine\'s cached lookups', () => {
  let sandbox: Sandbox;
  let rest: KubeRest;

  before(async () => {
    sandbox = await startSandbox();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    rest = new KubeRest(kubeConfig);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({
      body: { metadata: { name: 'team-b', annotations: { [Annotations.providerConfig]: 'team-b-account' } } },
    });
  });

  after(async () => {
    await sandbox.stop();
  });

  it('reads a namespace the cache has not seen yet from the API, so its provider-config annotation is never passed over for `default`', async () => {
    const empty = () => new ObjectCache<KubernetesObject>();
    const lookups = new CachedLookups({ namespaces: empty(), providerConfigs: empty(), secrets: empty() }, rest);
    const namespace = await lookups.namespace('team-b');
    assert.equal(namespace?.metadata.annotations?.[Annotations.providerConfig], 'team-b-account');
    assert.equal(await lookups.namespace('no-such-namespace'), undefined);
  });
});
