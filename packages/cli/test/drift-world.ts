// The world of the drift-policy tests: an embedded API server with the CRDs, the operator's engine
// with every provider, its log lines kept (the cloud-write records), and the helpers that read
// objects, Events and write records, and ask for a reconcile as a user would (`k8or reconcile`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { API_VERSION, KINDS, type ManagedKindName, type ManagedResource } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { CLOUD_WRITE_MESSAGE, Engine, KubeRest, createLogger, installCrds, k8orPath, type CloudWriteRecord } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { awsProvider } from '@k8or/provider-aws';
import { azureProvider } from '@k8or/provider-azure';
import { gcpProvider } from '@k8or/provider-gcp';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type CoreV1Event } from '@kubernetes/client-node';
import { k8or } from './support.ts';

export const NS = 'media';
export const WAIT_MS = 120_000;

export const synced = (object: ManagedResource) => object.status?.conditions?.find((c) => c.type === 'Synced');

export class DriftWorld {
  readonly #dir = mkdtempSync(join(tmpdir(), 'k8or-drift-'));
  readonly #logLines: string[] = [];
  #sandbox: Sandbox | undefined;
  #engine: Engine | undefined;
  kubeConfig = new KubeConfig();

  /** The environment `k8or` runs in: the sandbox's kubeconfig. */
  get env(): NodeJS.ProcessEnv {
    return { ...process.env, KUBECONFIG: join(this.#dir, 'kubeconfig') };
  }

  /** The API server with the CRDs, the namespaces `k8or-system` and {@link NS}, and the engine with every provider (a resync an hour away: every look is one a test asks for). */
  async start(clusterId: string): Promise<void> {
    this.#sandbox = await startSandbox({ port: 0, kubeconfigPath: join(this.#dir, 'kubeconfig'), logLevel: 'warn' });
    this.kubeConfig.loadFromString(this.#sandbox.kubeconfig);
    await installCrds(this.kubeConfig);
    const core = this.kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['k8or-system', NS]) await core.createNamespace({ body: { metadata: { name } } });
    const lines = this.#logLines;
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
        done();
      },
    });
    this.#engine = new Engine({
      kubeConfig: this.kubeConfig,
      providers: new Map([awsProvider, gcpProvider, azureProvider].map((provider) => [provider.provider, provider])),
      clusterId,
      secretsNamespace: 'k8or-system',
      resyncPeriodMs: 3_600_000,
      logger: createLogger({ level: 'info', destination }),
    });
    await this.#engine.start();
  }

  async stop(): Promise<void> {
    await this.#engine?.stop();
    await this.#sandbox?.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }

  custom(): CustomObjectsApi {
    return this.kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async createSecret(name: string, stringData: Record<string, string>): Promise<void> {
    await this.kubeConfig.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: 'k8or-system', body: { metadata: { name }, stringData } });
  }

  async createProviderConfig(name: string, spec: Record<string, unknown>): Promise<void> {
    await this.custom().createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body: { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name }, spec } });
  }

  async get<T extends ManagedResource>(kind: ManagedKindName, name: string): Promise<T> {
    return (await this.custom().getNamespacedCustomObject({ group: 'k8or.io', version: 'v1alpha1', namespace: NS, plural: KINDS[kind].plural, name })) as T;
  }

  /** Waits until the object's current generation is handled and `accept` takes it. */
  async until<T extends ManagedResource>(kind: ManagedKindName, name: string, what: string, accept: (object: T) => boolean): Promise<T> {
    return await waitFor(
      `${name}: ${what}`,
      async () => ((object) => (object.status?.observedGeneration === object.metadata.generation && accept(object) ? object : undefined))(await this.get<T>(kind, name)),
      WAIT_MS,
    );
  }

  async inSync<T extends ManagedResource>(kind: ManagedKindName, name: string): Promise<T> {
    return await this.until<T>(kind, name, 'in sync', (object) => synced(object)?.status === 'True');
  }

  /** Creates the object in {@link NS} on `providerConfig` and waits until it is in sync. */
  async create<T extends ManagedResource>(kind: ManagedKindName, name: string, providerConfig: string, spec: Omit<T['spec'], 'providerConfigRef'>): Promise<T> {
    await this.custom().createNamespacedCustomObject({
      group: 'k8or.io',
      version: 'v1alpha1',
      namespace: NS,
      plural: KINDS[kind].plural,
      body: { apiVersion: API_VERSION, kind, metadata: { name }, spec: { providerConfigRef: { name: providerConfig }, ...spec } },
    });
    return await this.inSync<T>(kind, name);
  }

  /** A merge patch of the object, as a user's `kubectl patch --type merge` sends it. */
  async patch(kind: ManagedKindName, name: string, body: Record<string, unknown>): Promise<void> {
    const user = new KubeRest(this.kubeConfig);
    try {
      await user.patch(k8orPath(kind, NS, name), body);
    } finally {
      user.close();
    }
  }

  /** The object's Events of one reason, as `kubectl get events --field-selector reason=...` lists them. */
  async eventsOf(name: string, reason: string): Promise<CoreV1Event[]> {
    return (await this.kubeConfig.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name},reason=${reason}` })).items;
  }

  /** The first Event of one reason, waited for. */
  async event(name: string, reason: string): Promise<CoreV1Event> {
    const [event] = await waitFor(`${name}: a ${reason} Event`, async () => ((events) => (events.length > 0 ? events : undefined))(await this.eventsOf(name, reason)), WAIT_MS);
    assert.ok(event);
    return event;
  }

  /** The operator's cloud-write log lines for the object. */
  writesOf(name: string): CloudWriteRecord[] {
    return this.#logLines
      .map((line) => JSON.parse(line) as CloudWriteRecord & { msg: string })
      .filter((record) => record.msg === CLOUD_WRITE_MESSAGE && record.object === `${NS}/${name}`);
  }

  /** `k8or reconcile KIND/NAME --wait`: a drift check now, as a user asks for one; the object as it is after. */
  async reconcileNow<T extends ManagedResource>(kind: ManagedKindName, name: string): Promise<T> {
    const checked = await k8or(['reconcile', `${KINDS[kind].singular}/${name}`, '-n', NS, '--wait', String(WAIT_MS / 1000)], { env: this.env });
    assert.equal(checked.code, 0, checked.stderr);
    return await this.get<T>(kind, name);
  }

  /** `k8or approve KIND/NAME`. */
  async approve(kind: ManagedKindName, name: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return await k8or(['approve', `${KINDS[kind].singular}/${name}`, '-n', NS], { env: this.env });
  }
}
