// Admission webhooks called as kube-apiserver calls them, against a small HTTPS webhook in the test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, createServingCertificate } from '@k8or/apiserver';
import { installWidgetCrd, metadataOf, request, startTestSandbox, widget, WIDGETS, type TestSandbox } from './helpers.ts';

type Obj = Record<string, unknown>;
type Reply = (request: Obj) => Obj;

/** A webhook server: each path answers with its own reply function; every AdmissionReview is recorded. */
async function startWebhook(
  replies: Record<string, Reply>,
): Promise<{ port: number; caBundle: string; received: Array<{ path: string; request: Obj }>; tlsConnections: () => number; close(): Promise<void> }> {
  const ca = createCertificateAuthority('test-webhook-ca');
  const cert = createServingCertificate(ca, { dns: ['localhost', 'hooks.webhooks.svc'], ips: ['127.0.0.1'] });
  const received: Array<{ path: string; request: Obj }> = [];
  const server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
      const request = review['request'] as Obj;
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      received.push({ path, request });
      if (path === '/slow') return; // never answers: the API server's timeoutSeconds must end the call
      const reply = replies[path];
      if (!reply) {
        res.writeHead(404);
        res.end();
        return;
      }
      const response = { uid: request['uid'], ...reply(request) };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  let tlsConnections = 0;
  server.on('secureConnection', () => tlsConnections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    received,
    tlsConnections: () => tlsConnections,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const patchOf = (ops: unknown[]): string => Buffer.from(JSON.stringify(ops)).toString('base64');

describe('admission webhooks', () => {
  let t: TestSandbox;
  let hook: Awaited<ReturnType<typeof startWebhook>>;

  const rule = (resources: string[], operations = ['CREATE', 'UPDATE']): Obj => ({ apiGroups: ['example.com'], apiVersions: ['v1'], operations, resources, scope: '*' });
  const webhookConfig = (kind: 'Validating' | 'Mutating', name: string, webhooks: Obj[]): Obj => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: webhooks.map((w) => ({ sideEffects: 'None', admissionReviewVersions: ['v1'], ...w })),
  });
  const byUrl = (path: string): Obj => ({ url: `https://127.0.0.1:${hook.port}${path}`, caBundle: hook.caBundle });
  const install = async (config: Obj): Promise<void> => {
    const plural = String(config['kind']).toLowerCase() + 's';
    const res = await request(t.sandbox, 'POST', `/apis/admissionregistration.k8s.io/v1/${plural}`, { body: config });
    assert.equal(res.status, 201, res.text);
  };
  const remove = async (config: Obj): Promise<void> => {
    const plural = String(config['kind']).toLowerCase() + 's';
    await request(t.sandbox, 'DELETE', `/apis/admissionregistration.k8s.io/v1/${plural}/${String(metadataOf(config)['name'])}`);
  };

  before(async () => {
    hook = await startWebhook({
      '/allow': () => ({ allowed: true }),
      '/deny': (r) => ({ allowed: false, status: { code: 403, message: `widgets named ${String((r['object'] as Obj | null) ? metadataOf(r['object'] as Obj)['name'] : r['name'])} are not allowed` } }),
      '/warn': () => ({ allowed: true, warnings: ['size is large', 'colour "red" is dated'] }),
      '/label': () => ({ allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]) }),
      '/oversize': () => ({ allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'replace', path: '/spec/size', value: 1000 }]) }),
    });
    t = await startTestSandbox({ serviceResolver: (_ns, _name, _port) => `https://127.0.0.1:${hook.port}` });
    await installWidgetCrd(t.sandbox);
  });
  after(async () => {
    await t.sandbox.stop();
    await hook.close();
  });

  it('sends an AdmissionReview with the object, user, operation and options, and allows', async () => {
    const config = webhookConfig('Validating', 'allow', [{ name: 'allow.example.com', clientConfig: byUrl('/allow'), rules: [rule(['widgets'], ['*'])] }]);
    await install(config);
    hook.received.length = 0;
    const created = await request(t.sandbox, 'POST', `${WIDGETS}?fieldManager=tester`, { body: widget('reviewed') });
    assert.equal(created.status, 201);
    const updated = await request(t.sandbox, 'PATCH', `${WIDGETS}/reviewed?dryRun=All`, { body: { spec: { size: 2 } }, contentType: 'application/merge-patch+json' });
    assert.equal(updated.status, 200);
    await request(t.sandbox, 'DELETE', `${WIDGETS}/reviewed`);
    const [create, update, del] = hook.received.map((r) => r.request);
    assert.equal(create?.['operation'], 'CREATE');
    assert.deepEqual(create?.['kind'], { group: 'example.com', version: 'v1', kind: 'Widget' });
    assert.deepEqual(create?.['resource'], { group: 'example.com', version: 'v1', resource: 'widgets' });
    assert.equal(create?.['namespace'], 'default');
    assert.equal(create?.['name'], 'reviewed');
    assert.equal(create?.['dryRun'], false);
    assert.equal((create?.['userInfo'] as Obj)['username'], 'k8or-sandbox-admin');
    assert.equal((create?.['options'] as Obj)['kind'], 'CreateOptions');
    assert.equal((create?.['options'] as Obj)['fieldManager'], 'tester');
    assert.equal(metadataOf(create?.['object'] as Obj)['name'], 'reviewed');
    assert.equal(create?.['oldObject'], null);
    assert.equal(update?.['operation'], 'UPDATE');
    assert.equal(update?.['dryRun'], true);
    assert.equal(((update?.['oldObject'] as Obj)['spec'] as Obj)['size'], 1);
    assert.equal(((update?.['object'] as Obj)['spec'] as Obj)['size'], 2);
    assert.equal(del?.['operation'], 'DELETE');
    assert.equal(del?.['object'], null);
    assert.equal(metadataOf(del?.['oldObject'] as Obj)['name'], 'reviewed');
    await remove(config);
  });

  it('returns a denial to the client worded as the real server words it', async () => {
    const config = webhookConfig('Validating', 'deny', [{ name: 'deny.example.com', clientConfig: byUrl('/deny'), rules: [rule(['widgets'])] }]);
    await install(config);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('forbidden') });
    assert.equal(res.status, 403);
    assert.equal(res.json?.['message'], 'admission webhook "deny.example.com" denied the request: widgets named forbidden are not allowed');
    assert.equal((await request(t.sandbox, 'GET', `${WIDGETS}/forbidden`)).status, 404);
    await remove(config);
  });

  it('passes every webhook warning to the client as Warning headers', async () => {
    const config = webhookConfig('Validating', 'warn', [{ name: 'warn.example.com', clientConfig: byUrl('/warn'), rules: [rule(['widgets'])] }]);
    await install(config);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('warned') });
    assert.equal(res.status, 201);
    const warnings = String(res.headers['warning']).split(', 299').map((w) => w.replace(/^ - /, '299 - '));
    assert.deepEqual(warnings, ['299 - "size is large"', '299 - "colour \\"red\\" is dated"']);
    await remove(config);
  });

  it('applies JSONPatch mutations before schema validation', async () => {
    const label = webhookConfig('Mutating', 'label', [{ name: 'label.example.com', clientConfig: byUrl('/label'), rules: [rule(['widgets'])] }]);
    await install(label);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('mutated') });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(metadataOf(res.json)['labels'], { mutated: 'yes' });
    await remove(label);
    const oversize = webhookConfig('Mutating', 'oversize', [{ name: 'oversize.example.com', clientConfig: byUrl('/oversize'), rules: [rule(['widgets'])] }]);
    await install(oversize);
    const invalid = await request(t.sandbox, 'POST', WIDGETS, { body: widget('too-big-after-mutation') });
    assert.equal(invalid.status, 422);
    assert.match(String(invalid.json?.['message']), /spec\.size/);
    await remove(oversize);
  });

  it('matches subresources, operations, and namespace and object selectors', async () => {
    const config = webhookConfig('Validating', 'selective', [
      { name: 'status.example.com', clientConfig: byUrl('/deny'), rules: [rule(['widgets/status'], ['UPDATE'])] },
      { name: 'labelled.example.com', clientConfig: byUrl('/deny'), rules: [rule(['widgets'], ['CREATE'])], objectSelector: { matchLabels: { guarded: 'true' } } },
      { name: 'ns.example.com', clientConfig: byUrl('/deny'), rules: [rule(['widgets'], ['CREATE'])], namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['locked'] }] } },
    ]);
    await install(config);
    assert.equal((await request(t.sandbox, 'POST', WIDGETS, { body: widget('free') })).status, 201);
    assert.equal((await request(t.sandbox, 'PATCH', `${WIDGETS}/free`, { body: { spec: { size: 3 } }, contentType: 'application/merge-patch+json' })).status, 200);
    const status = await request(t.sandbox, 'PATCH', `${WIDGETS}/free/status`, { body: { status: { phase: 'x' } }, contentType: 'application/merge-patch+json' });
    assert.equal(status.status, 403);
    assert.match(String(status.json?.['message']), /status\.example\.com/);
    const guarded = await request(t.sandbox, 'POST', WIDGETS, { body: widget('guarded', { size: 1 }, { labels: { guarded: 'true' } }) });
    assert.equal(guarded.status, 403);
    await request(t.sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'locked' } } });
    const locked = await request(t.sandbox, 'POST', '/apis/example.com/v1/namespaces/locked/widgets', { body: widget('w', { size: 1 }, { namespace: 'locked' }) });
    assert.equal(locked.status, 403);
    assert.match(String(locked.json?.['message']), /ns\.example\.com/);
    await remove(config);
  });

  it('reaches clientConfig.service through the service resolver and verifies the caBundle', async () => {
    const config = webhookConfig('Validating', 'service', [
      { name: 'service.example.com', clientConfig: { service: { namespace: 'webhooks', name: 'hooks', path: '/deny', port: 443 }, caBundle: hook.caBundle }, rules: [rule(['widgets'])] },
    ]);
    await install(config);
    const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('via-service') });
    assert.equal(res.status, 403);
    await remove(config);
    const untrusted = webhookConfig('Validating', 'untrusted', [
      { name: 'untrusted.example.com', clientConfig: { url: `https://127.0.0.1:${hook.port}/allow`, caBundle: Buffer.from(createCertificateAuthority().certPem).toString('base64') }, rules: [rule(['widgets'])] },
    ]);
    await install(untrusted);
    const refused = await request(t.sandbox, 'POST', WIDGETS, { body: widget('untrusted') });
    assert.equal(refused.status, 500);
    assert.match(String(refused.json?.['message']), /failed calling webhook "untrusted.example.com"/);
    await remove(untrusted);
  });

  it('gives every webhook call a uid of its own; each mutating webhook sees the object as the one before patched it', async () => {
    const mutating = webhookConfig('Mutating', 'chain-mutating', [
      { name: 'label.chain.example.com', clientConfig: byUrl('/label'), rules: [rule(['widgets'])] },
      { name: 'allow.chain.example.com', clientConfig: byUrl('/allow'), rules: [rule(['widgets'])] },
    ]);
    const validating = webhookConfig('Validating', 'chain-validating', [
      { name: 'allow.chain.example.com', clientConfig: byUrl('/allow'), rules: [rule(['widgets'])] },
      { name: 'warn.chain.example.com', clientConfig: byUrl('/warn'), rules: [rule(['widgets'])] },
    ]);
    await install(mutating);
    await install(validating);
    try {
      hook.received.length = 0;
      const res = await request(t.sandbox, 'POST', WIDGETS, { body: widget('chained') });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(metadataOf(res.json)['labels'], { mutated: 'yes' });
      const [label, allow, ...validations] = hook.received;
      assert.deepEqual([label?.path, allow?.path, ...validations.map((v) => v.path).sort()], ['/label', '/allow', '/allow', '/warn']);
      assert.equal(metadataOf(label!.request['object'] as Obj)['labels'], undefined, 'the first mutating webhook sees the object as sent');
      assert.deepEqual(metadataOf(allow!.request['object'] as Obj)['labels'], { mutated: 'yes' }, 'the second sees the first one’s patch');
      const uids = hook.received.map((r) => r.request['uid']);
      assert.equal(new Set(uids).size, 4, `uids ${uids.join(', ')}`);
      // The validating webhooks see one request, but for its uid.
      const [first, second] = validations.map((v): Obj => ({ ...v.request, uid: undefined }));
      assert.deepEqual(first, second);
      assert.deepEqual(metadataOf(first!['object'] as Obj)['labels'], { mutated: 'yes' });
      assert.equal(first!['operation'], 'CREATE');
    } finally {
      await remove(mutating);
      await remove(validating);
    }
  });

  it('keeps its connections to a webhook open between calls instead of a TLS handshake per call', async () => {
    const mutating = webhookConfig('Mutating', 'reuse-mutating', [{ name: 'reuse-mutating.example.com', clientConfig: byUrl('/label'), rules: [rule(['widgets'])] }]);
    const validating = webhookConfig('Validating', 'reuse-validating', [{ name: 'reuse-validating.example.com', clientConfig: byUrl('/allow'), rules: [rule(['widgets'])] }]);
    await install(mutating);
    await install(validating);
    try {
      const connectionsBefore = hook.tlsConnections();
      const callsBefore = hook.received.length;
      for (let i = 0; i < 20; i++) assert.equal((await request(t.sandbox, 'POST', WIDGETS, { body: widget(`reuse-${i}`) })).status, 201);
      assert.equal(hook.received.length - callsBefore, 40, 'every create called both webhooks');
      const opened = hook.tlsConnections() - connectionsBefore;
      assert.ok(opened <= 2, `40 calls opened ${opened} TLS connections`);
    } finally {
      await remove(mutating);
      await remove(validating);
    }
  });

  it('gives up on a webhook after its timeoutSeconds and applies failurePolicy', async () => {
    const slow = webhookConfig('Validating', 'slow', [{ name: 'slow.example.com', clientConfig: byUrl('/slow'), rules: [rule(['widgets'])], timeoutSeconds: 1 }]);
    await install(slow);
    const refused = await request(t.sandbox, 'POST', WIDGETS, { body: widget('slow-fail') });
    assert.equal(refused.status, 500);
    assert.match(String(refused.json?.['message']), /failed calling webhook "slow.example.com": failed to call webhook: Post ".*\/slow": context deadline exceeded/);
    await remove(slow);
    const lenient = webhookConfig('Validating', 'slow-ignore', [{ name: 'slow.example.com', clientConfig: byUrl('/slow'), rules: [rule(['widgets'])], timeoutSeconds: 1, failurePolicy: 'Ignore' }]);
    await install(lenient);
    assert.equal((await request(t.sandbox, 'POST', WIDGETS, { body: widget('slow-ignore') })).status, 201);
    await remove(lenient);
  });

  it('follows failurePolicy when the webhook is down: Fail refuses, Ignore lets the write through', async () => {
    const downUrl = { url: 'https://127.0.0.1:1/down', caBundle: hook.caBundle };
    const fail = webhookConfig('Validating', 'down-fail', [{ name: 'down.example.com', clientConfig: downUrl, rules: [rule(['widgets'])], failurePolicy: 'Fail', timeoutSeconds: 2 }]);
    await install(fail);
    const refused = await request(t.sandbox, 'POST', WIDGETS, { body: widget('while-down') });
    assert.equal(refused.status, 500);
    assert.equal(refused.json?.['reason'], 'InternalError');
    assert.match(String(refused.json?.['message']), /^Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https:\/\/127.0.0.1:1\/down"/);
    await remove(fail);
    const ignore = webhookConfig('Validating', 'down-ignore', [{ name: 'down.example.com', clientConfig: downUrl, rules: [rule(['widgets'])], failurePolicy: 'Ignore', timeoutSeconds: 2 }]);
    await install(ignore);
    assert.equal((await request(t.sandbox, 'POST', WIDGETS, { body: widget('while-down') })).status, 201);
    await remove(ignore);
  });

  it('refuses a v1 webhook that may have side effects or speaks no v1 review, naming the field and the rule', async () => {
    const config = webhookConfig('Validating', 'side-effects', [
      { name: 'some.example.com', clientConfig: byUrl('/allow'), rules: [rule(['widgets'])], sideEffects: 'Some' },
      { name: 'old.example.com', clientConfig: byUrl('/allow'), rules: [rule(['widgets'])], admissionReviewVersions: ['v0'] },
    ]);
    const res = await request(t.sandbox, 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { body: config });
    assert.equal(res.status, 422);
    const causes = (res.json?.['details'] as { causes?: { field: string; message: string }[] } | undefined)?.causes ?? [];
    assert.deepEqual(
      causes.map((c) => `${c.field}: ${c.message}`),
      [
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        'webhooks[1].admissionReviewVersions: Invalid value: ["v0"]: must include at least one of v1, v1beta1',
      ],
    );
  });
});
