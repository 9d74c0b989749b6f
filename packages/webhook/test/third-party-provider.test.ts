// A provider published as its own package, outside this workspace, works
// without any change to @k8or/api: `k8or-provider-foo` is written to a temp
// directory (package.json + plain JS importing @k8or/core), loaded by name with
// a resolution path as the operator loads installed providers, and then used
// by the webhook's validation and defaulting and by the engine.
import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { API_VERSION, allCrds } from '@k8or/api';
import { Engine, KubeRest, installCrds, k8orPath, loadedProviders, type ProviderPlugin } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { KubeConfig } from '@kubernetes/client-node';
import { Container, type ContainerModule } from 'inversify';
import { reviewObject, staticContext } from '@k8or/webhook';

const PACKAGE_JSON = { name: 'k8or-provider-foo', version: '1.0.0', type: 'module', main: 'index.js', peerDependencies: { '@k8or/core': '*' } };

// Everything a third party writes: a store (its "cloud"), a connector, naming rules, a settings schema.
const INDEX_JS = `
import { createHash } from 'node:crypto';
import { NotOwnedError, providerModule } from '@k8or/core';

/** The foo cloud: buckets by name, with tags. */
export const store = new Map();

const hash = (...parts) => createHash('sha256').update(parts.join('\\u0000')).digest('hex').slice(0, 10);

class FooBucketClient {
  constructor(context) { this.context = context; }
  get name() { return this.context.externalName; }
  async observe(bucket, call) {
    call.signal.throwIfAborted();
    const found = store.get(this.name);
    if (!found) return { exists: false, upToDate: false, ready: false };
    const diff = [];
    if ((bucket.spec.versioning ?? false) !== found.versioning) diff.push({ field: 'spec.versioning', desired: bucket.spec.versioning ?? false, actual: found.versioning });
    const ownerTags = Object.fromEntries(Object.entries(found.tags).filter(([key]) => key.startsWith('k8or.io/')));
    return { exists: true, ready: true, upToDate: diff.length === 0, diff, ownerTags, atProvider: { id: 'foo://' + this.name, location: found.zone } };
  }
  async create(bucket, call) {
    call.signal.throwIfAborted();
    const found = store.get(this.name);
    if (found) {
      if (Object.entries(this.context.ownerTags).every(([k, v]) => found.tags[k] === v)) return;
      throw new NotOwnedError('foo bucket "' + this.name + '" belongs to someone else', { code: 'Taken' });
    }
    // Tags go in with the create: nothing can leave an untagged bucket.
    store.set(this.name, { versioning: bucket.spec.versioning ?? false, tags: { ...this.context.ownerTags }, zone: this.context.providerConfig.spec.settings.zone });
  }
  async update(bucket, _observation, call) {
    call.signal.throwIfAborted();
    const found = store.get(this.name);
    found.versioning = bucket.spec.versioning ?? false;
    found.tags = { ...found.tags, ...this.context.ownerTags };
  }
  async delete(_bucket, call) {
    call.signal.throwIfAborted();
    store.delete(this.name);
  }
}

export const fooProvider = {
  provider: 'foo',
  packageName: 'k8or-provider-foo',
  connectors: { Bucket: { connect: async (_bucket, context) => new FooBucketClient(context) } },
  naming: {
    Bucket: {
      validate: (name, field) => (/^foo-[a-z0-9]{10}$/.test(name) ? [] : [{ field, rule: 'foo.name', message: 'foo bucket names are "foo-" and 10 lowercase letters or digits' }]),
      defaultName: ({ clusterId, namespace, name }) => 'foo-' + hash(clusterId, namespace, name),
    },
  },
  settingsSchema: {
    type: 'object',
    description: 'Settings of the foo cloud.',
    properties: { zone: { type: 'string', enum: ['north', 'south'], description: 'Where foo keeps the data.' } },
    required: ['zone'],
    additionalProperties: false,
  },
  validation: { validate: () => ({ violations: [], warnings: [] }) },
};

export default providerModule(fooProvider);
`;

const here = dirname(fileURLToPath(import.meta.url));
const coreDirectory = join(here, '..', '..', 'core');

describe('a third-party provider package from outside the workspace', () => {
  let root: string;
  let foo: ProviderPlugin;
  let store: Map<string, { versioning: boolean; tags: Record<string, string>; zone: string }>;
  let sandbox: Sandbox;
  let user: KubeRest;
  let engine: Engine;

  before(async () => {
    // An application directory with k8or-provider-foo installed beside @k8or/core, as npm would install both.
    root = await mkdtemp(join(tmpdir(), 'k8or-third-party-'));
    const packageDirectory = join(root, 'node_modules', 'k8or-provider-foo');
    await mkdir(packageDirectory, { recursive: true });
    await mkdir(join(root, 'node_modules', '@k8or'), { recursive: true });
    await symlink(coreDirectory, join(root, 'node_modules', '@k8or', 'core'), 'dir');
    await writeFile(join(packageDirectory, 'package.json'), JSON.stringify(PACKAGE_JSON));
    await writeFile(join(packageDirectory, 'index.js'), INDEX_JS);
    await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'app', private: true }));

    // Loaded by name, resolved from the application directory, as the operator loads providers.
    const resolved = createRequire(join(root, 'package.json')).resolve('k8or-provider-foo');
    const loaded = (await import(pathToFileURL(resolved).href)) as { default: ContainerModule; store: typeof store };
    const container = new Container();
    await container.load(loaded.default);
    const providers = loadedProviders(container);
    foo = providers.get('foo') as ProviderPlugin;
    store = loaded.store;
    assert.ok(foo, 'the package bound its plugin under provider "foo"');

    sandbox = await startSandbox();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig, allCrds({ settingsSchemas: { foo: foo.settingsSchema ?? {} } }));
    user = new KubeRest(kubeConfig, { userAgent: 'k8or-test-user' });
    await waitFor('CRDs served', async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    engine = new Engine({ kubeConfig, providers, clusterId: 'third-party-test', workers: 2, pollIntervalMs: 200, resyncFloorMs: 100, operatorNamespace: 'k8or-system' });
    await engine.start();
  });
  after(async () => {
    await engine?.stop();
    user?.close();
    await sandbox?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const providerConfig = (settings: Record<string, unknown>) => ({ apiVersion: API_VERSION, kind: 'ProviderConfig' as const, metadata: { name: 'foo' }, spec: { provider: 'foo', settings } });
  const bucket = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: API_VERSION, kind: 'Bucket', metadata: { name, namespace: 'apps' }, spec: { providerConfigRef: { name: 'foo' }, ...spec } });

  it("is validated and defaulted by the webhook with the package's own naming rules and settings schema", () => {
    const context = staticContext({ providers: [foo], providerConfigs: [providerConfig({ zone: 'north' })], clusterId: 'third-party-test' });
    const admitted = reviewObject(bucket('photos'), context);
    assert.deepEqual(admitted.violations, []);
    const name = (admitted.object as { spec: { name: string } }).spec.name;
    assert.match(name, /^foo-[a-z0-9]{10}$/, 'the default name follows foo\'s rules');
    assert.deepEqual(
      reviewObject(bucket('photos', { name: 'Not_A_Foo_Name' }), context).violations.map((v) => `${v.field} ${v.rule}`),
      ['spec.name foo.name'],
    );
    const badSettings = reviewObject(providerConfig({ zone: 'east', colour: 'red' }), context).violations.map((v) => `${v.field} ${v.rule}`);
    assert.deepEqual(badSettings.sort(), ['spec.settings.colour settings.schema.additionalProperties', 'spec.settings.zone settings.schema.enum']);
  });

  it('shows its settings in the CRD, so kubectl explain lists them', async () => {
    const crd = await user.get<{ spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: { settings: { properties?: Record<string, unknown> } } } } } } }[] } }>(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/providerconfigs.k8or.io',
    );
    const settings = crd?.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties.settings;
    assert.ok(settings?.properties?.['zone'], `spec.settings lists foo's zone: ${JSON.stringify(settings)}`);
  });

  it('reconciles a Bucket through the engine, and deletes it', async () => {
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig({ zone: 'south' }));
    await user.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
    await user.create(k8orPath('Bucket', 'apps'), bucket('photos', { versioning: true }));
    const ready = await waitFor('the foo Bucket Ready and Synced', async () => {
      const current = await user.get<{ spec: { name?: string }; status?: { conditions?: { type: string; status: string }[] } }>(k8orPath('Bucket', 'apps', 'photos'));
      const conditions = current?.status?.conditions ?? [];
      return conditions.some((c) => c.type === 'Ready' && c.status === 'True') && conditions.some((c) => c.type === 'Synced' && c.status === 'True') ? current : undefined;
    });
    const name = ready.spec.name ?? '';
    assert.match(name, /^foo-[a-z0-9]{10}$/);
    assert.deepEqual(store.get(name)?.zone, 'south');
    assert.equal(store.get(name)?.tags['k8or.io/cluster'], 'third-party-test');
    await user.delete(k8orPath('Bucket', 'apps', 'photos'));
    await waitFor('the foo bucket deleted', () => !store.has(name));
  });
});
