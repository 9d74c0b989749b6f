// Admission webhooks that speak HTTP/2 (as kube-apiserver's Go client prefers it, and as @k8or/webhook
// serves): the API server negotiates h2 in the TLS handshake and sends every call as a stream on one
// connection.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createCertificateAuthority, createServingCertificate } from '@k8or/apiserver';
import { installWidgetCrd, metadataOf, request, startTestSandbox, widget, WIDGETS, type TestSandbox } from './helpers.ts';

type Obj = Record<string, unknown>;

/** An HTTP/2-only webhook (no HTTP/1.1 fallback): records each call's protocol version and counts TLS connections. */
async function startHttp2Webhook(): Promise<{ port: number; caBundle: string; calls: Array<{ path: string; httpVersion: string }>; tlsConnections: () => number; closeSessions(): Promise<void>; close(): Promise<void> }> {
  const ca = createCertificateAuthority('test-h2-webhook-ca');
  const cert = createServingCertificate(ca, { dns: ['localhost'], ips: ['127.0.0.1'] });
  const calls: Array<{ path: string; httpVersion: string }> = [];
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createSecureServer({ cert: cert.certPem, key: cert.keyPem, allowHTTP1: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: Obj };
      calls.push({ path: req.url, httpVersion: req.httpVersion });
      if (req.url === '/slow') return; // never answers: the API server's timeoutSeconds must end the call
      const response: Obj = { uid: review.request['uid'], allowed: true };
      if (req.url === '/label') {
        response['patchType'] = 'JSONPatch';
        response['patch'] = Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { mutated: 'over-h2' } }])).toString('base64');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  let tlsConnections = 0;
  server.on('secureConnection', () => tlsConnections++);
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const closeSessions = async (): Promise<void> => {
    await Promise.all([...sessions].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  };
  return {
    port: (server.address() as AddressInfo).port,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    calls,
    tlsConnections: () => tlsConnections,
    closeSessions,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('admission webhooks over HTTP/2', () => {
  let t: TestSandbox;
  let hook: Awaited<ReturnType<typeof startHttp2Webhook>>;

  const rule = { apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['widgets'], scope: '*' };
  const webhookConfig = (kind: 'Validating' | 'Mutating', name: string, path: string, extra: Obj = {}, caBundle = hook.caBundle): Obj => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [{ name: `${name}.example.com`, sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${hook.port}${path}`, caBundle }, rules: [rule], ...extra }],
  });
  const pluralOf = (config: Obj): string => `/apis/admissionregistration.k8s.io/v1/${String(config['kind']).toLowerCase()}s`;
  const withConfigs = async (configs: Obj[], body: () => Promise<void>): Promise<void> => {
    for (const config of configs) assert.equal((await request(t.sandbox, 'POST', pluralOf(config), { body: config })).status, 201);
    try {
      await body();
    } finally {
      for (const config of configs) await request(t.sandbox, 'DELETE', `${pluralOf(config)}/${String(metadataOf(config)['name'])}`);
    }
  };

  before(async () => {
    hook = await startHttp2Webhook();
    t = await startTestSandbox();
    await installWidgetCrd(t.sandbox);
  });
  after(async () => {
    await t.sandbox.stop();
    await hook.close();
  });

  it('sends every call as an HTTP/2 stream on one connection and applies the patch', async () => {
    await withConfigs([webhookConfig('Mutating', 'h2-label', '/label'), webhookConfig('Validating', 'h2-allow', '/allow')], async () => {
      const connectionsBefore = hook.tlsConnections();
      const callsBefore = hook.calls.length;
      const created = await Promise.all(Array.from({ length: 20 }, (_, i) => request(t.sandbox, 'POST', WIDGETS, { body: widget(`h2-${i}`) })));
      for (const res of created) assert.equal(res.status, 201, res.text);
      assert.deepEqual((metadataOf(created[0]!.json!)['labels'] as Obj)['mutated'], 'over-h2');
      const calls = hook.calls.slice(callsBefore);
      assert.equal(calls.length, 40, 'every create called both webhooks');
      assert.ok(calls.every((c) => c.httpVersion === '2.0'), `protocols: ${[...new Set(calls.map((c) => c.httpVersion))].join(', ')}`);
      assert.ok(hook.tlsConnections() - connectionsBefore <= 1, `40 calls opened ${hook.tlsConnections() - connectionsBefore} TLS connections`);
    });
  });

  it('opens a new connection when the webhook closed the one it kept', async () => {
    await withConfigs([webhookConfig('Validating', 'h2-reconnect', '/allow')], async () => {
      assert.equal((await request(t.sandbox, 'POST', WIDGETS, { body: widget('h2-before-close') })).status, 201);
      await hook.closeSessions();
      const after = await request(t.sandbox, 'POST', WIDGETS, { body: widget('h2-after-close') });
      assert.equal(after.status, 201, after.text);
    });
  });

  it('gives up after timeoutSeconds and applies failurePolicy', async () => {
    await withConfigs([webhookConfig('Validating', 'h2-slow', '/slow', { timeoutSeconds: 1 })], async () => {
      const refused = await request(t.sandbox, 'POST', WIDGETS, { body: widget('h2-slow-fail') });
      assert.equal(refused.status, 500);
      assert.match(String(refused.json?.['message']), /failed calling webhook "h2-slow.example.com": failed to call webhook: Post ".*\/slow": context deadline exceeded/);
    });
    await withConfigs([webhookConfig('Validating', 'h2-slow-ignore', '/slow', { timeoutSeconds: 1, failurePolicy: 'Ignore' })], async () => {
      assert.equal((await request(t.sandbox, 'POST', WIDGETS, { body: widget('h2-slow-ignore') })).status, 201);
    });
  });

  it('refuses a webhook whose certificate the caBundle does not sign', async () => {
    const otherCa = Buffer.from(createCertificateAuthority('someone-else').certPem).toString('base64');
    await withConfigs([webhookConfig('Validating', 'h2-untrusted', '/allow', {}, otherCa)], async () => {
      const refused = await request(t.sandbox, 'POST', WIDGETS, { body: widget('h2-untrusted') });
      assert.equal(refused.status, 500);
      assert.match(String(refused.json?.['message']), /failed calling webhook "h2-untrusted.example.com": .*x509: certificate signed by unknown authority/);
    });
  });
});
