// The fault injector (`startSandbox({ faults })`): which requests get which of kube-apiserver's
// failures, that a request faulted before it is served changes nothing, that a write faulted after
// it is stored is stored and then answered 500 or cut, that it replays from its seed, and that it
// switches on and off at run time.
import { describe, it, after, before } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { API_FAULT_KINDS, type Sandbox } from '@k8or/apiserver';
import { FaultInjector, type FaultableRequest } from '../dist/endpoints/faults.js';
import { metadataOf, openWatch, request, startTestSandbox, eventually } from './helpers.ts';

const SA = 'system:serviceaccount:k8or-system:k8or';
const req = (verb: FaultableRequest['verb'], extra: Partial<FaultableRequest> = {}): FaultableRequest => ({
  verb,
  username: SA,
  group: 'k8or.io',
  resource: 'buckets',
  name: 'photos',
  resumes: false,
  ...extra,
});

describe('FaultInjector.decide', () => {
  it('never faults at rate 0, nor when disabled, nor the sandbox admin unless named', () => {
    assert.equal(new FaultInjector({ rate: 0 }).decide(req('get')), undefined);
    const off = new FaultInjector({ rate: 1, enabled: false });
    assert.equal(off.decide(req('get')), undefined);
    off.enable();
    assert.ok(off.decide(req('get')));
    assert.equal(new FaultInjector({ rate: 1 }).decide(req('get', { username: 'k8or-sandbox-admin' })), undefined);
    assert.ok(new FaultInjector({ rate: 1, users: ['k8or-sandbox-admin'] }).decide(req('get', { username: 'k8or-sandbox-admin' })));
    assert.equal(new FaultInjector({ rate: 1, users: ['someone-else'] }).decide(req('get')), undefined);
  });

  it('gives each request only the faults that apply to it', () => {
    const seen = new Map<string, Set<string>>();
    const injector = new FaultInjector({ rate: 1, seed: 7 });
    const cases: Array<[string, FaultableRequest]> = [
      ['get', req('get')],
      ['create', req('create')],
      ['patch', req('patch')],
      ['delete', req('delete')],
      ['watch from now', req('watch')],
      ['resuming watch', req('watch', { resumes: true })],
      ['paged list', req('list', { resumes: true })],
    ];
    for (let i = 0; i < 400; i++) {
      for (const [label, request] of cases) {
        const decision = injector.decide(request);
        assert.ok(decision, label);
        (seen.get(label) ?? seen.set(label, new Set()).get(label)!).add(decision.kind);
      }
    }
    assert.deepEqual([...seen.get('get')!].sort(), ['internal', 'throttle']);
    assert.deepEqual([...seen.get('create')!].sort(), ['cutAfterWrite', 'internal', 'internalAfterWrite', 'throttle']);
    assert.deepEqual([...seen.get('patch')!].sort(), ['conflict', 'cutAfterWrite', 'internal', 'internalAfterWrite', 'throttle']);
    assert.deepEqual([...seen.get('delete')!].sort(), ['cutAfterWrite', 'internal', 'internalAfterWrite', 'throttle']);
    assert.deepEqual([...seen.get('watch from now')!].sort(), ['dropWatch', 'internal', 'throttle']);
    assert.deepEqual([...seen.get('resuming watch')!].sort(), ['dropWatch', 'gone', 'internal', 'throttle']);
    assert.deepEqual([...seen.get('paged list')!].sort(), ['gone', 'internal', 'throttle']);
    assert.equal(injector.total, 400 * cases.length);
  });

  it('keeps to the kinds asked for, at about the rate asked for', () => {
    const injector = new FaultInjector({ rate: 0.2, kinds: ['conflict'], seed: 3 });
    assert.equal(injector.decide(req('get')), undefined, 'a get cannot conflict');
    let faulted = 0;
    for (let i = 0; i < 5000; i++) if (injector.decide(req('update'))?.kind === 'conflict') faulted++;
    assert.ok(faulted > 800 && faulted < 1200, `${faulted} of 5000 at rate 0.2`);
    assert.deepEqual(injector.injected, { conflict: faulted, throttle: 0, internal: 0, gone: 0, dropWatch: 0, internalAfterWrite: 0, cutAfterWrite: 0 });
  });

  it('replays the same faults from the same seed', () => {
    const sequence = (seed: number): string[] => {
      const injector = new FaultInjector({ rate: 0.5, seed });
      return Array.from({ length: 200 }, (_, i) => injector.decide(req(i % 2 ? 'patch' : 'watch', { resumes: i % 3 === 0 }))?.kind ?? '-');
    };
    assert.deepEqual(sequence(42), sequence(42));
    assert.notDeepEqual(sequence(42), sequence(43));
  });

  it('refuses options that break their rules, naming the option', () => {
    assert.throws(() => new FaultInjector({ rate: 1.5 }), /faults\.rate must be a number from 0 to 1, got 1\.5/);
    assert.throws(() => new FaultInjector({ rate: 0.1, kinds: ['teapot' as never] }), new RegExp(`faults\\.kinds: "teapot" is not one of ${API_FAULT_KINDS.join(', ')}`));
    assert.throws(() => new FaultInjector({ rate: 0.1 }).configure({ seed: 1.5 }), /faults\.seed must be an integer, got 1\.5/);
  });
});

describe('startSandbox({ faults }) on the wire', () => {
  let sandbox: Sandbox;
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { colour: 'blue' } };

  before(async () => {
    // the admin named, so the test's own token is faulted; off until each case switches it on
    ({ sandbox } = await startTestSandbox({ faults: { rate: 1, users: ['k8or-sandbox-admin'], enabled: false, seed: 11 } }));
    assert.equal((await request(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm })).status, 201);
  });
  after(() => sandbox.stop());

  it('answers 429 with Retry-After and the TooManyRequests Status, and serves again once disabled', async () => {
    sandbox.faults.configure({ kinds: ['throttle'], enabled: true });
    const throttled = await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/settings');
    sandbox.faults.disable();
    assert.equal(throttled.status, 429);
    assert.equal(throttled.headers['retry-after'], '1');
    assert.deepEqual(throttled.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Too many requests, please try again later.',
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 1 },
      code: 429,
    });
    assert.equal((await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/settings')).status, 200);
  });

  it('answers 409 Conflict to a patch and 500 to a create, storing nothing', async () => {
    const before = (await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/settings')).json!;
    sandbox.faults.configure({ kinds: ['conflict'], enabled: true });
    const patched = await request(sandbox, 'PATCH', '/api/v1/namespaces/default/configmaps/settings', { body: { data: { colour: 'red' } }, contentType: 'application/merge-patch+json' });
    sandbox.faults.configure({ kinds: ['internal'] });
    const created = await request(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm, metadata: { name: 'other', namespace: 'default' } } });
    sandbox.faults.disable();
    assert.equal(patched.status, 409);
    assert.equal(patched.json?.['reason'], 'Conflict');
    assert.equal(patched.json?.['message'], 'Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again');
    assert.equal(created.status, 500);
    assert.equal(created.json?.['reason'], 'InternalError');
    assert.deepEqual((await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/settings')).json, before);
    assert.equal((await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/other')).status, 404);
  });

  it('stores a create and a patch, tells the watchers, then answers 500 as when etcd times out', async () => {
    const list = (await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps')).json!;
    const watch = openWatch(sandbox, `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${String(metadataOf(list)['resourceVersion'])}`);
    sandbox.faults.configure({ kinds: ['internalAfterWrite'], enabled: true });
    const created = await request(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm, metadata: { name: 'timed-out', namespace: 'default' } } });
    const patched = await request(sandbox, 'PATCH', '/api/v1/namespaces/default/configmaps/timed-out', { body: { data: { colour: 'green' } }, contentType: 'application/merge-patch+json' });
    sandbox.faults.disable();
    assert.equal(created.status, 500);
    assert.equal(created.json?.['reason'], 'InternalError');
    assert.match(String(created.json?.['message']), /^Internal error occurred: etcdserver: request timed out/);
    assert.equal(patched.status, 500);
    const stored = await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/timed-out');
    assert.equal(stored.status, 200, 'the create was stored');
    assert.deepEqual(stored.json?.['data'], { colour: 'green' }, 'the patch was stored');
    await eventually(() => watch.events.length >= 2);
    watch.stop();
    assert.deepEqual(
      watch.events.map((e) => [e.type, metadataOf(e.object)['name'], (e.object['data'] as Record<string, string>)['colour']]),
      [['ADDED', 'timed-out', 'blue'], ['MODIFIED', 'timed-out', 'green']],
    );
    assert.equal(sandbox.faults.injected.internalAfterWrite, 2);
  });

  it('stores a delete, then cuts the connection without an answer', async () => {
    assert.equal((await request(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm, metadata: { name: 'cut-off', namespace: 'default' } } })).status, 201);
    sandbox.faults.configure({ kinds: ['cutAfterWrite'], enabled: true });
    const deleted = await request(sandbox, 'DELETE', '/api/v1/namespaces/default/configmaps/cut-off').then(
      (res) => `answered ${res.status}`,
      (error: NodeJS.ErrnoException) => `cut: ${error.code ?? error.message}`,
    );
    sandbox.faults.disable();
    assert.match(deleted, /^cut: (ECONNRESET|socket hang up)/);
    assert.equal((await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps/cut-off')).status, 404, 'the delete was stored');
    assert.equal(sandbox.faults.injected.cutAfterWrite, 1);
  });

  it('lets a write that fails by itself answer its own failure: nothing was stored to lose the answer of', async () => {
    sandbox.faults.configure({ kinds: ['internalAfterWrite', 'cutAfterWrite'], enabled: true });
    const again = await request(sandbox, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm });
    sandbox.faults.disable();
    assert.equal(again.status, 409);
    assert.equal(again.json?.['reason'], 'AlreadyExists');
  });

  it('ends a watch that resumes from a resourceVersion with the 410 Expired ERROR event', async () => {
    const rv = String(((await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps')).json!['metadata'] as { resourceVersion: string }).resourceVersion);
    sandbox.faults.configure({ kinds: ['gone'], enabled: true });
    const watch = await request(sandbox, 'GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv}`);
    // a watch from the current state cannot be too old: it is served
    const list = await request(sandbox, 'GET', '/api/v1/namespaces/default/configmaps');
    sandbox.faults.disable();
    assert.equal(watch.status, 200);
    const event = JSON.parse(watch.text.trim()) as { type: string; object: { code: number; reason: string } };
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410);
    assert.equal(event.object.reason, 'Expired');
    assert.equal(list.status, 200);
  });

  it('cuts a watch without a word a little after it opened', async () => {
    sandbox.faults.configure({ kinds: ['dropWatch'], enabled: true });
    const ended = await new Promise<string>((resolve, reject) => {
      const url = new URL('/api/v1/namespaces/default/configmaps?watch=1', sandbox.url);
      https
        .get(url, { headers: { Authorization: `Bearer ${sandbox.token}` }, ca: sandbox.caPem, agent: false }, (res) => {
          let events = 0;
          res.on('data', () => events++);
          res.on('error', () => resolve(`cut after ${events} chunks`));
          res.on('close', () => resolve(res.complete ? 'ended cleanly' : `cut after ${events} chunks`));
        })
        .on('error', reject);
    });
    sandbox.faults.disable();
    assert.match(ended, /^cut after/);
    assert.equal(sandbox.faults.injected.dropWatch, 1);
  });
});
