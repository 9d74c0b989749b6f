// Watch: streaming, resume from a resourceVersion, 410 Gone, bookmarks, timeouts, and client-node informers
// surviving a dropped watch and an expired resourceVersion.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CustomObjectsApi, makeInformer, type KubernetesObject, type KubernetesListObject } from '@kubernetes/client-node';
import { eventually, installWidgetCrd, metadataOf, openWatch, request, startTestSandbox, widget, WIDGETS, type TestSandbox, type WatchEvent } from './helpers.ts';

type Obj = Record<string, unknown>;

const nameOf = (e: WatchEvent): string => String(metadataOf(e.object)['name']);

describe('watch', () => {
  let t: TestSandbox;

  before(async () => {
    t = await startTestSandbox({ watchHistorySize: 50 });
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('streams ADDED, MODIFIED and DELETED after synthetic ADDED events for the current state', async () => {
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-existing') });
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=true`);
    await eventually(() => watch.events.length >= 1, 20_000, 'initial ADDED');
    assert.deepEqual(watch.events.map((e) => [e.type, nameOf(e)]), [['ADDED', 'w-existing']]);
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-new') });
    await request(t.sandbox, 'PATCH', `${WIDGETS}/w-new`, { body: { spec: { size: 5 } }, contentType: 'application/merge-patch+json' });
    await request(t.sandbox, 'DELETE', `${WIDGETS}/w-new`);
    await eventually(() => watch.events.length >= 4, 20_000, 'live events');
    watch.stop();
    assert.deepEqual(watch.events.slice(1).map((e) => [e.type, nameOf(e)]), [['ADDED', 'w-new'], ['MODIFIED', 'w-new'], ['DELETED', 'w-new']]);
    assert.equal((watch.events[2]!.object['spec'] as Obj)['size'], 5);
    assert.equal(watch.events[1]!.object['apiVersion'], 'example.com/v1');
  });

  it('resumes from a resourceVersion, replaying what happened since', async () => {
    const list = await request(t.sandbox, 'GET', WIDGETS);
    const rv = String(metadataOf(list.json)['resourceVersion']);
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-after-1') });
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-after-2') });
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1&resourceVersion=${rv}`);
    await eventually(() => watch.events.length >= 2, 20_000, 'replayed events');
    watch.stop();
    assert.deepEqual(watch.events.map((e) => [e.type, nameOf(e)]), [['ADDED', 'w-after-1'], ['ADDED', 'w-after-2']]);
  });

  it('answers an expired resourceVersion with an ERROR event carrying 410 Gone', async () => {
    const list = await request(t.sandbox, 'GET', WIDGETS);
    const rv = String(metadataOf(list.json)['resourceVersion']);
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-before-compaction') });
    t.sandbox.compactHistory();
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1&resourceVersion=${rv}`);
    await watch.ended;
    assert.equal(watch.events.length, 1);
    assert.equal(watch.events[0]!.type, 'ERROR');
    assert.equal(watch.events[0]!.object['code'], 410);
    assert.equal(watch.events[0]!.object['reason'], 'Expired');
    assert.match(String(watch.events[0]!.object['message']), /^too old resource version: \d+ \(\d+\)$/);
  });

  it('forgets the oldest events beyond the history window', async () => {
    const list = await request(t.sandbox, 'GET', WIDGETS);
    const rv = String(metadataOf(list.json)['resourceVersion']);
    for (let i = 0; i < 60; i++) await request(t.sandbox, 'PATCH', `${WIDGETS}/w-existing`, { body: { spec: { size: i } }, contentType: 'application/merge-patch+json' });
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1&resourceVersion=${rv}`);
    await watch.ended;
    assert.equal(watch.events[0]?.type, 'ERROR');
  });

  it('filters by label selector, turning label changes into ADDED and DELETED', async () => {
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-label', { size: 1 }, { labels: { tier: 'gold' } }) });
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1&labelSelector=${encodeURIComponent('tier in (gold,silver)')}`);
    await eventually(() => watch.events.length >= 1);
    await request(t.sandbox, 'PATCH', `${WIDGETS}/w-label`, { body: { metadata: { labels: { tier: 'bronze' } } }, contentType: 'application/merge-patch+json' });
    await request(t.sandbox, 'PATCH', `${WIDGETS}/w-label`, { body: { metadata: { labels: { tier: 'silver' } } }, contentType: 'application/merge-patch+json' });
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-unlabelled') });
    await eventually(() => watch.events.length >= 3);
    watch.stop();
    assert.deepEqual(watch.events.map((e) => [e.type, nameOf(e)]), [['ADDED', 'w-label'], ['DELETED', 'w-label'], ['ADDED', 'w-label']]);
    // As kube-apiserver: the DELETED of an object leaving the selection carries its content from
    // before the change (the labels the watcher selected), at the change's resourceVersion.
    const left = metadataOf(watch.events[1]!.object);
    assert.deepEqual(left['labels'], { tier: 'gold' });
    const rejoined = metadataOf(watch.events[2]!.object);
    assert.ok(Number(left['resourceVersion']) > Number(metadataOf(watch.events[0]!.object)['resourceVersion']));
    assert.ok(Number(left['resourceVersion']) < Number(rejoined['resourceVersion']));
  });

  it('watches one object through the legacy /watch/ path and a metadata.name field selector', async () => {
    const legacy = openWatch(t.sandbox, '/apis/example.com/v1/watch/namespaces/default/widgets/w-existing');
    const byField = openWatch(t.sandbox, `${WIDGETS}?watch=1&fieldSelector=metadata.name%3Dw-existing`);
    await eventually(() => legacy.events.length >= 1 && byField.events.length >= 1);
    await request(t.sandbox, 'PATCH', `${WIDGETS}/w-existing`, { body: { spec: { size: 77 } }, contentType: 'application/merge-patch+json' });
    await request(t.sandbox, 'PATCH', `${WIDGETS}/w-label`, { body: { spec: { size: 77 } }, contentType: 'application/merge-patch+json' });
    await eventually(() => legacy.events.length >= 2 && byField.events.length >= 2);
    await new Promise((r) => setTimeout(r, 50));
    legacy.stop();
    byField.stop();
    for (const w of [legacy, byField]) assert.deepEqual(w.events.map((e) => [e.type, nameOf(e)]), [['ADDED', 'w-existing'], ['MODIFIED', 'w-existing']]);
  });

  it('sends an initial-events-end BOOKMARK with sendInitialEvents and ends at timeoutSeconds', async () => {
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`);
    await watch.ended;
    const bookmark = watch.events.find((e) => e.type === 'BOOKMARK');
    assert.ok(bookmark, 'bookmark sent');
    assert.deepEqual(metadataOf(bookmark.object)['annotations'], { 'k8s.io/initial-events-end': 'true' });
    assert.ok(watch.events.slice(0, watch.events.indexOf(bookmark)).every((e) => e.type === 'ADDED'));
  });

  it('reads boolean query parameters as kube-apiserver does (watch=True, allowWatchBookmarks=TRUE, sendInitialEvents=yes)', async () => {
    // The Python client sends watch=True; Go's apimachinery takes anything but absent, 0 or false as true.
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('w-flags') });
    for (const flag of ['True', 'TRUE', 'yes', '']) {
      const watch = openWatch(t.sandbox, `${WIDGETS}?watch=${flag}&allowWatchBookmarks=${flag}&sendInitialEvents=${flag}&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`);
      await watch.ended;
      assert.ok(watch.events.some((e) => e.type === 'ADDED' && nameOf(e) === 'w-flags'), `watch=${flag} streams events`);
      const bookmark = watch.events.find((e) => e.type === 'BOOKMARK');
      assert.deepEqual(metadataOf(bookmark?.object)['annotations'], { 'k8s.io/initial-events-end': 'true' }, `bookmark for ${flag}`);
    }
    for (const flag of ['False', 'FALSE', '0']) {
      const list = await request(t.sandbox, 'GET', `${WIDGETS}?watch=${flag}`);
      assert.equal(list.status, 200);
      assert.equal(list.json?.['kind'], 'WidgetList', `watch=${flag} is a list`);
    }
  });

  it('closes every watch on dropWatches()', async () => {
    const watch = openWatch(t.sandbox, `${WIDGETS}?watch=1`);
    await eventually(() => watch.events.length >= 1);
    t.sandbox.dropWatches();
    await watch.ended;
  });

  it('keeps a client-node informer complete through a dropped watch and a 410 Gone', async () => {
    const custom = t.kc.makeApiClient(CustomObjectsApi);
    const listFn = async (): Promise<KubernetesListObject<KubernetesObject>> =>
      (await custom.listNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' })) as KubernetesListObject<KubernetesObject>;
    const informer = makeInformer<KubernetesObject>(t.kc, WIDGETS, listFn);
    let stopped = false;
    informer.on('error', () => {
      // client-node's informer stops on a broken connection; restart it as an operator would
      setTimeout(() => {
        if (!stopped) void informer.start().catch(() => undefined);
      }, 50);
    });
    await informer.start();
    const sizeIn = (name: string): unknown => (informer.get(name, 'default') as Obj | undefined)?.['spec'] && ((informer.get(name, 'default') as Obj)['spec'] as Obj)['size'];
    try {
      await request(t.sandbox, 'POST', WIDGETS, { body: widget('inf-1', { size: 1 }) });
      await eventually(() => informer.get('inf-1', 'default') !== undefined, 20_000, 'inf-1 in cache');

      t.sandbox.dropWatches();
      await request(t.sandbox, 'POST', WIDGETS, { body: widget('inf-2', { size: 2 }) });
      await request(t.sandbox, 'PATCH', `${WIDGETS}/inf-1`, { body: { spec: { size: 10 } }, contentType: 'application/merge-patch+json' });
      await eventually(() => informer.get('inf-2', 'default') !== undefined && sizeIn('inf-1') === 10, 30_000, 'changes after a drop');

      t.sandbox.dropWatches();
      await request(t.sandbox, 'DELETE', `${WIDGETS}/inf-2`);
      await request(t.sandbox, 'POST', WIDGETS, { body: widget('inf-3', { size: 3 }) });
      t.sandbox.compactHistory();
      await request(t.sandbox, 'PATCH', `${WIDGETS}/inf-3`, { body: { spec: { size: 30 } }, contentType: 'application/merge-patch+json' });
      await eventually(() => informer.get('inf-2', 'default') === undefined && sizeIn('inf-3') === 30, 30_000, 'changes across a 410 Gone');

      const names = informer.list('default').map((o) => o.metadata?.name).sort();
      const server = await request(t.sandbox, 'GET', WIDGETS);
      const serverNames = ((server.json?.['items'] as Obj[]) ?? []).map((o) => String(metadataOf(o)['name'])).sort();
      assert.deepEqual(names, serverNames);
    } finally {
      stopped = true;
      await informer.stop();
    }
  });
});
