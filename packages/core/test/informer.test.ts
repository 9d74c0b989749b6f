import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { API_VERSION, GROUP, VERSION, type Bucket, type ProviderConfig } from '@k8or/api';
import { createInformer, informersSynced, installCrds, LAST_APPLIED_ANNOTATION, NAMESPACE_INDEX, objectKey, type Informer, type InformerOptions, type WatchEndReason } from '@k8or/core';
import { waitFor as pollUntil } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

interface Recorded {
  type: 'add' | 'update' | 'delete' | 'resync';
  key: string;
  data?: Record<string, string>;
  oldData?: Record<string, string>;
}

/** Polls until `condition` holds (every 10 ms, 30 s at most). */
const waitFor = (what: string, condition: () => boolean, timeoutMs = 30_000): Promise<boolean> => pollUntil(what, condition, timeoutMs, 10);

describe('informer against the sandbox API server', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let core: CoreV1Api;
  const informers: { stop(): void }[] = [];
  let namespaceCounter = 0;

  before(async () => {
    sandbox = await startSandbox({ recordRequests: true });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    core = kubeConfig.makeApiClient(CoreV1Api);
  });

  after(async () => {
    for (const informer of informers) informer.stop();
    await sandbox?.stop();
  });

  async function freshNamespace(): Promise<string> {
    const name = `informer-${++namespaceCounter}`;
    await core.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  function createConfigMap(namespace: string, name: string, data: Record<string, string>, labels?: Record<string, string>): Promise<V1ConfigMap> {
    return core.createNamespacedConfigMap({ namespace, body: { metadata: { name, namespace, labels }, data } });
  }

  async function updateConfigMap(namespace: string, name: string, data: Record<string, string>, labels?: Record<string, string>): Promise<V1ConfigMap> {
    const current = await core.readNamespacedConfigMap({ namespace, name });
    current.data = data;
    if (labels) current.metadata = { ...current.metadata, labels };
    return core.replaceNamespacedConfigMap({ namespace, name, body: current });
  }

  function deleteConfigMap(namespace: string, name: string): Promise<unknown> {
    return core.deleteNamespacedConfigMap({ namespace, name });
  }

  /** An informer on ConfigMaps that records every event and every way a watch ended. */
  function configMapInformer(options: Partial<InformerOptions<V1ConfigMap>> = {}): {
    informer: Informer<V1ConfigMap>;
    events: Recorded[];
    watchEnds: WatchEndReason[];
    lists: () => number;
  } {
    const events: Recorded[] = [];
    const watchEnds: WatchEndReason[] = [];
    let lists = 0;
    const informer = createInformer<V1ConfigMap>({
      kubeConfig,
      group: '',
      version: 'v1',
      plural: 'configmaps',
      backoffInitialMs: 50,
      backoffMaxMs: 500,
      metrics: { listed: () => lists++, watchEnded: (reason) => watchEnds.push(reason), event: () => {} },
      ...options,
    });
    const record =
      (type: Recorded['type']) =>
      (obj: V1ConfigMap, old?: V1ConfigMap): void => {
        events.push({ type, key: objectKey(obj), data: obj.data, oldData: old?.data });
      };
    informer.on('add', record('add'));
    informer.on('update', record('update'));
    informer.on('delete', record('delete'));
    informer.on('resync', record('resync'));
    informers.push(informer);
    return { informer, events, watchEnds, lists: () => lists };
  }

  /** The server's truth for a namespace, as key -> data. */
  async function serverState(namespace: string): Promise<Record<string, Record<string, string> | undefined>> {
    const list = await core.listNamespacedConfigMap({ namespace });
    return Object.fromEntries(list.items.map((cm) => [objectKey(cm), cm.data]));
  }

  function same(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
    const canonical = (state: Record<string, unknown>): string => JSON.stringify(Object.entries(state).sort(([x], [y]) => x.localeCompare(y)));
    return canonical(a) === canonical(b);
  }

  function cacheState(informer: Informer<V1ConfigMap>, namespace: string): Record<string, Record<string, string> | undefined> {
    return Object.fromEntries(informer.cache.byIndex(NAMESPACE_INDEX, namespace).map((cm) => [objectKey(cm), cm.data]));
  }

  it('lists what exists before start resolves, and reports each object as added', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'photos', { bucket: 'photos' });
    await createConfigMap(namespace, 'logs', { bucket: 'logs' });
    const { informer, events } = configMapInformer({ namespace });

    await informer.start();
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(informer.cache.keys().sort(), [`${namespace}/logs`, `${namespace}/photos`]);
    assert.deepEqual(events.map((e) => `${e.type} ${e.key}`).sort(), [`add ${namespace}/logs`, `add ${namespace}/photos`]);
    assert.equal(informer.cache.get(`${namespace}/photos`)?.kind, 'ConfigMap', 'listed items carry their kind like watched ones');
    assert.ok(informer.lastResourceVersion());
  });

  it('reports adds, updates with the old object, and deletes as they happen', async () => {
    const namespace = await freshNamespace();
    const { informer, events } = configMapInformer({ namespace });
    await informer.start();

    await createConfigMap(namespace, 'config', { color: 'blue' });
    await waitFor('add', () => events.some((e) => e.type === 'add'));
    await updateConfigMap(namespace, 'config', { color: 'green' });
    await waitFor('update', () => events.some((e) => e.type === 'update'));
    await deleteConfigMap(namespace, 'config');
    await waitFor('delete', () => events.some((e) => e.type === 'delete'));

    assert.deepEqual(events, [
      { type: 'add', key: `${namespace}/config`, data: { color: 'blue' }, oldData: undefined },
      { type: 'update', key: `${namespace}/config`, data: { color: 'green' }, oldData: { color: 'blue' } },
      { type: 'delete', key: `${namespace}/config`, data: { color: 'green' }, oldData: undefined },
    ]);
    assert.equal(informer.cache.get(`${namespace}/config`), undefined);
  });

  it('caches listed and watched objects without managedFields, everything else kept', async () => {
    const namespace = await freshNamespace();
    const stored = await createConfigMap(namespace, 'listed', { color: 'blue' }, { team: 'a' });
    assert.ok(stored.metadata?.managedFields?.length, 'the API server keeps managedFields: the transform has something to drop');
    const { informer, events } = configMapInformer({ namespace });
    await informer.start();

    const listed = informer.cache.get(`${namespace}/listed`);
    assert.equal(listed?.metadata?.managedFields, undefined);
    assert.deepEqual(listed?.data, { color: 'blue' });
    assert.deepEqual(listed?.metadata?.labels, { team: 'a' });
    assert.equal(listed?.metadata?.resourceVersion, stored.metadata?.resourceVersion);
    assert.equal(listed?.metadata?.uid, stored.metadata?.uid);

    const updated = await updateConfigMap(namespace, 'listed', { color: 'green' }, { team: 'b' });
    await waitFor('the update', () => events.some((e) => e.type === 'update' && e.data?.color === 'green'));
    const watched = informer.cache.get(`${namespace}/listed`);
    assert.equal(watched?.metadata?.managedFields, undefined);
    assert.deepEqual(watched?.metadata?.labels, { team: 'b' });
    assert.equal(watched?.metadata?.resourceVersion, updated.metadata?.resourceVersion);
  });

  it("caches objects without kubectl apply's last-applied-configuration, their other annotations kept", async () => {
    const namespace = await freshNamespace();
    // What `kubectl apply` writes: the whole applied object again, as JSON text in an annotation.
    const applied = (color: string) => ({
      metadata: {
        name: 'applied',
        namespace,
        annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace }, data: { color } }), 'k8or.io/paused': 'true' },
      },
      data: { color },
    });
    await core.createNamespacedConfigMap({ namespace, body: applied('blue') });
    const { informer, events } = configMapInformer({ namespace });
    await informer.start();

    const listed = informer.cache.get(`${namespace}/applied`);
    assert.deepEqual(listed?.metadata?.annotations, { 'k8or.io/paused': 'true' });
    assert.deepEqual(listed?.data, { color: 'blue' });

    const current = await core.readNamespacedConfigMap({ namespace, name: 'applied' });
    await core.replaceNamespacedConfigMap({ namespace, name: 'applied', body: { ...current, ...applied('green'), metadata: { ...current.metadata, ...applied('green').metadata } } });
    await waitFor('the update', () => events.some((e) => e.type === 'update' && e.data?.color === 'green'));
    assert.deepEqual(informer.cache.get(`${namespace}/applied`)?.metadata?.annotations, { 'k8or.io/paused': 'true' });
    const stored = await core.readNamespacedConfigMap({ namespace, name: 'applied' });
    assert.ok(stored.metadata?.annotations?.[LAST_APPLIED_ANNOTATION]?.includes('green'), 'the API server keeps it: only the cache drops it');
  });

  it('applies a transform of its own to every object before caching and handlers', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'trimmed', { keep: 'yes', drop: 'no' });
    const { informer, events } = configMapInformer({
      namespace,
      transform: (cm: V1ConfigMap) => ({ ...cm, data: { keep: cm.data?.keep ?? '' } }),
    });
    await informer.start();
    assert.deepEqual(informer.cache.get(`${namespace}/trimmed`)?.data, { keep: 'yes' });
    await createConfigMap(namespace, 'watched', { keep: 'too', drop: 'no' });
    await waitFor('the add', () => events.some((e) => e.key === `${namespace}/watched`));
    assert.deepEqual(events.find((e) => e.key === `${namespace}/watched`)?.data, { keep: 'too' });
    assert.ok(informer.cache.get(`${namespace}/watched`)?.metadata?.managedFields, 'a transform of its own replaces the default');
  });

  it('reports a handler that throws and keeps delivering events', async () => {
    const namespace = await freshNamespace();
    const { informer, events } = configMapInformer({ namespace });
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    informer.on('add', (cm) => {
      if (cm.metadata?.name === 'poison') throw new Error('handler bug');
    });
    await informer.start();
    await createConfigMap(namespace, 'poison', { v: '1' });
    await createConfigMap(namespace, 'next', { v: '1' });
    await waitFor('the next add', () => events.some((e) => e.key === `${namespace}/next`));
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /handler bug/);
    assert.ok(informer.cache.get(`${namespace}/poison`), 'the object is cached all the same');
  });

  it('reselects: lists again by the new label selector, emitting only the difference, and watches by it', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'own', { v: '1' }, { shard: 'a' });
    await createConfigMap(namespace, 'adopted', { v: '1' }, { shard: 'x' });
    await createConfigMap(namespace, 'other', { v: '1' }, { shard: 'b' });
    const { informer, events, lists } = configMapInformer({ namespace, labelSelector: 'shard=a' });
    await informer.start();
    assert.deepEqual(informer.cache.keys(), [`${namespace}/own`]);

    events.length = 0;
    informer.reselect('shard in (a,x)');
    await waitFor('the adopted object listed', () => informer.cache.get(`${namespace}/adopted`) !== undefined);
    assert.deepEqual(events.map((e) => `${e.type} ${e.key}`), [`add ${namespace}/adopted`], 'the object both select kept its place without an event');
    assert.equal(lists(), 2);
    // Watched by the new selector.
    await updateConfigMap(namespace, 'adopted', { v: '2' }, { shard: 'x' });
    await waitFor('the adopted object updated', () => informer.cache.get(`${namespace}/adopted`)?.data?.v === '2');

    events.length = 0;
    informer.reselect('shard=a');
    await waitFor('the adopted object gone', () => informer.cache.get(`${namespace}/adopted`) === undefined);
    assert.deepEqual(events.map((e) => `${e.type} ${e.key}`), [`delete ${namespace}/adopted`]);
    await updateConfigMap(namespace, 'adopted', { v: '3' }, { shard: 'x' });
    await updateConfigMap(namespace, 'own', { v: '2' }, { shard: 'a' });
    await waitFor('its own object updated', () => informer.cache.get(`${namespace}/own`)?.data?.v === '2');
    assert.deepEqual(informer.cache.keys(), [`${namespace}/own`], 'no longer watches the adopted label');
  });

  it('watches a second selection beside its own without ending its own watch, keeps an object that moved into its own, and drops only that selection\'s objects when told', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'own', { v: '1' }, { shard: 'a' });
    await createConfigMap(namespace, 'moving', { v: '1' }, { shard: 'x' });
    await createConfigMap(namespace, 'adopted', { v: '1' }, { shard: 'x' });
    await createConfigMap(namespace, 'other', { v: '1' }, { shard: 'b' });
    const { informer, events, watchEnds, lists } = configMapInformer({ namespace, labelSelector: 'shard=a' });
    await informer.start();
    const shardX = { labelSelector: 'shard=x', owns: (cm: V1ConfigMap) => cm.metadata?.labels?.['shard'] === 'x' };

    events.length = 0;
    informer.watchAlso([shardX]);
    await waitFor('the second selection listed', () => informer.cache.get(`${namespace}/moving`) !== undefined && informer.cache.get(`${namespace}/adopted`) !== undefined);
    assert.deepEqual(events.map((e) => `${e.type} ${e.key}`).sort(), [`add ${namespace}/adopted`, `add ${namespace}/moving`]);
    assert.equal(lists(), 2, 'one list of the second selection; its own not listed again');
    assert.deepEqual(watchEnds, [], 'its own watch went on');

    // Out of the second selection into its own (as a dead shard's object relabelled for this one):
    // whichever watch tells first, it ends cached as its own.
    await updateConfigMap(namespace, 'moving', { v: '2' }, { shard: 'a' });
    await updateConfigMap(namespace, 'adopted', { v: '2' }, { shard: 'x' });
    await updateConfigMap(namespace, 'own', { v: '2' }, { shard: 'a' });
    await waitFor('both watches past the changes', () => informer.cache.get(`${namespace}/adopted`)?.data?.v === '2' && informer.cache.get(`${namespace}/own`)?.data?.v === '2');
    await waitFor('the moved object cached as its own', () => informer.cache.get(`${namespace}/moving`)?.metadata?.labels?.['shard'] === 'a');
    assert.deepEqual(watchEnds, []);

    // Its own selection listed again (as after a 410 Gone): what the second selection holds stays.
    informer.reselect('shard in (a)');
    await waitFor('its own selection relisted', () => lists() === 3);
    assert.deepEqual(informer.cache.keys().sort(), [`${namespace}/adopted`, `${namespace}/moving`, `${namespace}/own`]);

    events.length = 0;
    informer.watchAlso([]);
    assert.deepEqual(events.map((e) => `${e.type} ${e.key}`), [`delete ${namespace}/adopted`], 'only what the second selection holds leaves');
    assert.deepEqual(informer.cache.keys().sort(), [`${namespace}/moving`, `${namespace}/own`]);
    await updateConfigMap(namespace, 'adopted', { v: '3' }, { shard: 'x' });
    await updateConfigMap(namespace, 'own', { v: '3' }, { shard: 'a' });
    await waitFor('its own object updated', () => informer.cache.get(`${namespace}/own`)?.data?.v === '3');
    assert.equal(informer.cache.get(`${namespace}/adopted`), undefined, 'no longer watched');
  });

  it('resumes after the server drops every watch and loses no change', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'kept', { v: '1' });
    await createConfigMap(namespace, 'changed', { v: '1' });
    await createConfigMap(namespace, 'removed', { v: '1' });
    // A long reconnect delay so the changes below happen while no watch is open.
    const { informer, events, watchEnds, lists } = configMapInformer({ namespace, backoffInitialMs: 2000, backoffMaxMs: 4000 });
    await informer.start();
    await waitFor('the first watch', () => sandbox.requestLog.some((r) => r.verb === 'watch' && r.namespace === namespace));

    sandbox.dropWatches();
    await updateConfigMap(namespace, 'changed', { v: '2' });
    await deleteConfigMap(namespace, 'removed');
    await createConfigMap(namespace, 'added', { v: '1' });

    const truth = await serverState(namespace);
    await waitFor('the cache to match the server', () => same(cacheState(informer, namespace), truth));
    assert.ok(watchEnds.length >= 1, 'the watch ended and was replaced');
    assert.equal(lists(), 1, 'resumed from its resourceVersion without relisting');
    const changes = events.filter((e) => e.type !== 'add' || e.key === `${namespace}/added`).map((e) => `${e.type} ${e.key}`);
    assert.deepEqual(changes.sort(), [`add ${namespace}/added`, `delete ${namespace}/removed`, `update ${namespace}/changed`]);
  });

  it('relists on 410 Gone and emits the difference so no change is lost', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'kept', { v: '1' });
    await createConfigMap(namespace, 'changed', { v: '1' });
    await createConfigMap(namespace, 'removed', { v: '1' });
    // A long reconnect delay, so the changes and the compaction below all happen while no watch is open.
    const { informer, events, watchEnds, lists } = configMapInformer({ namespace, backoffInitialMs: 5000, backoffMaxMs: 6000 });
    await informer.start();
    await waitFor('the first watch', () => sandbox.requestLog.some((r) => r.verb === 'watch' && r.namespace === namespace));
    const initialEvents = events.length;

    sandbox.dropWatches();
    await updateConfigMap(namespace, 'changed', { v: '2' });
    await deleteConfigMap(namespace, 'removed');
    await createConfigMap(namespace, 'added', { v: '1' });
    // The server forgets its history: resuming from the informer's resourceVersion now answers 410 Gone.
    sandbox.compactHistory();

    const truth = await serverState(namespace);
    await waitFor('the cache to match the server', () => same(cacheState(informer, namespace), truth));
    assert.ok(watchEnds.includes('gone'), `the resumed watch met 410 Gone (ends: ${watchEnds.join(', ')})`);
    assert.equal(lists(), 2, 'it relisted once');
    assert.deepEqual(
      events.slice(initialEvents).map((e) => `${e.type} ${e.key}`).sort(),
      [`add ${namespace}/added`, `delete ${namespace}/removed`, `update ${namespace}/changed`],
      'exactly the changes made while disconnected, nothing for the unchanged object',
    );
    const update = events.find((e) => e.type === 'update');
    assert.deepEqual(update?.oldData, { v: '1' });
    assert.deepEqual(update?.data, { v: '2' });
  });

  it('keeps a quiet informer\'s resourceVersion fresh with bookmarks, so a reconnect needs no relist', async () => {
    const quiet = await freshNamespace();
    const busy = await freshNamespace();
    const { informer, events, watchEnds, lists } = configMapInformer({ namespace: quiet });
    await informer.start();
    const listedAt = Number(informer.lastResourceVersion());

    // Elsewhere in the cluster, time moves on.
    const elsewhere = await createConfigMap(busy, 'noise', { v: '1' });
    const clusterVersion = Number(elsewhere.metadata?.resourceVersion);
    assert.ok(clusterVersion > listedAt);
    await waitFor('a bookmark to carry the newer resourceVersion', () => Number(informer.lastResourceVersion()) >= clusterVersion);
    assert.equal(events.length, 0, 'bookmarks are not events');

    // History older than now is forgotten: a resume from the listed version would be 410 Gone.
    sandbox.compactHistory();
    sandbox.dropWatches();
    await waitFor('the watch to be replaced', () => watchEnds.length >= 1);
    await createConfigMap(quiet, 'after-reconnect', { v: '1' });
    await waitFor('the add on the resumed watch', () => events.some((e) => e.key === `${quiet}/after-reconnect`));
    assert.equal(lists(), 1, 'resumed from the bookmark without relisting');
    assert.ok(!watchEnds.includes('gone'));
  });

  it('replaces a watch that stays silent', async () => {
    const namespace = await freshNamespace();
    const { informer, events, watchEnds } = configMapInformer({ namespace, watchInactivityMs: 300 });
    await informer.start();
    await waitFor('a silent watch to be replaced', () => watchEnds.includes('stalled'));
    await createConfigMap(namespace, 'after-stall', { v: '1' });
    await waitFor('the add on the new watch', () => events.some((e) => e.key === `${namespace}/after-stall`));
  });

  it('reconnects when the server ends a watch at its timeout', async () => {
    const namespace = await freshNamespace();
    const { informer, events, watchEnds } = configMapInformer({ namespace, watchTimeoutSeconds: 1 });
    await informer.start();
    await waitFor('the server to close a watch', () => watchEnds.length >= 1);
    await createConfigMap(namespace, 'after-timeout', { v: '1' });
    await waitFor('the add on the next watch', () => events.some((e) => e.key === `${namespace}/after-timeout`));
    assert.ok(!informer.cache.list().some((cm) => cm.metadata?.namespace !== namespace));
  });

  it('resyncs every cached object periodically', async () => {
    const namespace = await freshNamespace();
    await createConfigMap(namespace, 'a', { v: '1' });
    await createConfigMap(namespace, 'b', { v: '1' });
    const { informer, events } = configMapInformer({ namespace, resyncPeriodMs: 100 });
    await informer.start();
    await waitFor('two resync rounds', () => events.filter((e) => e.type === 'resync').length >= 4);
    const resynced = new Set(events.filter((e) => e.type === 'resync').map((e) => e.key));
    assert.deepEqual([...resynced].sort(), [`${namespace}/a`, `${namespace}/b`]);
  });

  it('indexes objects across namespaces by namespace and by a custom index', async () => {
    const teamA = await freshNamespace();
    const teamB = await freshNamespace();
    await createConfigMap(teamA, 'web', { v: '1' }, { tier: 'frontend' });
    await createConfigMap(teamA, 'db', { v: '1' }, { tier: 'backend' });
    await createConfigMap(teamB, 'web', { v: '1' }, { tier: 'frontend' });
    const { informer, events } = configMapInformer({ labelSelector: 'tier' });
    informer.cache.addIndex('tier', (cm) => [cm.metadata?.labels?.tier ?? '']);
    await informer.start();

    assert.deepEqual(informer.cache.byIndex(NAMESPACE_INDEX, teamA).map(objectKey).sort(), [`${teamA}/db`, `${teamA}/web`]);
    assert.deepEqual(informer.cache.byIndex('tier', 'frontend').map(objectKey).sort(), [`${teamA}/web`, `${teamB}/web`].sort());

    await updateConfigMap(teamB, 'web', { v: '2' }, { tier: 'backend' });
    await waitFor('the label change', () => events.some((e) => e.type === 'update' && e.key === `${teamB}/web`));
    assert.deepEqual(informer.cache.byIndex('tier', 'frontend').map(objectKey), [`${teamA}/web`]);
    assert.deepEqual(informer.cache.byIndex('tier', 'backend').map(objectKey).sort(), [`${teamA}/db`, `${teamB}/web`].sort());
  });

  it('stops watching when stopped', async () => {
    const namespace = await freshNamespace();
    const { informer, events } = configMapInformer({ namespace });
    await informer.start();
    await waitFor('the first watch', () => sandbox.requestLog.some((r) => r.verb === 'watch' && r.namespace === namespace));
    informer.stop();
    const requestsAfterStop = sandbox.requestLog.length;
    await createConfigMap(namespace, 'unseen', { v: '1' });
    // A live informer would see this within milliseconds; give a stopped one ample time to (wrongly) react.
    await sleep(500);
    assert.deepEqual(events, []);
    assert.equal(
      sandbox.requestLog.slice(requestsAfterStop).filter((r) => r.namespace === namespace && (r.verb === 'watch' || r.verb === 'list')).length,
      0,
      'no list or watch after stop',
    );
  });

  it('waits for its resource to exist (operator started before the CRDs), then syncs and watches it', async () => {
    const errors: unknown[] = [];
    const buckets = createInformer<Bucket>({ kubeConfig, group: GROUP, version: VERSION, plural: 'buckets', backoffInitialMs: 20, backoffMaxMs: 200 });
    buckets.on('error', (err) => errors.push(err));
    const added: Bucket[] = [];
    buckets.on('add', (bucket) => added.push(bucket));
    informers.push(buckets);
    const synced = buckets.start();
    const ready = informersSynced(buckets);

    await waitFor('list errors to be reported', () => errors.length >= 2);
    assert.equal(buckets.hasSynced(), false, 'not synced while the resource does not exist');
    assert.equal(ready(), false);

    await installCrds(kubeConfig);
    await synced;
    assert.equal(ready(), true, 'the readiness check passes once synced');

    const namespace = await freshNamespace();
    const objects = kubeConfig.makeApiClient(CustomObjectsApi);
    await objects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: 'buckets',
      body: { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: 'photos', namespace }, spec: {} },
    });
    await waitFor('the Bucket add', () => added.length === 1);
    assert.equal(objectKey(added[0]!), `${namespace}/photos`);
    assert.equal(added[0]!.kind, 'Bucket');

    // A cluster-scoped kind is keyed by name alone.
    const configs = createInformer<ProviderConfig>({ kubeConfig, group: GROUP, version: VERSION, plural: 'providerconfigs' });
    informers.push(configs);
    await objects.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'providerconfigs',
      body: { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'eu-west-1' } },
    });
    await configs.start();
    assert.deepEqual(configs.cache.keys(), ['default']);
    assert.equal(configs.cache.get('default')?.spec.region, 'eu-west-1');
  });
});
