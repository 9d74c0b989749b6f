import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Annotations } from '@k8or/api';
import { Container } from 'inversify';
import { CoreMetrics, HealthChecks, KubeEventRecorder, KubeRest, Reasons, corePath, k8orPath, providerModule, type Engine } from '@k8or/core';
import { inMemoryProviderPlugin } from '@k8or/core/testing';
import { World, condition, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('controllers and the engine as a whole', () => {
  let world: World;

  before(async () => {
    world = await World.start();
  });
  after(async () => world?.stop());

  it('reports readiness once its informers have synced, and reconcile and cloud-call metrics', async () => {
    const health = new HealthChecks();
    const metrics = new CoreMetrics();
    const engine = await world.startEngine({ health, metrics, workers: { Bucket: 3, Table: 2 } });
    assert.equal(health.readyz().ok, true);
    assert.equal(health.healthz().ok, true);
    assert.equal(engine.controllers.get('Bucket')?.workers, 3);
    assert.equal(engine.controllers.get('Table')?.workers, 2);

    const ns = await world.newNamespace();
    await world.createBucket(ns, 'measured');
    await world.waitForBucket(ns, 'measured', 'Ready', isReadyAndSynced);
    const text = await metrics.metrics();
    assert.match(text, /controller_runtime_reconcile_total\{controller="bucket",result="requeue_after"\} [1-9]/);
    assert.match(text, /k8or_cloud_calls_total\{provider="aws",operation="create",result="success"\} 1/);
    assert.match(text, /workqueue_adds_total\{name="bucket"\} [1-9]/);
    assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="bucket"\} 3/);
    await engine.stop();
    world.engines.splice(world.engines.indexOf(engine), 1);
  });

  it("caches only the Secrets of the operator's own namespace unless told otherwise", async () => {
    const from = world.sandbox.requestLog.length;
    const engine = await world.startEngine({ operatorNamespace: 'k8or-system', kinds: ['Bucket'] });
    const secretReads = () => world.sandbox.requestLog.slice(from).filter((r) => r.resource === 'secrets' && (r.verb === 'list' || r.verb === 'watch'));
    await waitFor('the Secret informer listed', () => secretReads().length > 0);
    assert.deepEqual([...new Set(secretReads().map((r) => r.namespace ?? '(all namespaces)'))], ['k8or-system']);
    await engine.stop();
    world.engines.splice(world.engines.indexOf(engine), 1);
  });

  it('runs the provider plugins loaded into an inversify container', async () => {
    const container = new Container();
    await container.load(providerModule(inMemoryProviderPlugin(world.cloud)));
    const engine = await world.startEngine({ providers: container });
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'from-container');
    await world.waitForBucket(ns, 'from-container', 'Ready', isReadyAndSynced);
    await engine.stop();
    world.engines.splice(world.engines.indexOf(engine), 1);
  });

  it('finishes the reconcile in flight when stopped, then stops taking work', async () => {
    const engine = await world.startEngine();
    const ns = await world.newNamespace();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let inCreate = false;
    const removeHook = world.cloud.onCall(async (call) => {
      if (call.operation === 'create' && call.name.startsWith(`${ns}-`)) {
        inCreate = true;
        await held; // a slow cloud
      }
    });
    await world.createBucket(ns, 'slow');
    await waitFor('the create call in flight', () => inCreate);

    const stopped = engine.stop();
    await sleep(100);
    release();
    await stopped;
    removeHook();
    world.engines.splice(world.engines.indexOf(engine), 1);
    // The drained reconcile got to write its markers and status before the engine let go.
    const bucket = await world.bucket(ns, 'slow');
    assert.ok(bucket?.metadata.annotations?.[Annotations.createSucceeded]);
    assert.equal(condition(bucket, 'Ready')?.status, 'True');

    const calls = world.cloud.calls.length;
    await world.createBucket(ns, 'after-stop');
    await sleep(500);
    assert.equal(world.cloud.calls.length, calls, 'a stopped engine makes no more calls');
    await world.startEngine();
    await world.waitForBucket(ns, 'after-stop', 'Ready under a new engine', isReadyAndSynced);
  });

  it('checks for drift on the period a resource asks for with k8or.io/resync-period', async () => {
    const ns = await world.newNamespace();
    // The engine resyncs hourly; this resource asks for every 300 ms.
    await world.createBucket(ns, 'watched', { versioning: true }, { [Annotations.resyncPeriod]: '300ms' });
    const bucket = await world.waitForBucket(ns, 'watched', 'Ready', isReadyAndSynced);
    const cloudBucket = world.cloud.buckets.get(bucket.spec.name ?? '');
    assert.ok(cloudBucket);
    cloudBucket.versioning = false;
    await waitFor('drift repaired on the short period', () => cloudBucket.versioning);
  });

  it('does not rewrite an unchanged outputs ConfigMap on resync', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'published', { writeOutputsTo: { name: 'published-outputs' } }, { [Annotations.resyncPeriod]: '200ms' });
    const bucket = await world.waitForBucket(ns, 'published', 'Ready', isReadyAndSynced);
    const configMap = await waitFor('outputs', () => world.configMap(ns, 'published-outputs'));
    const version = (configMap.metadata as { resourceVersion?: string }).resourceVersion;
    const observes = world.cloud.callCount({ operation: 'observe', name: bucket.spec.name ?? '' });
    await waitFor('several resyncs', () => world.cloud.callCount({ operation: 'observe', name: bucket.spec.name ?? '' }) >= observes + 3);
    const again = await world.configMap(ns, 'published-outputs');
    assert.equal((again?.metadata as { resourceVersion?: string }).resourceVersion, version);
  });

  it('aggregates repeated Events: one create, the first repeat counted at once, then at most one count bump per interval', async () => {
    const ns = await world.newNamespace();
    const rest = new KubeRest(world.kubeConfig, { userAgent: 'k8or-events-test' });
    let now = Date.parse('2026-01-01T00:00:00Z');
    const recorder = new KubeEventRecorder(rest, { aggregationIntervalMs: 60_000, now: () => new Date(now) });
    const object = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', namespace: ns, name: 'flaky', uid: 'uid-1' };
    const from = world.sandbox.requestLog.length;
    for (let i = 0; i < 5; i++) {
      await recorder.record(object, 'Warning', Reasons.CannotObserveExternalResource, 'ThrottlingException: Rate exceeded');
      now += 1_000;
    }
    now += 60_000;
    await recorder.record(object, 'Warning', Reasons.CannotObserveExternalResource, 'ThrottlingException: Rate exceeded');
    await recorder.record(object, 'Normal', Reasons.CreatedExternalResource, 'Created');
    // Another recorder (the operator after a restart) names its Events apart from the first one's.
    const restarted = new KubeEventRecorder(rest, { now: () => new Date(now) });
    await restarted.record(object, 'Normal', Reasons.CreatedExternalResource, 'Created again');
    rest.close();

    const writes = world.sandbox.requestLog.slice(from).filter((r) => r.userAgent === 'k8or-events-test').map((r) => `${r.verb} ${r.resource}`);
    // create (1), the first repeat (2) at once; the three after it wait for the interval and go with the sixth
    assert.deepEqual(writes, ['create events', 'patch events', 'patch events', 'create events', 'create events']);
    const events = await world.events(ns, 'flaky');
    const throttled = events.find((e) => e.reason === Reasons.CannotObserveExternalResource);
    assert.equal(throttled?.count, 6);
    assert.equal(throttled?.type, 'Warning');
    assert.equal(events.length, 3);
    const names = events.map((e) => e.metadata.name);
    assert.equal(new Set(names).size, 3);
    for (const name of names) assert.match(name, /^flaky\.[0-9a-f]{16}$/);
  });

  it('reconciles as soon as a missing ProviderConfig or Secret appears, and when the ProviderConfig changes', async () => {
    // The engine resyncs hourly here, so only the watches can bring these changes in.
    // The bucket names its ProviderConfig itself. Through a namespace annotation, a bucket whose watch event
    // outran its new namespace's could be reconciled once with the default ProviderConfig (no credentials).
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'waiting', { providerConfigRef: { name: 'team-config' } });
    const noConfig = await world.waitForBucket(ns, 'waiting', 'ProviderConfigNotFound', (b) => condition(b, 'Synced')?.reason === Reasons.ProviderConfigNotFound);
    assert.match(condition(noConfig, 'Synced')?.message ?? '', /"team-config"/);

    // Credentials live in the operator's namespace: the only one whose Secrets the engine caches by default.
    const secrets = 'k8or-system';
    await world.ensureNamespace(secrets);
    await world.createProviderConfig('team-config', { credentials: { source: 'Secret', secretRef: { namespace: secrets, name: `${ns}-credentials` } } });
    await world.waitForBucket(ns, 'waiting', 'CredentialsSecretNotFound', (b) => condition(b, 'Synced')?.reason === Reasons.CredentialsSecretNotFound);

    const secret = (name: string, accessKeyId: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: secrets },
      data: { accessKeyId: Buffer.from(accessKeyId).toString('base64') },
    });
    await world.user.create(corePath('secrets', secrets), secret(`${ns}-credentials`, 'AKIAFIRST'));
    const ready = await world.waitForBucket(ns, 'waiting', 'Ready', isReadyAndSynced);
    const externalName = ready.spec.name ?? '';
    assert.ok(world.cloud.buckets.has(externalName));
    // Only this bucket's own calls: other tests' resources reconcile in the same cloud meanwhile.
    const ownCalls = () => world.cloud.calls.filter((c) => c.kind === 'Bucket' && c.name === externalName);
    assert.ok(ownCalls().length > 0);
    assert.ok(ownCalls().every((c) => c.credentials?.accessKeyId === 'AKIAFIRST'));

    const before = ownCalls().length;
    await world.user.create(corePath('secrets', secrets), secret(`${ns}-rotated`, 'AKIASECOND'));
    await world.user.patch(k8orPath('ProviderConfig', undefined, 'team-config'), { spec: { credentials: { secretRef: { name: `${ns}-rotated` } } } });
    await waitFor('a reconcile of this bucket with the new credentials', () => ownCalls().slice(before).some((c) => c.credentials?.accessKeyId === 'AKIASECOND'));
  });

  it('watches one namespace only when scoped', async () => {
    const inside = await world.newNamespace();
    const outside = await world.newNamespace();
    const scoped: Engine = await world.startEngine({ namespace: inside, kinds: ['Bucket'] });
    for (const engine of world.engines.filter((e) => e !== scoped)) await engine.stop();
    world.engines.splice(0, world.engines.length, scoped);
    await world.createBucket(outside, 'ignored');
    await world.createBucket(inside, 'handled');
    await world.waitForBucket(inside, 'handled', 'Ready', isReadyAndSynced);
    await sleep(300);
    const ignored = await world.bucket(outside, 'ignored');
    assert.equal(ignored?.status, undefined);
    assert.equal(ignored?.metadata.finalizers, undefined);
  });
});

describe('a cloud that takes its time', () => {
  let world: World;

  before(async () => {
    world = await World.start({ observesUntilActive: 3 });
    await world.startEngine({ pollIntervalMs: 100 });
  });
  after(async () => world?.stop());

  it('reports Creating while the table is not ACTIVE, polls, and turns Ready', async () => {
    const ns = await world.newNamespace();
    await world.createTable(ns, 'slow-table');
    const creating = await waitFor('Creating', async () => {
      const t = await world.table(ns, 'slow-table');
      return t && condition(t, 'Ready')?.reason === Reasons.Creating ? t : undefined;
    });
    assert.equal(condition(creating, 'Ready')?.status, 'False');
    assert.match(condition(creating, 'Ready')?.message ?? '', /CREATING/);
    const ready = await waitFor('Ready', async () => {
      const t = await world.table(ns, 'slow-table');
      return t && isReadyAndSynced(t) ? t : undefined;
    });
    assert.equal(ready.status?.atProvider?.state, 'ACTIVE');
  });
});
