// The Azure world for end-to-end tests through the engine (@k8or/provider-testkit's ProviderWorld):
// Azurite (Blob and Table), ProviderConfigs and Secrets pointing at it, and the engine running the
// Azure provider plugin. ProviderConfigs: `default` (the account key), `denied` (a wrong key), `busy`
// (a fault proxy in front of Blob) and `sas` (an account SAS).
import { azureProvider, clearAzureClients } from '@k8or/provider-azure';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { ProviderWorld, SECRETS_NAMESPACE } from '@k8or/provider-testkit';
import type { Engine } from '@k8or/core';
import { accountSas, startFaultProxy, type FaultProxy } from './support.ts';

export { NAMESPACE, SECRETS_NAMESPACE, conditionOf, isReady, waitFor, type KubeEvent } from '@k8or/provider-testkit';

export class AzureWorld extends ProviderWorld {
  readonly azurite: Azurite;
  /** In front of Azurite's Blob service, for the `busy` ProviderConfig. */
  readonly busyBlob: FaultProxy;

  private constructor(sandbox: Sandbox, azurite: Azurite, busyBlob: FaultProxy) {
    super(sandbox);
    this.azurite = azurite;
    this.busyBlob = busyBlob;
  }

  static async start(): Promise<AzureWorld> {
    const [sandbox, azurite] = await Promise.all([startSandbox(), startAzurite()]);
    const world = new AzureWorld(sandbox, azurite, await startFaultProxy(azurite.blobEndpoint));
    await world.arrange();
    const keys = { ours: azurite.accountKey, denied: Buffer.from('not-the-account-key').toString('base64') };
    for (const [name, accountKey] of Object.entries(keys)) await world.createSecret(`azure-${name}`, { accountKey });
    await world.createSecret('azure-sas', { sasToken: accountSas(azurite) });
    const providerConfigs = { default: ['ours', azurite.blobEndpoint], denied: ['denied', azurite.blobEndpoint], busy: ['ours', world.busyBlob.endpoint], sas: ['sas', azurite.blobEndpoint] } as const;
    for (const [name, [secret, blobEndpoint]] of Object.entries(providerConfigs)) {
      await world.createProviderConfig(name, {
        provider: 'azure',
        storageAccount: azurite.accountName,
        endpoints: { bucket: blobEndpoint, table: azurite.tableEndpoint },
        credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: `azure-${secret}` } },
      });
    }
    return world;
  }

  /** Runs the engine with the Azure provider plugin, with quick test timings. */
  async startEngine(): Promise<Engine> {
    return await this.runEngine({
      providers: new Map([['azure', azureProvider]]),
      // Sub-second k8or.io/resync-period annotations in these tests; production's floor is 10 s.
      resyncFloorMs: 100,
      operatorNamespace: SECRETS_NAMESPACE,
    });
  }

  async stop(): Promise<void> {
    await this.stopEngine();
    clearAzureClients();
    await this.busyBlob.close();
    await Promise.all([this.sandbox.stop(), this.azurite.stop()]);
  }
}
