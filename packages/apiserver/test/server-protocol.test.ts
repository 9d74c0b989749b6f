// The HTTP surface: auth, discovery, bad input, lists with selectors and pages, dryRun, patch types,
// server-side apply and Table output.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { installWidgetCrd, metadataOf, request, startTestSandbox, widget, WIDGETS, type TestSandbox } from './helpers.ts';

type Obj = Record<string, unknown>;
const names = (list: Obj | undefined): string[] => ((list?.['items'] as Obj[] | undefined) ?? []).map((o) => String(metadataOf(o)['name']));

describe('HTTP surface', () => {
  let t: TestSandbox;

  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
    for (const [name, labels, size] of [
      ['a', { tier: 'gold', env: 'prod' }, 1],
      ['b', { tier: 'silver', env: 'prod' }, 2],
      ['c', { tier: 'bronze' }, 3],
      ['d', {}, 4],
    ] as const) {
      const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget(name, { size }, { labels }) });
      assert.equal(res.status, 201, res.text);
    }
  });
  after(() => t.sandbox.stop());

  describe('authentication', () => {
    it('answers 401 Unauthorized without a token or with a wrong one', async () => {
      for (const token of [null, 'not-the-token']) {
        const res = await request(t.sandbox, 'GET', '/api/v1/namespaces', { token });
        assert.equal(res.status, 401);
        assert.equal(res.json?.['kind'], 'Status');
        assert.equal(res.json?.['reason'], 'Unauthorized');
      }
    });

    it('writes a kubeconfig with the CA and the bearer token', () => {
      assert.match(t.sandbox.kubeconfig, /certificate-authority-data: /);
      assert.ok(t.sandbox.kubeconfig.includes(`token: ${t.sandbox.token}`));
      assert.ok(t.sandbox.kubeconfig.includes(t.sandbox.url));
    });
  });

  describe('discovery', () => {
    it('lists groups, versions and resources with verbs, short names and subresources', async () => {
      const version = await request(t.sandbox, 'GET', '/version');
      assert.equal(version.json?.['major'], '1');
      const api = await request(t.sandbox, 'GET', '/api');
      assert.deepEqual(api.json?.['versions'], ['v1']);
      const groups = await request(t.sandbox, 'GET', '/apis');
      const groupNames = ((groups.json?.['groups'] as Obj[]) ?? []).map((g) => g['name']);
      for (const g of ['apiextensions.k8s.io', 'admissionregistration.k8s.io', 'coordination.k8s.io', 'events.k8s.io', 'example.com']) assert.ok(groupNames.includes(g), g);
      const widgets = await request(t.sandbox, 'GET', '/apis/example.com/v1');
      const resources = (widgets.json?.['resources'] as Obj[]) ?? [];
      const main = resources.find((r) => r['name'] === 'widgets');
      assert.deepEqual(main?.['shortNames'], ['wd']);
      assert.deepEqual(main?.['categories'], ['all-widgets']);
      assert.equal(main?.['singularName'], 'widget');
      assert.equal(main?.['namespaced'], true);
      assert.ok((main?.['verbs'] as string[]).includes('watch'));
      assert.ok(resources.some((r) => r['name'] === 'widgets/status'));
      const group = await request(t.sandbox, 'GET', '/apis/example.com');
      assert.deepEqual(group.json?.['preferredVersion'], { groupVersion: 'example.com/v1', version: 'v1' });
    });

    it('answers aggregated discovery when asked for it, as kubectl 1.27+ asks', async () => {
      const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
      const apis = await request(t.sandbox, 'GET', '/apis', { headers: { Accept: accept } });
      assert.equal(apis.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
      const group = (apis.json?.['items'] as Obj[]).find((g) => (g['metadata'] as Obj)['name'] === 'example.com');
      const resources = ((group?.['versions'] as Obj[])[0]?.['resources'] as Obj[]) ?? [];
      const widgets = resources.find((r) => r['resource'] === 'widgets');
      assert.deepEqual(widgets?.['responseKind'], { group: 'example.com', version: 'v1', kind: 'Widget' });
      assert.equal(widgets?.['scope'], 'Namespaced');
      assert.deepEqual((widgets?.['subresources'] as Obj[]).map((s) => s['subresource']), ['status']);
      const core = await request(t.sandbox, 'GET', '/api', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList' } });
      assert.equal(core.json?.['apiVersion'], 'apidiscovery.k8s.io/v2beta1');
      const coreResources = (((core.json?.['items'] as Obj[])[0]?.['versions'] as Obj[])[0]?.['resources'] as Obj[]).map((r) => r['resource']);
      assert.ok(coreResources.includes('namespaces') && coreResources.includes('configmaps'));
    });

    it('marks the CRD Established and NamesAccepted', async () => {
      const crd = await request(t.sandbox, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
      const status = crd.json?.['status'] as Obj;
      const conditions = (status['conditions'] as Obj[]).map((c) => [c['type'], c['status']]);
      assert.deepEqual(conditions, [['NamesAccepted', 'True'], ['Established', 'True']]);
      assert.equal((status['acceptedNames'] as Obj)['kind'], 'Widget');
      assert.deepEqual(status['storedVersions'], ['v1']);
    });
  });

  describe('bad input', () => {
    it('answers malformed JSON and YAML with 400 BadRequest', async () => {
      const json = await request(t.sandbox, 'POST', WIDGETS, { body: '{"apiVersion": "example.com/v1", "kind": ', contentType: 'application/json' });
      assert.equal(json.status, 400);
      assert.equal(json.json?.['reason'], 'BadRequest');
      const yaml = await request(t.sandbox, 'POST', WIDGETS, { body: 'kind: [unclosed', contentType: 'application/yaml' });
      assert.equal(yaml.status, 400);
      const notAnObject = await request(t.sandbox, 'POST', WIDGETS, { body: '[1,2]' });
      assert.equal(notAnObject.status, 400);
    });

    it('answers a body nested too deep with 400 BadRequest, JSON and YAML alike, and keeps serving', async () => {
      const deep = (levels: number): string => `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;
      for (const [levels, contentType] of [[20_000, 'application/json'], [200_000, 'application/json'], [5_000, 'application/yaml']] as const) {
        const body = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"deep"},"spec":{"size":${deep(levels)}}}`;
        const res = await request(t.sandbox, 'POST', WIDGETS, { body, contentType });
        assert.equal(res.status, 400, `${levels} levels of ${contentType}: ${res.text.slice(0, 300)}`);
        assert.equal(res.json?.['reason'], 'BadRequest');
        // the YAML parser gives up on its own, before the depth check
        assert.match(String(res.json?.['message']), contentType === 'application/json' ? /exceeded max depth of 1000/ : /error converting YAML to JSON/);
      }
      const shallow = await request(t.sandbox, 'POST', `${WIDGETS}?dryRun=All`, { body: widget('shallow', { size: 1 }) });
      assert.equal(shallow.status, 201, shallow.text);
    });

    it('answers bodies over 3 MiB with 413', async () => {
      const res = await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'big' }, data: { blob: 'x'.repeat(3 * 1024 * 1024 + 10) } } });
      assert.equal(res.status, 413);
      assert.equal(res.json?.['reason'], 'RequestEntityTooLarge');
    });

    it('answers unknown resources and paths with 404 and keeps serving', async () => {
      for (const path of ['/apis/nope.example.com/v1/things', '/api/v1/namespaces/default/unicorns', '/apis/example.com/v9/widgets', '/definitely/not/here', '/apis/%zz']) {
        const res = await request(t.sandbox, 'GET', path);
        assert.ok([404, 400].includes(res.status), `${path}: ${res.status}`);
        assert.equal(res.json?.['kind'], 'Status');
      }
      const ok = await request(t.sandbox, 'GET', WIDGETS);
      assert.equal(ok.status, 200);
    });

    it('rejects broken selectors with 400', async () => {
      const bad = await request(t.sandbox, 'GET', `${WIDGETS}?labelSelector=${encodeURIComponent('tier in (gold')}`);
      assert.equal(bad.status, 400);
      const unsupported = await request(t.sandbox, 'GET', `${WIDGETS}?fieldSelector=spec.size%3D1`);
      assert.equal(unsupported.status, 400);
      assert.match(String(unsupported.json?.['message']), /field label not supported: spec.size/);
    });

    it('rejects a body whose apiVersion or namespace does not match the URL', async () => {
      const wrongVersion = await request(t.sandbox, 'POST', WIDGETS, { body: { ...widget('x'), apiVersion: 'example.com/v2' } });
      assert.equal(wrongVersion.status, 400);
      const wrongNamespace = await request(t.sandbox, 'POST', WIDGETS, { body: widget('x', { size: 1 }, { namespace: 'kube-system' }) });
      assert.equal(wrongNamespace.status, 400);
    });
  });

  describe('list', () => {
    const cases: Array<[string, string[]]> = [
      ['tier=gold', ['a']],
      ['tier==gold', ['a']],
      ['tier!=gold', ['b', 'c', 'd']],
      ['tier in (gold,silver)', ['a', 'b']],
      ['tier notin (gold,silver)', ['c', 'd']],
      ['env', ['a', 'b']],
      ['!env', ['c', 'd']],
      ['env=prod,tier=silver', ['b']],
    ];
    for (const [selector, expected] of cases) {
      it(`selects by label: ${selector}`, async () => {
        const res = await request(t.sandbox, 'GET', `${WIDGETS}?labelSelector=${encodeURIComponent(selector)}`);
        assert.equal(res.status, 200);
        assert.deepEqual(names(res.json), expected);
      });
    }

    it('selects by metadata.name and metadata.namespace field selectors', async () => {
      const byName = await request(t.sandbox, 'GET', `${WIDGETS}?fieldSelector=metadata.name%3Db`);
      assert.deepEqual(names(byName.json), ['b']);
      const notName = await request(t.sandbox, 'GET', `${WIDGETS}?fieldSelector=metadata.name!%3Db`);
      assert.deepEqual(names(notName.json), ['a', 'c', 'd']);
      const clusterWide = await request(t.sandbox, 'GET', `/apis/example.com/v1/widgets?fieldSelector=metadata.namespace%3Ddefault`);
      assert.deepEqual(names(clusterWide.json), ['a', 'b', 'c', 'd']);
    });

    it('pages with limit and continue', async () => {
      const first = await request(t.sandbox, 'GET', `${WIDGETS}?limit=3`);
      assert.deepEqual(names(first.json), ['a', 'b', 'c']);
      const meta = metadataOf(first.json);
      assert.equal(meta['remainingItemCount'], 1);
      assert.ok(meta['continue']);
      const second = await request(t.sandbox, 'GET', `${WIDGETS}?limit=3&continue=${encodeURIComponent(String(meta['continue']))}`);
      assert.deepEqual(names(second.json), ['d']);
      assert.equal(metadataOf(second.json)['continue'], undefined);
      assert.equal(metadataOf(second.json)['resourceVersion'], meta['resourceVersion']);
      const bad = await request(t.sandbox, 'GET', `${WIDGETS}?limit=3&continue=garbage`);
      assert.equal(bad.status, 400);
    });

    it('pages a selected list too, with no remainingItemCount (as the API server, which cannot count a selection ahead)', async () => {
      const first = await request(t.sandbox, 'GET', `${WIDGETS}?limit=2&fieldSelector=metadata.name!%3Db`);
      assert.deepEqual(names(first.json), ['a', 'c']);
      const meta = metadataOf(first.json);
      assert.equal(meta['remainingItemCount'], undefined);
      assert.ok(meta['continue']);
      const second = await request(t.sandbox, 'GET', `${WIDGETS}?limit=2&fieldSelector=metadata.name!%3Db&continue=${encodeURIComponent(String(meta['continue']))}`);
      assert.deepEqual(names(second.json), ['d']);
      assert.equal(metadataOf(second.json)['continue'], undefined);
    });

    it('serves later pages from the state the first page saw, and 410 once that state is gone', async () => {
      const first = await request(t.sandbox, 'GET', `${WIDGETS}?limit=2`);
      assert.deepEqual(names(first.json), ['a', 'b']);
      const token = encodeURIComponent(String(metadataOf(first.json)['continue']));
      await request(t.sandbox, 'POST', WIDGETS, { body: widget('bb') });
      await request(t.sandbox, 'PATCH', `${WIDGETS}/c`, { body: { metadata: { labels: { page: 'changed' } } }, contentType: 'application/merge-patch+json' });
      const second = await request(t.sandbox, 'GET', `${WIDGETS}?limit=2&continue=${token}`);
      assert.deepEqual(names(second.json), ['c', 'd'], 'bb was created after the first page');
      assert.equal((metadataOf(((second.json?.['items'] as Obj[]) ?? [])[0])['labels'] as Obj)['page'], undefined, 'c as it was');
      await request(t.sandbox, 'DELETE', `${WIDGETS}/bb`);
      t.sandbox.compactHistory();
      const expired = await request(t.sandbox, 'GET', `${WIDGETS}?limit=2&continue=${token}`);
      assert.equal(expired.status, 410);
      assert.equal(expired.json?.['reason'], 'Expired');
    });

    it('lists a namespaced kind across namespaces', async () => {
      await request(t.sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'other' } } });
      await request(t.sandbox, 'POST', '/apis/example.com/v1/namespaces/other/widgets', { body: widget('e', { size: 5 }, { namespace: 'other' }) });
      const all = await request(t.sandbox, 'GET', '/apis/example.com/v1/widgets');
      assert.deepEqual(names(all.json).sort(), ['a', 'b', 'c', 'd', 'e']);
      assert.equal(all.json?.['kind'], 'WidgetList');
    });
  });

  describe('dryRun=All', () => {
    it('validates and answers, but stores nothing and consumes no resourceVersion', async () => {
      const before = String(metadataOf((await request(t.sandbox, 'GET', WIDGETS)).json)['resourceVersion']);
      const created = await request(t.sandbox, 'POST', `${WIDGETS}?dryRun=All`, { body: widget('dry') });
      assert.equal(created.status, 201);
      assert.equal(metadataOf(created.json)['name'], 'dry');
      const invalidDry = await request(t.sandbox, 'POST', `${WIDGETS}?dryRun=All`, { body: widget('dry', { size: 1000 }) });
      assert.equal(invalidDry.status, 422);
      const patched = await request(t.sandbox, 'PATCH', `${WIDGETS}/a?dryRun=All`, { body: { spec: { size: 50 } }, contentType: 'application/merge-patch+json' });
      assert.equal((patched.json?.['spec'] as Obj)['size'], 50);
      const deleted = await request(t.sandbox, 'DELETE', `${WIDGETS}/b?dryRun=All`);
      assert.equal(deleted.status, 200);
      assert.equal((await request(t.sandbox, 'GET', `${WIDGETS}/dry`)).status, 404);
      assert.equal(((await request(t.sandbox, 'GET', `${WIDGETS}/a`)).json?.['spec'] as Obj)['size'], 1);
      assert.equal((await request(t.sandbox, 'GET', `${WIDGETS}/b`)).status, 200);
      const after = String(metadataOf((await request(t.sandbox, 'GET', WIDGETS)).json)['resourceVersion']);
      assert.equal(after, before);
      const logged = t.sandbox.requestLog.filter((e) => e.dryRun);
      assert.ok(logged.some((e) => e.verb === 'create') && logged.some((e) => e.verb === 'patch') && logged.some((e) => e.verb === 'delete'));
    });
  });

  describe('schema', () => {
    it('answers a schema violation with 422 Invalid, causes and the real message format', async () => {
      const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('huge', { size: 101 }) });
      assert.equal(res.status, 422);
      assert.equal(res.json?.['reason'], 'Invalid');
      assert.match(String(res.json?.['message']), /^Widget\.example\.com "huge" is invalid: spec\.size: Invalid value: 101: spec\.size in body should be less than or equal to 100/);
      const causes = (res.json?.['details'] as Obj)['causes'] as Obj[];
      assert.equal(causes[0]?.['field'], 'spec.size');
    });

    it('prunes unknown fields with a warning, or refuses them under fieldValidation=Strict', async () => {
      const warn = await request(t.sandbox, 'POST', WIDGETS, { body: widget('pruned', { size: 1, shape: 'round' }) });
      assert.equal(warn.status, 201);
      assert.equal((warn.json?.['spec'] as Obj)['shape'], undefined);
      assert.match(String(warn.headers['warning']), /299 - "unknown field \\"spec.shape\\""/);
      const strict = await request(t.sandbox, 'POST', `${WIDGETS}?fieldValidation=Strict`, { body: widget('strict', { size: 1, shape: 'round' }) });
      assert.equal(strict.status, 400);
      assert.match(String(strict.json?.['message']), /strict decoding error: unknown field "spec.shape"/);
    });

    it('applies schema defaults', async () => {
      const res = await request(t.sandbox, 'GET', `${WIDGETS}/a`);
      assert.equal((res.json?.['spec'] as Obj)['color'], 'red');
    });
  });

  describe('patch', () => {
    it('applies a JSON merge patch', async () => {
      const res = await request(t.sandbox, 'PATCH', `${WIDGETS}/c`, { body: { spec: { tags: ['x', 'y'] }, metadata: { labels: { tier: null } } }, contentType: 'application/merge-patch+json' });
      assert.equal(res.status, 200);
      assert.deepEqual((res.json?.['spec'] as Obj)['tags'], ['x', 'y']);
      assert.equal((metadataOf(res.json)['labels'] as Obj | undefined)?.['tier'], undefined);
    });

    it('applies a JSON patch, and fails a failing test op with 422', async () => {
      const res = await request(t.sandbox, 'PATCH', `${WIDGETS}/c`, { body: [{ op: 'add', path: '/spec/tags/-', value: 'z' }, { op: 'replace', path: '/spec/size', value: 30 }], contentType: 'application/json-patch+json' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual((res.json?.['spec'] as Obj)['tags'], ['x', 'y', 'z']);
      const failed = await request(t.sandbox, 'PATCH', `${WIDGETS}/c`, { body: [{ op: 'test', path: '/spec/size', value: 1 }], contentType: 'application/json-patch+json' });
      assert.equal(failed.status, 422);
    });

    it('refuses strategic merge patch on custom resources with 415, as the real server does', async () => {
      const res = await request(t.sandbox, 'PATCH', `${WIDGETS}/c`, { body: { spec: { size: 1 } }, contentType: 'application/strategic-merge-patch+json' });
      assert.equal(res.status, 415);
      assert.equal(res.json?.['reason'], 'UnsupportedMediaType');
      const unknownType = await request(t.sandbox, 'PATCH', `${WIDGETS}/c`, { body: '{}', contentType: 'text/plain' });
      assert.equal(unknownType.status, 415);
    });

    it('merges lists by key in a strategic merge patch of a built-in kind', async () => {
      const cm = { metadata: { name: 'owned', finalizers: ['a/one'], ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'p1', uid: 'u1' }] }, data: { k1: 'v1' } };
      assert.equal((await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm })).status, 201);
      const res = await request(t.sandbox, 'PATCH', '/api/v1/namespaces/default/configmaps/owned', {
        contentType: 'application/strategic-merge-patch+json',
        body: {
          metadata: { finalizers: ['b/two'], ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'p2', uid: 'u2' }, { uid: 'u1', $patch: 'delete' }] },
          data: { k2: 'v2' },
        },
      });
      assert.equal(res.status, 200, res.text);
      const meta = metadataOf(res.json);
      assert.deepEqual(meta['finalizers'], ['a/one', 'b/two']);
      assert.deepEqual((meta['ownerReferences'] as Obj[]).map((o) => o['uid']), ['u2']);
      assert.deepEqual(res.json?.['data'], { k1: 'v1', k2: 'v2' });
    });
  });

  describe('server-side apply', () => {
    const apply = (name: string, spec: Obj, manager: string, extra = ''): ReturnType<typeof request> =>
      request(t.sandbox, 'PATCH', `${WIDGETS}/${name}?fieldManager=${manager}${extra}`, {
        contentType: 'application/apply-patch+yaml',
        body: `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec: ${JSON.stringify(spec)}\n`,
      });

    it('creates, then updates, recording the field manager', async () => {
      const created = await apply('ssa', { size: 7, tags: ['t'] }, 'tester');
      assert.equal(created.status, 201, created.text);
      const managed = metadataOf(created.json)['managedFields'] as Obj[];
      assert.equal(managed[0]?.['manager'], 'tester');
      assert.equal(managed[0]?.['operation'], 'Apply');
      assert.deepEqual(managed[0]?.['fieldsV1'], { 'f:spec': { 'f:size': {}, 'f:tags': {} } });
      const updated = await apply('ssa', { size: 8 }, 'tester');
      assert.equal(updated.status, 200);
      const spec = updated.json?.['spec'] as Obj;
      assert.equal(spec['size'], 8);
      assert.equal(spec['tags'], undefined, 'a field the manager stopped applying is removed');
    });

    it('reports a conflict with another manager unless forced', async () => {
      const conflicting = await apply('ssa', { size: 9 }, 'intruder');
      assert.equal(conflicting.status, 409);
      assert.match(String(conflicting.json?.['message']), /Apply failed with 1 conflict: conflict with "tester"/);
      const forced = await apply('ssa', { size: 9 }, 'intruder', '&force=true');
      assert.equal(forced.status, 200);
      assert.equal((forced.json?.['spec'] as Obj)['size'], 9);
    });

    it('merges map-lists by key between managers and removes only what a manager stopped applying', async () => {
      assert.equal((await apply('lists', { rules: [{ id: 'a', days: 1 }] }, 'team-a')).status, 201);
      const both = await apply('lists', { rules: [{ id: 'b', days: 2 }] }, 'team-b');
      assert.deepEqual((both.json?.['spec'] as Obj)['rules'], [{ id: 'a', days: 1 }, { id: 'b', days: 2 }]);
      const fields = (metadataOf(both.json)['managedFields'] as Obj[]).find((m) => m['manager'] === 'team-b')?.['fieldsV1'];
      assert.deepEqual(fields, { 'f:spec': { 'f:rules': { 'k:{"id":"b"}': { '.': {}, 'f:id': {}, 'f:days': {} } } } });
      const clash = await apply('lists', { rules: [{ id: 'b', days: 5 }] }, 'team-a');
      assert.equal(clash.status, 409);
      assert.match(String(clash.json?.['message']), /conflict with "team-b" using example.com\/v1: \.spec\.rules\[id="b"\]\.days/);
      const withdrawn = await apply('lists', {}, 'team-a');
      assert.deepEqual((withdrawn.json?.['spec'] as Obj)['rules'], [{ id: 'b', days: 2 }]);
    });

    it('requires a fieldManager', async () => {
      const res = await request(t.sandbox, 'PATCH', `${WIDGETS}/ssa`, { contentType: 'application/apply-patch+yaml', body: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ssa}\n' });
      assert.equal(res.status, 400);
    });
  });

  describe('Table', () => {
    const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

    it('answers a list as a Table using the CRD printer columns', async () => {
      await request(t.sandbox, 'PATCH', `${WIDGETS}/a/status`, { contentType: 'application/merge-patch+json', body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
      const res = await request(t.sandbox, 'GET', `${WIDGETS}?labelSelector=env`, { headers: { Accept: TABLE } });
      assert.equal(res.json?.['kind'], 'Table');
      assert.equal(res.json?.['apiVersion'], 'meta.k8s.io/v1');
      const columns = (res.json?.['columnDefinitions'] as Obj[]).map((c) => c['name']);
      assert.deepEqual(columns, ['Name', 'Size', 'Ready', 'Age']);
      const rows = res.json?.['rows'] as Obj[];
      const cells = rows.map((r) => (r['cells'] as unknown[]).slice(0, 3));
      assert.deepEqual(cells, [['a', 1, 'True'], ['b', 2, null]]);
      assert.match(String((rows[0]?.['cells'] as unknown[])[3]), /^\d+s$/);
      assert.equal((rows[0]?.['object'] as Obj)['kind'], 'PartialObjectMetadata');
    });

    it('answers built-in kinds with their usual columns', async () => {
      const ns = await request(t.sandbox, 'GET', '/api/v1/namespaces/default', { headers: { Accept: TABLE } });
      assert.deepEqual((ns.json?.['columnDefinitions'] as Obj[]).map((c) => c['name']), ['Name', 'Status', 'Age']);
      assert.equal(((ns.json?.['rows'] as Obj[])[0]?.['cells'] as unknown[])[1], 'Active');
      const cms = await request(t.sandbox, 'GET', '/api/v1/namespaces/default/configmaps', { headers: { Accept: TABLE } });
      const row = (cms.json?.['rows'] as Obj[]).find((r) => (r['cells'] as unknown[])[0] === 'owned');
      assert.equal((row?.['cells'] as unknown[])[1], 2);
    });
  });

  it('records every request in the request log', async () => {
    t.sandbox.clearRequestLog();
    await request(t.sandbox, 'GET', `${WIDGETS}/a`);
    await request(t.sandbox, 'PATCH', `${WIDGETS}/a/status`, { contentType: 'application/merge-patch+json', body: { status: { phase: 'x' } } });
    await request(t.sandbox, 'GET', '/api/v1/namespaces/default/configmaps');
    assert.deepEqual(
      t.sandbox.requestLog.map((e) => [e.verb, e.group, e.resource, e.subresource ?? '', e.namespace ?? '', e.name ?? '', e.status]),
      [
        ['get', 'example.com', 'widgets', '', 'default', 'a', 200],
        ['patch', 'example.com', 'widgets', 'status', 'default', 'a', 200],
        ['list', '', 'configmaps', '', 'default', '', 200],
      ],
    );
  });
});

describe('built-in validation', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
  });
  after(() => t.sandbox.stop());

  it('refuses to delete the default, kube-system and kube-public namespaces', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const res = await request(t.sandbox, 'DELETE', `/api/v1/namespaces/${name}`);
      assert.equal(res.status, 403);
      assert.equal(res.json?.['message'], `namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
  });

  it('checks names, label keys and values, and secret data', async () => {
    const badName = await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'Not_Valid' } } });
    assert.equal(badName.status, 422);
    assert.match(String(badName.json?.['message']), /^ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain/);
    const badKey = await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'x', labels: { 'bad key': 'v' } } } });
    assert.equal(badKey.status, 422);
    const badValue = await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'x', labels: { ok: 'not ok' } } } });
    assert.equal(badValue.status, 422);
    const badFinalizer = await request(t.sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'x', finalizers: ['not a finalizer!'] } } });
    assert.equal(badFinalizer.status, 422);
    assert.match(String(badFinalizer.json?.['message']), /metadata.finalizers: Invalid value: "not a finalizer!"/);
    const badSecret = await request(t.sandbox, 'POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's' }, data: { k: 'not base64!' } } });
    assert.equal(badSecret.status, 400);
    assert.match(String(badSecret.json?.['message']), /illegal base64 data/);
  });
});

describe('Table watch', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(() => t.sandbox.stop());

  it('streams watch events as one-row Tables when asked, as kubectl get -w does', async () => {
    const https = await import('node:https');
    const lines: string[] = [];
    const req = https.request(new URL(`${WIDGETS}?watch=1`, t.sandbox.url), { headers: { Authorization: `Bearer ${t.sandbox.token}`, Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }, ca: t.sandbox.caPem, agent: false }, (res) => {
      let buffer = '';
      res.on('data', (c: Buffer) => {
        buffer += c.toString();
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        lines.push(...parts.filter(Boolean));
      });
    });
    req.end();
    await request(t.sandbox, 'POST', WIDGETS, { body: widget('tabled', { size: 6 }) });
    for (let i = 0; lines.length === 0; i++) {
      assert.ok(i < 1000, 'event received');
      await new Promise((r) => setTimeout(r, 20));
    }
    req.destroy();
    const event = JSON.parse(lines[0] as string) as { type: string; object: Obj };
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object['kind'], 'Table');
    assert.deepEqual(((event.object['rows'] as Obj[])[0]?.['cells'] as unknown[]).slice(0, 3), ['tabled', 6, null]);
  });
});
