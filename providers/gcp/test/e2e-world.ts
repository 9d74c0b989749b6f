// The GCP world for end-to-end tests through the engine (@k8or/provider-testkit's ProviderWorld): the
// GCS fake and the Bigtable emulator, a ProviderConfig and a Secret (a service-account key) pointing
// at them, and the engine running the GCP provider plugin.
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startBigtableEmulator, startGcsFake, type BigtableEmulator, type GcsFake } from '@k8or/local-clouds';
import { destroyBigtableClients, destroyStorageClients, gcpProvider } from '@k8or/provider-gcp';
import { ProviderWorld, SECRETS_NAMESPACE } from '@k8or/provider-testkit';
import type { Engine } from '@k8or/core';
import { INSTANCE, PROJECT, serviceAccountKey } from './support.ts';

export { NAMESPACE, SECRETS_NAMESPACE, conditionOf, isReady, waitFor, type KubeEvent } from '@k8or/provider-testkit';

export const OPERATOR = serviceAccountKey('k8or-operator@k8or-test-project.iam.gserviceaccount.com');

export class GcpWorld extends ProviderWorld {
  readonly gcs: GcsFake;
  readonly bigtable: BigtableEmulator | undefined;

  private constructor(sandbox: Sandbox, gcs: GcsFake, bigtable: BigtableEmulator | undefined) {
    super(sandbox);
    this.gcs = gcs;
    this.bigtable = bigtable;
  }

  /** Starts everything; without the Bigtable emulator (`withBigtable: false`) only Buckets work. */
  static async start(withBigtable: boolean): Promise<GcpWorld> {
    const [sandbox, gcs, bigtable] = await Promise.all([
      startSandbox(),
      // The fake checks the JWTs the operator's service-account key signs: the engine must hand over the Secret.
      startGcsFake({ serviceAccounts: { [OPERATOR.key['client_email'] as string]: { project: PROJECT, publicKeyPem: OPERATOR.publicKeyPem } } }),
      withBigtable ? startBigtableEmulator() : Promise.resolve(undefined),
    ]);
    const world = new GcpWorld(sandbox, gcs, bigtable);
    await world.arrange();
    await world.createSecret('gcp-operator', { 'credentials.json': OPERATOR.json });
    await world.createProviderConfig('default', {
      provider: 'gcp',
      project: PROJECT,
      region: 'europe-west1',
      bigtableInstance: INSTANCE,
      endpoints: { bucket: gcs.endpoint, ...(bigtable ? { table: `http://${bigtable.host}` } : {}) },
      credentials: { source: 'Secret', secretRef: { namespace: SECRETS_NAMESPACE, name: 'gcp-operator' } },
    });
    return world;
  }

  /** Runs the engine with the GCP provider plugin, with quick test timings. */
  async startEngine(): Promise<Engine> {
    return await this.runEngine({ providers: new Map([['gcp', gcpProvider]]) });
  }

  async stop(): Promise<void> {
    await this.stopEngine();
    await Promise.all([destroyStorageClients(), destroyBigtableClients()]);
    await Promise.all([this.sandbox.stop(), this.gcs.stop(), this.bigtable?.stop()]);
  }
}
