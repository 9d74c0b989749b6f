// The webhook over HTTP/2, as kube-apiserver's Go client (and the sandbox's API server) calls it:
// every review a stream on one connection, answered in full without trailers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startWebhookServer, type AdmissionReview, type WebhookServer } from '@k8or/webhook';
import { reviewOf } from './helpers/reviews.ts';
import { bucket, testWorld } from './helpers/fixtures.ts';

interface H2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  text: string;
  /** Whether the answer came with trailers (it never should: the webhook sends none). */
  trailers: boolean;
}

function h2Request(session: http2.ClientHttp2Session, method: string, path: string, body?: string): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': method, ':path': path, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) });
    let headers: http2.IncomingHttpHeaders = {};
    let trailers = false;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = h));
    stream.on('trailers', () => (trailers = true));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ status: Number(headers[':status']), headers, text: Buffer.concat(chunks).toString('utf8'), trailers }));
    stream.on('error', reject);
    stream.end(body);
  });
}

describe('admission server over HTTP/2', () => {
  let server: WebhookServer;
  let session: http2.ClientHttp2Session;
  const lines: Record<string, unknown>[] = [];

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logger: pino({ level: 'info' }, sink), processMetrics: false });
    session = http2.connect(server.url, { ca: server.caPem });
  });
  after(async () => {
    session.close();
    await server.close();
  });

  it('answers every review on one connection with its own uid, a complete JSON body and no trailers', async () => {
    const reviews = Array.from({ length: 32 }, (_, i) => reviewOf('CREATE', bucket('apps', `h2-${i}`)));
    const answers = await Promise.all(reviews.map((review, i) => h2Request(session, 'POST', i % 2 ? '/validate' : '/mutate', JSON.stringify(review))));
    answers.forEach((answer, i) => {
      assert.equal(answer.status, 200, answer.text);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.text));
      assert.equal(answer.trailers, false);
      const body = JSON.parse(answer.text) as AdmissionReview;
      assert.equal(body.kind, 'AdmissionReview');
      assert.equal(body.response?.uid, reviews[i]!.request?.uid);
      assert.equal(body.response?.allowed, true);
      if (i % 2 === 0) assert.equal(body.response?.patchType, 'JSONPatch', 'the mutating webhook defaulted the Bucket');
    });
  });

  it('refuses a malformed review with a 400 naming the field, logged once', async () => {
    const review = reviewOf('CREATE', bucket('apps', 'bad-uid')) as unknown as { request: Record<string, unknown> };
    review.request['uid'] = 42;
    const before = lines.filter((l) => l.msg === 'bad request').length;
    const answer = await h2Request(session, 'POST', '/validate', JSON.stringify(review));
    assert.equal(answer.status, 400);
    assert.match((JSON.parse(answer.text) as { message: string }).message, /not an AdmissionReview v1: body\.request\.uid must be string/);
    assert.equal(lines.filter((l) => l.msg === 'bad request').length, before + 1);
  });

  it('answers probes, HEAD and unknown paths as over HTTP/1.1', async () => {
    const health = await h2Request(session, 'GET', '/healthz');
    assert.equal(health.status, 200);
    const head = await h2Request(session, 'HEAD', '/healthz');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const missing = await h2Request(session, 'GET', '/nowhere');
    assert.equal(missing.status, 404);
    assert.match((JSON.parse(missing.text) as { message: string }).message, /use POST \/validate or POST \/mutate/);
  });
});

describe('admission server logging at debug level', () => {
  it('logs each admitted review with its request id', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logger: pino({ level: 'debug' }, sink), processMetrics: false });
    const session = http2.connect(server.url, { ca: server.caPem });
    try {
      const review = reviewOf('CREATE', bucket('apps', 'logged'));
      assert.equal((await h2Request(session, 'POST', '/validate', JSON.stringify(review))).status, 200);
      const admitted = lines.find((l) => l.msg === 'admitted' && l.uid === review.request?.uid);
      assert.ok(admitted, `no "admitted" line for the review in ${JSON.stringify(lines.map((l) => l.msg))}`);
      assert.equal(typeof admitted['reqId'], 'string');
    } finally {
      session.close();
      await server.close();
    }
  });
});
