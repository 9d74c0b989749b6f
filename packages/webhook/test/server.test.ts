import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { KubeConfig } from '@kubernetes/client-node';
import { startWebhookServer, type WebhookServer } from '@k8or/webhook';
import { HttpsClient } from './helpers/https-client.ts';
import { reviewOf } from './helpers/reviews.ts';
import { aws, bucket, testWorld } from './helpers/fixtures.ts';

/** A pino logger whose JSON lines land in an array the test can read. */
function capturedLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('admission server: bad requests get a clear 4xx, logged once, and the server stays up', () => {
  let server: WebhookServer;
  let client: HttpsClient;
  const log = capturedLogger();

  before(async () => {
    server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logger: log.logger, processMetrics: false });
    client = new HttpsClient(server.url, server.caPem);
  });
  after(async () => {
    client.close();
    await server.close();
  });

  const good = (): Record<string, unknown> => reviewOf('CREATE', bucket('apps', 'ok')) as unknown as Record<string, unknown>;
  const cases: { story: string; body: string | Buffer; contentType?: string; status: number; reason: RegExp }[] = [
    { story: 'a body that is not JSON', body: '{"apiVersion": "admission.k8s.io/v1", ', status: 400, reason: /JSON/ },
    { story: 'JSON that is not an AdmissionReview', body: '{"hello":"world"}', status: 400, reason: /not an AdmissionReview v1: body must have required property 'apiVersion'/ },
    { story: 'an AdmissionReview of the wrong apiVersion', body: JSON.stringify({ ...good(), apiVersion: 'admission.k8s.io/v1beta1' }), status: 400, reason: /body\.apiVersion must be "admission\.k8s\.io\/v1"/ },
    { story: 'an AdmissionReview without a request', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), status: 400, reason: /must have required property 'request'/ },
    {
      story: 'a request without a uid',
      body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { kind: { group: 'k8or.io', version: 'v1alpha1', kind: 'Bucket' }, operation: 'CREATE' } }),
      status: 400,
      reason: /body\.request must have required property 'uid'/,
    },
    { story: 'a uid of the wrong type', body: JSON.stringify({ ...good(), request: { ...(good().request as object), uid: 42 } }), status: 400, reason: /body\.request\.uid must be string/ },
    { story: 'an unknown operation', body: JSON.stringify({ ...good(), request: { ...(good().request as object), operation: 'PATCH' } }), status: 400, reason: /body\.request\.operation must be one of/ },
    { story: 'a prototype-pollution key', body: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","__proto__":{"admin":true}}}', status: 400, reason: /not valid JSON: Object contains forbidden prototype property/ },
    { story: 'a body in the wrong content type', body: JSON.stringify(good()), contentType: 'text/plain', status: 415, reason: /Unsupported Media Type/i },
    { story: 'a body over the 3 MiB limit', body: JSON.stringify({ ...good(), padding: 'x'.repeat(3.5 * 1024 * 1024) }), status: 413, reason: /too large/i },
  ];

  for (const c of cases) {
    it(`answers ${c.status} to ${c.story}`, async () => {
      const before = log.lines.filter((l) => l.msg === 'bad request').length;
      const answer = await client.post('/validate', c.body, c.contentType);
      assert.equal(answer.status, c.status, answer.text);
      const body = answer.json() as { message?: string; error?: string };
      assert.match(`${body.error}: ${body.message}`, c.reason);
      const logged = log.lines.filter((l) => l.msg === 'bad request');
      assert.equal(logged.length, before + 1, 'logged exactly once');
      assert.equal(logged.at(-1)?.status, c.status);
    });
  }

  it('keeps serving reviews, probes and metrics after all of that', async () => {
    assert.equal((await client.post('/validate', good())).status, 200);
    assert.equal((await client.get('/healthz')).status, 200);
    assert.equal((await client.get('/readyz')).status, 200);
    const metrics = await client.get('/metrics');
    assert.match(metrics.text, /k8or_admission_reviews_total\{webhook="validate",kind="",operation="",result="bad_request"\} 10/);
    assert.equal((await client.get('/nowhere')).status, 404);
  });
});

describe('admission server before its caches have synced', () => {
  it('reports not ready, and denies reviews as unavailable (retry) instead of guessing', async () => {
    // An API server that does not answer: the informers keep retrying and never sync.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'user', token: 'token' }],
      contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'user' }],
      currentContext: 'nowhere',
    });
    const server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, kubeConfig, providers: [aws], timeoutSeconds: 2, logLevel: 'silent', processMetrics: false });
    const client = new HttpsClient(server.url, server.caPem);
    try {
      assert.equal((await client.get('/healthz')).status, 200);
      assert.equal((await client.get('/readyz')).status, 503);
      const review = reviewOf('CREATE', bucket('apps', 'early'));
      const answer = await client.post('/validate', review);
      assert.equal(answer.status, 200);
      const response = (answer.json() as { response: { uid: string; allowed: boolean; status: { code: number; message: string } } }).response;
      assert.equal(response.uid, review.request?.uid);
      assert.equal(response.allowed, false);
      assert.equal(response.status.code, 503);
      assert.match(response.status.message, /not finished loading .* retry shortly/);
    } finally {
      client.close();
      await server.close();
    }
  });
});
