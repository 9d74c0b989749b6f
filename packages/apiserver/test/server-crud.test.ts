// Object semantics through @kubernetes/client-node: CRUD, conflicts, generation, status, finalizers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type V1ConfigMap } from '@kubernetes/client-node';
import { eventually, installWidgetCrd, metadataOf, request, startTestSandbox, widget, WIDGETS, type RawResponse, type TestSandbox } from './helpers.ts';

type Obj = Record<string, unknown>;
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

async function apiError(promise: Promise<unknown>): Promise<{ code: number; body: Obj }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = typeof err.body === 'string' ? (JSON.parse(err.body) as Obj) : (err.body as Obj);
      return { code: err.code, body };
    }
    throw err;
  }
  throw new Error('expected the request to fail');
}

describe('object semantics', () => {
  let t: TestSandbox;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  const W = { group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' };

  before(async () => {
    t = await startTestSandbox();
    core = t.kc.makeApiClient(CoreV1Api);
    custom = t.kc.makeApiClient(CustomObjectsApi);
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('starts with the default, kube-system and kube-public namespaces', async () => {
    const list = await core.listNamespace();
    const names = list.items.map((n) => n.metadata?.name);
    for (const name of ['default', 'kube-system', 'kube-public']) assert.ok(names.includes(name), name);
    assert.equal(list.items[0]?.status?.phase, 'Active');
  });

  it('creates a ConfigMap with uid, creationTimestamp and a resourceVersion, and reads it back', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'settings' }, data: { mode: 'fast' } } });
    assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(created.metadata?.creationTimestamp);
    assert.match(created.metadata?.resourceVersion ?? '', /^\d+$/);
    const read = await core.readNamespacedConfigMap({ name: 'settings', namespace: 'default' });
    assert.deepEqual(read.data, { mode: 'fast' });
    assert.equal(read.metadata?.uid, created.metadata?.uid);
  });

  it('answers 409 AlreadyExists with a Status body like the real server', async () => {
    const { code, body } = await apiError(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'settings' } } }));
    assert.equal(code, 409);
    assert.equal(body['kind'], 'Status');
    assert.equal(body['apiVersion'], 'v1');
    assert.equal(body['status'], 'Failure');
    assert.equal(body['reason'], 'AlreadyExists');
    assert.equal(body['message'], 'configmaps "settings" already exists');
    assert.deepEqual(body['details'], { name: 'settings', group: '', kind: 'configmaps' });
    assert.equal(body['code'], 409);
  });

  it('rejects an update carrying a stale resourceVersion with 409 Conflict', async () => {
    const current = await core.readNamespacedConfigMap({ name: 'settings', namespace: 'default' });
    const fresh: V1ConfigMap = { ...current, data: { mode: 'slow' } };
    const updated = await core.replaceNamespacedConfigMap({ name: 'settings', namespace: 'default', body: fresh });
    assert.ok(Number(updated.metadata?.resourceVersion) > Number(current.metadata?.resourceVersion));
    const stale: V1ConfigMap = { ...current, data: { mode: 'stale' } };
    const { code, body } = await apiError(core.replaceNamespacedConfigMap({ name: 'settings', namespace: 'default', body: stale }));
    assert.equal(code, 409);
    assert.equal(body['reason'], 'Conflict');
    assert.match(String(body['message']), /Operation cannot be fulfilled on configmaps "settings": the object has been modified/);
  });

  it('refuses namespaced objects in a namespace that does not exist (404)', async () => {
    const { code, body } = await apiError(core.createNamespacedConfigMap({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }));
    assert.equal(code, 404);
    assert.equal(body['message'], 'namespaces "nowhere" not found');
  });

  it('answers 404 NotFound for a missing object', async () => {
    const { code, body } = await apiError(custom.getNamespacedCustomObject({ ...W, name: 'ghost' }));
    assert.equal(code, 404);
    assert.equal(body['message'], 'widgets.example.com "ghost" not found');
    assert.deepEqual(body['details'], { name: 'ghost', group: 'example.com', kind: 'widgets' });
  });

  it('keeps resourceVersions monotonic across every kind', async () => {
    const a = await custom.createNamespacedCustomObject({ ...W, body: widget('mono-a') });
    const b = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'mono-b' }, stringData: { k: 'v' } } });
    const c = await custom.createNamespacedCustomObject({ ...W, body: widget('mono-c') });
    const rvs = [metadataOf(a)['resourceVersion'], b.metadata?.resourceVersion, metadataOf(c)['resourceVersion']].map(Number);
    assert.ok(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, `not increasing: ${rvs.join(',')}`);
    assert.equal(b.type, 'Opaque');
    assert.deepEqual(b.data, { k: Buffer.from('v').toString('base64') });
  });

  it('bumps generation on spec changes only, not on metadata or status changes', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...W, body: widget('gen', { size: 1 }) })) as Obj;
    assert.equal(metadataOf(created)['generation'], 1);
    const labelled = (await custom.patchNamespacedCustomObject({ ...W, name: 'gen', body: { metadata: { labels: { team: 'a' } } } }, MERGE)) as Obj;
    assert.equal(metadataOf(labelled)['generation'], 1);
    const resized = (await custom.patchNamespacedCustomObject({ ...W, name: 'gen', body: { spec: { size: 2 } } }, MERGE)) as Obj;
    assert.equal(metadataOf(resized)['generation'], 2);
    const withStatus = (await custom.patchNamespacedCustomObjectStatus({ ...W, name: 'gen', body: { status: { phase: 'Ready' } } }, MERGE)) as Obj;
    assert.equal(metadataOf(withStatus)['generation'], 2);
    assert.deepEqual(withStatus['status'], { phase: 'Ready' });
  });

  it('ignores status on the main resource and everything but status on /status', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: { ...widget('split'), status: { phase: 'Forged' } } });
    const read = (await custom.getNamespacedCustomObject({ ...W, name: 'split' })) as Obj;
    assert.equal(read['status'], undefined, 'status dropped on create');
    const viaMain = (await custom.patchNamespacedCustomObject({ ...W, name: 'split', body: { status: { phase: 'Ignored' } } }, MERGE)) as Obj;
    assert.equal(viaMain['status'], undefined);
    const viaStatus = (await custom.patchNamespacedCustomObjectStatus({ ...W, name: 'split', body: { spec: { size: 99 }, status: { phase: 'Set' } } }, MERGE)) as Obj;
    assert.deepEqual(viaStatus['status'], { phase: 'Set' });
    assert.equal((viaStatus['spec'] as Obj)['size'], 1, 'spec unchanged through /status');
  });

  it('keeps metadata, spec and managedFields on a /status PUT that carries only identity, resourceVersion and status', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('trimmed', { size: 3 }, { labels: { team: 'media' } }) });
    const stored = (await custom.getNamespacedCustomObject({ ...W, name: 'trimmed' })) as Obj;
    const res = await request(t.sandbox, 'PUT', `${WIDGETS}/trimmed/status`, {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'trimmed', namespace: 'default', resourceVersion: metadataOf(stored)['resourceVersion'] }, status: { phase: 'Set' } },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json?.['status'], { phase: 'Set' });
    assert.deepEqual(res.json?.['spec'], stored['spec']);
    assert.deepEqual(metadataOf(res.json)['labels'], { team: 'media' });
    const managers = (metadataOf(res.json)['managedFields'] as { manager: string; subresource?: string }[]).map((m) => `${m.manager}${m.subresource ? `/${m.subresource}` : ''}`);
    assert.equal(managers.length, 2, `the create's entry is kept and the status write adds one: ${managers.join(', ')}`);
    const stale = await request(t.sandbox, 'PUT', `${WIDGETS}/trimmed/status`, {
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'trimmed', namespace: 'default', resourceVersion: metadataOf(stored)['resourceVersion'] }, status: { phase: 'Stale' } },
    });
    assert.equal(stale.status, 409, 'the resourceVersion is still a precondition');
  });

  it('leaves the stored object a merge patch starts from as it was: a watch from before the patch replays it unchanged', async () => {
    const created = await request(t.sandbox, 'POST', WIDGETS, { body: widget('kept', { size: 1 }, { labels: { a: '1' } }) });
    const createdRv = Number(metadataOf(created.json)['resourceVersion']);
    const patched = await request(t.sandbox, 'PATCH', `${WIDGETS}/kept`, { body: { metadata: { labels: { b: '2' } }, spec: { size: 2 } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(metadataOf(patched.json)['labels'], { a: '1', b: '2' });
    const watch = await request(t.sandbox, 'GET', `${WIDGETS}?watch=1&fieldSelector=metadata.name%3Dkept&resourceVersion=${createdRv - 1}&timeoutSeconds=1`);
    const events = watch.text.trim().split('\n').map((line) => JSON.parse(line) as { type: string; object: Obj });
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'MODIFIED']);
    assert.deepEqual(metadataOf(events[0]!.object)['labels'], { a: '1' });
    assert.deepEqual(events[0]!.object['spec'], created.json?.['spec']);
    assert.deepEqual(events[1]!.object['spec'], patched.json?.['spec']);
    assert.equal((events[1]!.object['spec'] as Obj)['size'], 2);
  });

  it('judges an immutable ConfigMap\'s data by its values, not the order its keys were sent in', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'frozen' }, immutable: true, data: { a: '1', b: '2' } } });
    const stored = await core.readNamespacedConfigMap({ namespace: 'default', name: 'frozen' });
    // The same data, its keys in another order (as a client that rebuilds the map sends it), and a new label: allowed.
    const relabelled = await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'frozen', body: { ...stored, metadata: { ...stored.metadata, labels: { tier: 'gold' } }, data: { b: '2', a: '1' } } });
    assert.equal(relabelled.metadata?.labels?.['tier'], 'gold');
    const { code, body } = await apiError(core.replaceNamespacedConfigMap({ namespace: 'default', name: 'frozen', body: { ...relabelled, data: { a: '1', b: '3' } } }));
    assert.equal(code, 422);
    assert.match(String(body['message']), /field is immutable when `immutable` is set/);
  });

  it('writes nothing for an update that changes nothing', async () => {
    const before = (await custom.getNamespacedCustomObject({ ...W, name: 'split' })) as Obj;
    const after = (await custom.replaceNamespacedCustomObject({ ...W, name: 'split', body: before })) as Obj;
    assert.equal(metadataOf(after)['resourceVersion'], metadataOf(before)['resourceVersion']);
  });

  it('holds a deleted object with finalizers until the last finalizer is removed', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('held', { size: 1 }, { finalizers: ['example.com/cleanup', 'example.com/audit'] }) });
    const deleting = await request(t.sandbox, 'DELETE', `${WIDGETS}/held`);
    assert.equal(deleting.status, 202);
    assert.ok(metadataOf(deleting.json)['deletionTimestamp']);
    const held = (await custom.getNamespacedCustomObject({ ...W, name: 'held' })) as Obj;
    assert.equal(metadataOf(held)['generation'], 2);

    const adding = await request(t.sandbox, 'PATCH', `${WIDGETS}/held`, { body: { metadata: { finalizers: ['example.com/cleanup', 'example.com/audit', 'new'] } }, contentType: 'application/merge-patch+json' });
    assert.equal(adding.status, 422);
    assert.match(String(adding.json?.['message']), /no new finalizers can be added if the object is being deleted/);

    await custom.patchNamespacedCustomObject({ ...W, name: 'held', body: { metadata: { finalizers: ['example.com/audit'] } } }, MERGE);
    await custom.getNamespacedCustomObject({ ...W, name: 'held' });
    await custom.patchNamespacedCustomObject({ ...W, name: 'held', body: { metadata: { finalizers: null } } }, MERGE);
    const { code } = await apiError(custom.getNamespacedCustomObject({ ...W, name: 'held' }));
    assert.equal(code, 404);
  });

  it('deletes an object without finalizers at once and answers with it', async () => {
    await custom.createNamespacedCustomObject({ ...W, body: widget('gone') });
    const res = await request(t.sandbox, 'DELETE', `${WIDGETS}/gone`);
    assert.equal(res.status, 200);
    assert.equal(metadataOf(res.json)['name'], 'gone');
    const cm = await request(t.sandbox, 'DELETE', '/api/v1/namespaces/default/configmaps/settings');
    assert.equal(cm.status, 200);
    assert.equal(cm.json?.['kind'], 'Status');
    assert.equal(cm.json?.['status'], 'Success');
  });

  it('gives generateName objects a random suffix', async () => {
    const created = (await custom.createNamespacedCustomObject({ ...W, body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { generateName: 'auto-' }, spec: { size: 3 } } })) as Obj;
    assert.match(String(metadataOf(created)['name']), /^auto-[a-z0-9]{5}$/);
  });

  it('lets a stuck Terminating namespace go through namespaces/finalize', async () => {
    await core.createNamespace({ body: { metadata: { name: 'stuck' } } });
    await custom.createNamespacedCustomObject({ ...W, namespace: 'stuck', body: { ...widget('w'), metadata: { name: 'w', namespace: 'stuck', finalizers: ['example.com/hold'] } } });
    await core.deleteNamespace({ name: 'stuck' });
    const ns = (await request(t.sandbox, 'GET', '/api/v1/namespaces/stuck')).json as Obj;
    assert.equal((ns['status'] as Obj)['phase'], 'Terminating');
    const res = await request(t.sandbox, 'PUT', '/api/v1/namespaces/stuck/finalize', { body: { ...ns, spec: { finalizers: [] } } });
    assert.equal(res.status, 200, res.text);
    assert.equal((await request(t.sandbox, 'GET', '/api/v1/namespaces/stuck')).status, 404);
  });

  it('deletes a namespace with its contents, waiting for finalizers', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c' } } });
    await custom.createNamespacedCustomObject({ ...W, namespace: 'doomed', body: { ...widget('w', { size: 1 }, { finalizers: ['example.com/hold'] }), metadata: { name: 'w', namespace: 'doomed', finalizers: ['example.com/hold'] } } });
    await core.deleteNamespace({ name: 'doomed' });
    const ns = await core.readNamespace({ name: 'doomed' });
    assert.equal(ns.status?.phase, 'Terminating');
    const refused = await apiError(core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'late' } } }));
    assert.equal(refused.code, 403);
    // the widget waits on its finalizer; remove it and the namespace goes
    for (let i = 0; i < 200; i++) {
      const cms = await core.listNamespacedConfigMap({ namespace: 'doomed' });
      if (cms.items.length === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await custom.patchNamespacedCustomObject({ ...W, namespace: 'doomed', name: 'w', body: { metadata: { finalizers: null } } }, MERGE);
    for (let i = 0; ; i++) {
      const res = await request(t.sandbox, 'GET', '/api/v1/namespaces/doomed');
      if (res.status === 404) break;
      assert.ok(i < 500, 'namespace should go once empty');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});

describe('garbage collection', () => {
  let t: TestSandbox;
  const CMS = '/api/v1/namespaces/default/configmaps';
  const ownedBy = (owner: Obj): Obj => ({ apiVersion: 'example.com/v1', kind: 'Widget', name: metadataOf(owner)['name'], uid: metadataOf(owner)['uid'], controller: true, blockOwnerDeletion: true });

  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('deletes dependents when their only owner is deleted', async () => {
    const owner = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('owner') })).json as Obj;
    await request(t.sandbox, 'POST', CMS, { body: { metadata: { name: 'outputs', ownerReferences: [ownedBy(owner)] }, data: { url: 'x' } } });
    await request(t.sandbox, 'DELETE', `${WIDGETS}/owner`);
    for (let i = 0; ; i++) {
      if ((await request(t.sandbox, 'GET', `${CMS}/outputs`)).status === 404) break;
      assert.ok(i < 500, 'dependent collected');
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('keeps a dependent that has another owner, dropping the reference to the deleted one', async () => {
    const first = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('first-owner') })).json as Obj;
    const second = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('second-owner') })).json as Obj;
    await request(t.sandbox, 'POST', CMS, { body: { metadata: { name: 'shared', ownerReferences: [ownedBy(first), { ...ownedBy(second), controller: false }] } } });
    await request(t.sandbox, 'DELETE', `${WIDGETS}/first-owner`);
    for (let i = 0; ; i++) {
      const refs = metadataOf((await request(t.sandbox, 'GET', `${CMS}/shared`)).json)['ownerReferences'] as Obj[];
      if (refs.length === 1) {
        assert.equal(refs[0]?.['name'], 'second-owner');
        break;
      }
      assert.ok(i < 500, 'reference dropped');
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('follows owner references that updates add and remove', async () => {
    const kept = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('let-go') })).json as Obj;
    const adopting = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('adopting') })).json as Obj;
    await request(t.sandbox, 'POST', CMS, { body: { metadata: { name: 'released', ownerReferences: [ownedBy(kept)] } } });
    await request(t.sandbox, 'POST', CMS, { body: { metadata: { name: 'adopted' }, data: { a: '1' } } });
    // updates that leave the owners alone, then ones that change them
    assert.equal((await request(t.sandbox, 'PATCH', `${CMS}/released`, { contentType: 'application/merge-patch+json', body: { data: { b: '2' } } })).status, 200);
    assert.equal((await request(t.sandbox, 'PATCH', `${CMS}/released`, { contentType: 'application/merge-patch+json', body: { metadata: { ownerReferences: null } } })).status, 200);
    assert.equal((await request(t.sandbox, 'PATCH', `${CMS}/adopted`, { contentType: 'application/merge-patch+json', body: { data: { a: '2' } } })).status, 200);
    assert.equal((await request(t.sandbox, 'PATCH', `${CMS}/adopted`, { contentType: 'application/merge-patch+json', body: { metadata: { ownerReferences: [ownedBy(adopting)] } } })).status, 200);
    await request(t.sandbox, 'DELETE', `${WIDGETS}/let-go`);
    await request(t.sandbox, 'DELETE', `${WIDGETS}/adopting`);
    await eventually(async () => (await request(t.sandbox, 'GET', `${CMS}/adopted`)).status === 404, 20_000, 'the adopted ConfigMap collected with its new owner');
    assert.equal((await request(t.sandbox, 'GET', `${CMS}/released`)).status, 200, 'the released ConfigMap outlives its former owner');
  });

  it('orphans dependents with propagationPolicy=Orphan', async () => {
    const owner = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('orphaning') })).json as Obj;
    await request(t.sandbox, 'POST', CMS, { body: { metadata: { name: 'orphan', ownerReferences: [ownedBy(owner)] } } });
    await request(t.sandbox, 'DELETE', `${WIDGETS}/orphaning`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' } });
    await new Promise((r) => setTimeout(r, 100));
    const kept = await request(t.sandbox, 'GET', `${CMS}/orphan`);
    assert.equal(kept.status, 200);
    assert.equal(metadataOf(kept.json)['ownerReferences'], undefined);
  });
});

describe('events in two API groups', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
  });
  after(() => t.sandbox.stop());

  it('serves one stored Event as core/v1 and as events.k8s.io/v1', async () => {
    const created = await request(t.sandbox, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'photos.1' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        regarding: { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', name: 'photos', namespace: 'default' },
        note: 'created bucket photos',
        reason: 'CreatedExternalResource',
        type: 'Normal',
        action: 'Create',
        reportingController: 'k8or.io/operator',
        reportingInstance: 'k8or-0',
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json?.['note'], 'created bucket photos');
    const core = await request(t.sandbox, 'GET', '/api/v1/namespaces/default/events/photos.1');
    assert.equal(core.json?.['apiVersion'], 'v1');
    assert.equal(core.json?.['message'], 'created bucket photos');
    assert.equal((core.json?.['involvedObject'] as Obj)['name'], 'photos');
    assert.equal(core.json?.['reportingComponent'], 'k8or.io/operator');
    const bySelector = await request(t.sandbox, 'GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dphotos');
    assert.equal((bySelector.json?.['items'] as Obj[]).length, 1);
    const v1List = await request(t.sandbox, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.kind%3DBucket');
    assert.equal(((v1List.json?.['items'] as Obj[])[0] as Obj)['note'], 'created bucket photos');
    const patched = await request(t.sandbox, 'PATCH', '/api/v1/namespaces/default/events/photos.1', { body: { count: 2 }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200);
    const again = await request(t.sandbox, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events/photos.1');
    assert.equal(again.json?.['deprecatedCount'], 2);
  });
});

describe('concurrent writers', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('lets exactly one of many updates from the same resourceVersion win; the others get 409', async () => {
    const created = (await request(t.sandbox, 'POST', WIDGETS, { body: widget('contended') })).json as Obj;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => request(t.sandbox, 'PUT', `${WIDGETS}/contended`, { body: { ...created, spec: { size: i + 2 } } })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 409).length, 11);
  });

  it('applies every one of many concurrent merge patches (patches retry on conflict)', async () => {
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('patched-by-many') });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(t.sandbox, 'PATCH', `${WIDGETS}/patched-by-many`, { body: { metadata: { labels: { [`writer-${i}`]: 'yes' } } }, contentType: 'application/merge-patch+json' }),
      ),
    );
    assert.ok(results.every((r) => r.status === 200));
    const final = await request(t.sandbox, 'GET', `${WIDGETS}/patched-by-many`);
    assert.equal(Object.keys(metadataOf(final.json)['labels'] as Obj).length, 12);
  });
});

describe('unconditional updates', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('refuses a PUT of a custom resource without metadata.resourceVersion, as the real server does', async () => {
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('guarded') });
    const res = await request(t.sandbox, 'PUT', `${WIDGETS}/guarded`, { body: widget('guarded', { size: 9 }) });
    assert.equal(res.status, 422);
    assert.equal(res.json?.['message'], 'Widget.example.com "guarded" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
  });

  it('allows it for built-in kinds such as ConfigMaps', async () => {
    await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'loose' }, data: { a: '1' } } });
    const res = await request(t.sandbox, 'PUT', '/api/v1/namespaces/default/configmaps/loose', { body: { metadata: { name: 'loose' }, data: { a: '2' } } });
    assert.equal(res.status, 200);
  });
});

describe('metadata validation messages', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  const labelled = (name: string, value: string): Record<string, unknown> => widget(name, { size: 1 }, { labels: { tier: value } });
  const causesOf = (res: RawResponse): unknown => (res.json?.['details'] as Record<string, unknown> | undefined)?.['causes'];

  it('says a 64-character label value is too long, as kube-apiserver does', async () => {
    const value = 'a'.repeat(64);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: labelled('long-label', value) });
    assert.equal(res.status, 422);
    assert.equal(res.json?.['message'], `Widget.example.com "long-label" is invalid: metadata.labels: Invalid value: "${value}": must be no more than 63 characters`);
    assert.deepEqual(causesOf(res), [{ reason: 'FieldValueInvalid', message: `Invalid value: "${value}": must be no more than 63 characters`, field: 'metadata.labels' }]);
  });

  it('lists both rules when a label value is too long and has a character a label cannot hold', async () => {
    const value = `${'a'.repeat(63)}!`;
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: labelled('bad-label', value) });
    assert.equal(res.status, 422);
    const messages = (causesOf(res) as { message: string }[]).map((c) => c.message);
    assert.equal(messages.length, 2);
    assert.equal(messages[0], `Invalid value: "${value}": must be no more than 63 characters`);
    assert.match(messages[1]!, /: a valid label must be an empty string or consist of alphanumeric characters/);
  });

  it('does not echo a 1 MB label value back whole', async () => {
    const value = 'b'.repeat(1024 * 1024);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: labelled('huge-label', value) });
    assert.equal(res.status, 422);
    assert.ok(res.text.length < 4_096, `error body of ${res.text.length} characters`);
    assert.equal(
      res.json?.['message'],
      `Widget.example.com "huge-label" is invalid: metadata.labels: Invalid value: "${'b'.repeat(256)}..." (1048576 characters, truncated): must be no more than 63 characters`,
    );
  });
});
