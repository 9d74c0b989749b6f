// CRD lifecycle: served within moments of creation, updated in place, withdrawn after its objects are deleted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, installWidgetCrd, metadataOf, openWatch, request, startTestSandbox, widget, widgetCrd, WIDGETS, type TestSandbox } from './helpers.ts';

type Obj = Record<string, unknown>;
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';

describe('CRD lifecycle', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
  });
  after(() => t.sandbox.stop());

  it('serves a new CRD right after its create returns', async () => {
    const created = await request(t.sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: widgetCrd() });
    assert.equal(created.status, 201);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('first') });
    assert.equal(res.status, 201, res.text);
  });

  it('refuses a CRD whose name does not match its plural and group', async () => {
    const crd = widgetCrd();
    (crd['metadata'] as Obj)['name'] = 'gadgets.example.com';
    const res = await request(t.sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
    assert.equal(res.status, 422);
    assert.match(String(res.json?.['message']), /must be spec.names.plural\+"."\+spec.group/);
  });

  it('does not serve a CRD whose kind is already taken in its group, and says why in NamesAccepted', async () => {
    const clash = widgetCrd();
    (clash['metadata'] as Obj)['name'] = 'widgetz.example.com';
    const names = (clash['spec'] as Obj)['names'] as Obj;
    names['plural'] = 'widgetz';
    names['singular'] = 'widgetz';
    names['shortNames'] = [];
    assert.equal((await request(t.sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: clash })).status, 201);
    await eventually(async () => {
      const crd = await request(t.sandbox, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgetz.example.com');
      const conditions = ((crd.json?.['status'] as Obj | undefined)?.['conditions'] as Obj[] | undefined) ?? [];
      return conditions.some((c) => c['type'] === 'NamesAccepted' && c['status'] === 'False' && String(c['message']).includes('"Widget" is already in use'));
    }, 20_000, 'NamesAccepted=False');
    assert.equal((await request(t.sandbox, 'GET', '/apis/example.com/v1/namespaces/default/widgetz')).status, 404);
    await request(t.sandbox, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgetz.example.com');
    await eventually(async () => (await request(t.sandbox, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgetz.example.com')).status === 404);
    assert.equal((await request(t.sandbox, 'GET', WIDGETS)).status, 200, 'the first CRD is still served');
  });

  it('counts status as part of the object when the CRD has no status subresource', async () => {
    const plain = widgetCrd();
    (plain['metadata'] as Obj)['name'] = 'gadgets.example.com';
    const names = (plain['spec'] as Obj)['names'] as Obj;
    Object.assign(names, { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList', shortNames: [] });
    delete (((plain['spec'] as Obj)['versions'] as Obj[])[0] as Obj)['subresources'];
    assert.equal((await request(t.sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: plain })).status, 201);
    const GADGETS = '/apis/example.com/v1/namespaces/default/gadgets';
    const created = await request(t.sandbox, 'POST', GADGETS, { body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 1 }, status: { phase: 'New' } } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json?.['status'], { phase: 'New' }, 'status is kept on create');
    const patched = await request(t.sandbox, 'PATCH', `${GADGETS}/g`, { body: { status: { phase: 'Ready' } }, contentType: 'application/merge-patch+json' });
    assert.deepEqual(patched.json?.['status'], { phase: 'Ready' });
    assert.equal(metadataOf(patched.json)['generation'], 2);
    assert.equal((await request(t.sandbox, 'GET', `${GADGETS}/g/status`)).status, 404, 'no /status subresource');
    await request(t.sandbox, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com');
    await eventually(async () => (await request(t.sandbox, 'GET', GADGETS)).status === 404, 20_000, 'gadgets withdrawn');
  });

  it('picks up a schema change on update', async () => {
    const current = (await request(t.sandbox, 'GET', CRD)).json as Obj;
    const version = ((current['spec'] as Obj)['versions'] as Obj[])[0] as Obj;
    const spec = ((((version['schema'] as Obj)['openAPIV3Schema'] as Obj)['properties'] as Obj)['spec'] as Obj)['properties'] as Obj;
    spec['size'] = { type: 'integer', maximum: 5 };
    const updated = await request(t.sandbox, 'PUT', CRD, { body: current });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(metadataOf(updated.json)['generation'], 2);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('too-big', { size: 6 }) });
    assert.equal(res.status, 422);
  });

  it('warns on every request to a deprecated version', async () => {
    const current = (await request(t.sandbox, 'GET', CRD)).json as Obj;
    const versions = (current['spec'] as Obj)['versions'] as Obj[];
    versions.push({ ...(versions[0] as Obj), name: 'v1beta1', storage: false, deprecated: true, deprecationWarning: 'example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget' });
    assert.equal((await request(t.sandbox, 'PUT', CRD, { body: current })).status, 200);
    const old = await request(t.sandbox, 'GET', '/apis/example.com/v1beta1/namespaces/default/widgets');
    assert.equal(old.status, 200);
    assert.equal(old.headers['warning'], '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"');
    const first = (old.json?.['items'] as Obj[])[0];
    assert.equal(first?.['apiVersion'], 'example.com/v1beta1', 'served in the version asked for');
    assert.equal((await request(t.sandbox, 'GET', WIDGETS)).headers['warning'], undefined);
  });

  it('on deletion removes every custom object, waits for their finalizers, then stops serving', async () => {
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('held', { size: 1 }, { finalizers: ['example.com/hold'] }) });
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1`);
    await eventually(() => watch.events.length >= 2, 20_000, 'watch open');
    const deleting = await request(t.sandbox, 'DELETE', CRD);
    assert.ok([200, 202].includes(deleting.status), deleting.text);
    await eventually(async () => (await request(t.sandbox, 'GET', `${WIDGETS}/first`)).status === 404, 20_000, 'first deleted');
    const held = await request(t.sandbox, 'GET', `${WIDGETS}/held`);
    assert.ok(metadataOf(held.json)['deletionTimestamp'], 'held waits on its finalizer');
    assert.equal((await request(t.sandbox, 'GET', CRD)).status, 200, 'the CRD stays while objects remain');
    await request(t.sandbox, 'PATCH', `${WIDGETS}/held`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    await eventually(async () => (await request(t.sandbox, 'GET', CRD)).status === 404, 20_000, 'CRD gone');
    const list = await request(t.sandbox, 'GET', WIDGETS);
    assert.equal(list.status, 404);
    await watch.ended;
    assert.ok(watch.events.some((e) => e.type === 'DELETED'), 'watchers saw the objects go before the watch ended');
    const groups = await request(t.sandbox, 'GET', '/apis');
    assert.ok(!((groups.json?.['groups'] as Obj[]) ?? []).some((g) => g['name'] === 'example.com'));
  });

  it('serves the CRD again when it is re-created', async () => {
    await installWidgetCrd(t.sandbox);
    const list = await request(t.sandbox, 'GET', WIDGETS);
    assert.equal(list.status, 200);
    assert.deepEqual(list.json?.['items'], []);
  });
});

describe('robustness', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('answers garbage with Status errors and keeps serving', async () => {
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    const paths = [WIDGETS, `${WIDGETS}/x`, `${WIDGETS}/x/status`, `${WIDGETS}/x/scale`, '/api/v1/namespaces/default/configmaps', '/apis', '/api/v1/namespaces/x/status', '/apis/example.com/v1/widgets/x', '/openapi/v3/apis/none/v1'];
    const bodies: Array<[string, string]> = [
      ['{', 'application/json'],
      ['null', 'application/json'],
      ['"text"', 'application/json'],
      ['{"metadata": 5}', 'application/json'],
      ['{"metadata": {"name": 7}}', 'application/json'],
      ['- a\n- b', 'application/yaml'],
      ['[{"op": "explode"}]', 'application/json-patch+json'],
      ['{"spec": 1}', 'application/merge-patch+json'],
      ['kind: Widget', 'application/apply-patch+yaml'],
      ['\u0000\u0001binary', 'application/vnd.kubernetes.protobuf'],
    ];
    for (const method of methods) {
      for (const path of paths) {
        for (const [body, contentType] of method === 'GET' || method === 'OPTIONS' ? [['', ''] as [string, string]] : bodies) {
          const res = await request(t.sandbox, method, `${path}?fieldManager=fuzz`, body ? { body, contentType } : {});
          assert.ok(res.status >= 200 && res.status < 500, `${method} ${path} ${body}: ${res.status} ${res.text}`);
        }
      }
    }
    assert.equal((await request(t.sandbox, 'GET', WIDGETS)).status, 200);
  });
});
