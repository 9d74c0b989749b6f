// metadata.managedFields of creates, updates and patches (operation Update): who owns which field
// after each write, including map-lists, sets, status, fields that go away and lists emptied.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { installWidgetCrd, metadataOf, openWatch, request, startTestSandbox, widget, WIDGETS, eventually, type TestSandbox } from './helpers.ts';

type Obj = Record<string, unknown>;

// one sandbox for the file; the CRD-change test, which edits the Widget CRD, comes last
let t: TestSandbox;
before(async () => {
  t = await startTestSandbox();
  await installWidgetCrd(t.sandbox);
});
after(async () => {
  await t.sandbox.stop();
});

describe('managedFields of updates', () => {
  const fieldsOf = (obj: Obj | undefined, manager: string, subresource = ''): unknown =>
    (metadataOf(obj)['managedFields'] as Obj[] | undefined)?.find((e) => e['manager'] === manager && String(e['subresource'] ?? '') === subresource)?.['fieldsV1'];
  const managers = (obj: Obj | undefined): string[] => ((metadataOf(obj)['managedFields'] as Obj[] | undefined) ?? []).map((e) => `${String(e['manager'])}${e['subresource'] ? `/${String(e['subresource'])}` : ''}`);
  const patch = async (name: string, body: Obj, manager: string, subresource = ''): Promise<Obj> => {
    const res = await request(t.sandbox, 'PATCH', `${WIDGETS}/${name}${subresource ? `/${subresource}` : ''}?fieldManager=${manager}`, { contentType: 'application/merge-patch+json', body });
    assert.equal(res.status, 200, res.text);
    return res.json!;
  };

  it('gives each field to the manager that last set or changed it', async () => {
    const created = await request(t.sandbox, 'POST', `${WIDGETS}?fieldManager=alice`, {
      body: widget('owners', { size: 1, tags: ['x'], rules: [{ id: 'a', days: 1 }] }, { labels: { team: 'a' }, finalizers: ['example.com/keep'] }),
    });
    assert.equal(created.status, 201, created.text);
    const alice = fieldsOf(created.json, 'alice') as Obj;
    assert.deepEqual(Object.keys((alice['f:spec'] as Obj)).sort(), ['f:color', 'f:rules', 'f:size', 'f:tags']);
    assert.deepEqual(alice['f:metadata'], { 'f:labels': { 'f:team': {} }, 'f:finalizers': { 'v:"example.com/keep"': {} } });
    assert.deepEqual((alice['f:spec'] as Obj)['f:rules'], { 'k:{"id":"a"}': { '.': {}, 'f:id': {}, 'f:days': {} } });

    const resized = await patch('owners', { spec: { size: 2, rules: [{ id: 'a', days: 1 }, { id: 'b', days: 2 }] } }, 'bob');
    assert.deepEqual(fieldsOf(resized, 'bob'), { 'f:spec': { 'f:size': {}, 'f:rules': { 'k:{"id":"b"}': { '.': {}, 'f:id': {}, 'f:days': {} } } } });
    const aliceSpec = (fieldsOf(resized, 'alice') as Obj)['f:spec'] as Obj;
    assert.equal(aliceSpec['f:size'], undefined, 'alice lost the size bob changed');
    assert.deepEqual(aliceSpec['f:rules'], { 'k:{"id":"a"}': { '.': {}, 'f:id': {}, 'f:days': {} } }, 'alice keeps the rule bob left alone');
  });

  it('drops ownership of a field that is removed, and of an entry left with nothing', async () => {
    const removed = await patch('owners', { metadata: { labels: null }, spec: { tags: null } }, 'carol');
    const alice = fieldsOf(removed, 'alice') as Obj;
    assert.equal((alice['f:metadata'] as Obj)['f:labels'], undefined);
    assert.equal((alice['f:spec'] as Obj)['f:tags'], undefined);
    assert.ok(!managers(removed).includes('carol'), 'a write that only removes fields owns nothing');
  });

  it('gives a list emptied to the writer, though another manager owned its items', async () => {
    const emptied = await patch('owners', { spec: { rules: [] } }, 'dave');
    assert.deepEqual(fieldsOf(emptied, 'dave'), { 'f:spec': { 'f:rules': {} } });
    assert.equal(((fieldsOf(emptied, 'bob') as Obj | undefined)?.['f:spec'] as Obj | undefined)?.['f:rules'], undefined);
    assert.equal(((fieldsOf(emptied, 'alice') as Obj)['f:spec'] as Obj)['f:rules'], undefined);
  });

  it('records status writes in an entry of their own, and keeps the entries of a write that changes nothing', async () => {
    const status = await patch('owners', { status: { phase: 'Up', conditions: [{ type: 'Ready', status: 'True' }] } }, 'ctrl', 'status');
    assert.deepEqual(fieldsOf(status, 'ctrl', 'status'), { 'f:status': { 'f:phase': {}, 'f:conditions': {} } });
    const again = await patch('owners', { status: { phase: 'Up' } }, 'ctrl', 'status');
    assert.deepEqual(metadataOf(again)['managedFields'], metadataOf(status)['managedFields']);
    assert.equal(metadataOf(again)['resourceVersion'], metadataOf(status)['resourceVersion'], 'a no-op write stores nothing');
  });
});

describe('watch events written close together', () => {
  it('arrive whole, in resourceVersion order, each with the bytes its write answered', async () => {
    // from now on: the file's earlier objects are not this test's
    const listed = await request(t.sandbox, 'GET', WIDGETS);
    assert.equal(listed.status, 200, listed.text);
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=true&resourceVersion=${String(metadataOf(listed.json)['resourceVersion'])}`);
    const answered = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget(`w-${i}`, { size: i % 100 }) });
        assert.equal(res.status, 201, res.text);
        return res.json!;
      }),
    );
    await eventually(() => watch.events.length >= 60, 30_000, '60 events');
    watch.stop();
    const versions = watch.events.map((e) => Number(metadataOf(e.object)['resourceVersion']));
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
    assert.equal(new Set(watch.events.map((e) => metadataOf(e.object)['name'])).size, 60);
    for (const body of answered) {
      const event = watch.events.find((e) => metadataOf(e.object)['name'] === metadataOf(body)['name']);
      assert.equal(event?.type, 'ADDED');
      assert.deepEqual(event?.object, body);
    }
  });
});

describe('objects shown after their CRD changes', () => {
  it('carry a default the CRD gained since they were last shown, on read and on watch', async () => {
    const created = await request(t.sandbox, 'POST', WIDGETS, { body: widget('shown') });
    assert.equal(created.status, 201, created.text);
    // a watcher before the change: the object's ADDED event is encoded then
    const early = openWatch(t.sandbox, `${WIDGETS}?watch=true&fieldSelector=metadata.name%3Dshown`);
    await eventually(() => early.events.length >= 1, 20_000, 'the early watch\'s initial event');
    early.stop();
    assert.equal((early.events[0]!.object['spec'] as Obj)['shape'], undefined);
    const before = await request(t.sandbox, 'GET', `${WIDGETS}/shown`);
    assert.equal((before.json?.['spec'] as Obj)['shape'], undefined);

    const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com';
    const crd = (await request(t.sandbox, 'GET', crdPath)).json!;
    const version = ((crd['spec'] as Obj)['versions'] as Obj[])[0]!;
    const specSchema = (((version['schema'] as Obj)['openAPIV3Schema'] as Obj)['properties'] as Obj)['spec'] as Obj;
    (specSchema['properties'] as Obj)['shape'] = { type: 'string', default: 'round' };
    const updated = await request(t.sandbox, 'PUT', crdPath, { body: crd });
    assert.equal(updated.status, 200, updated.text);

    await eventually(async () => ((await request(t.sandbox, 'GET', `${WIDGETS}/shown`)).json?.['spec'] as Obj | undefined)?.['shape'] === 'round', 20_000, 'the new default on read');
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=true&fieldSelector=metadata.name%3Dshown`);
    await eventually(() => watch.events.length >= 1, 20_000, 'the initial event');
    watch.stop();
    assert.equal((watch.events[0]!.object['spec'] as Obj)['shape'], 'round');
  });
});
