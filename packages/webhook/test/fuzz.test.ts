import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startWebhookServer, type AdmissionReview, type WebhookServer } from '@k8or/webhook';
import { HttpsClient } from './helpers/https-client.ts';
import { reviewOf } from './helpers/reviews.ts';
import { bucket, providerConfig, table, testWorld } from './helpers/fixtures.ts';

/** mulberry32: a seeded PRNG, so a failure reproduces with the seed it prints. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Hostile {
  category: string;
  path: string;
  body: string | Buffer;
  /** undefined: application/json; null: no content-type header at all. */
  contentType?: string | null;
  uid?: string;
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const COUNT = Number(process.env.FUZZ_COUNT ?? 3000);

function generate(random: () => number): Hostile[] {
  const int = (n: number): number => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const weird: unknown[] = [null, true, 0, -1, 1e308, 'x', '', [], {}, [[[]]], { __proto__: 1 }, 'A'.repeat(1000), { $ref: '#' }, '\u0000\ud800', NaN];
  const base = (): Record<string, unknown> => {
    const objects = [bucket('apps', 'b'), table('apps', 't'), providerConfig('p', { provider: 'aws', region: 'us-east-1' }) as unknown as Record<string, unknown>, bucket('team-a', 'x', { name: 'Bad..Name' })];
    const op = pick(['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const);
    const object = pick(objects);
    return reviewOf(op, op === 'DELETE' ? null : object, op === 'CREATE' ? null : pick(objects)) as unknown as Record<string, unknown>;
  };
  /** Replaces one random node of a JSON tree with a weird value. */
  const mutate = (node: unknown, depth = 0): unknown => {
    if (depth > 0 && random() < 0.3) return pick(weird);
    if (Array.isArray(node)) return node.length ? node.map((v, i) => (i === int(node.length) ? mutate(v, depth + 1) : v)) : pick(weird);
    if (node && typeof node === 'object') {
      const entries = Object.entries(node);
      if (!entries.length) return pick(weird);
      const [key] = pick(entries);
      return Object.fromEntries(entries.map(([k, v]) => [k, k === key ? mutate(v, depth + 1) : v]));
    }
    return pick(weird);
  };
  const deep = (n: number, open: string, close: string, inner = '1'): string => open.repeat(n) + inner + close.repeat(n);
  const generators: Record<string, () => Omit<Hostile, 'path' | 'category'>> = {
    randomBytes: () => {
      const bytes = Buffer.alloc(int(4096));
      for (let i = 0; i < bytes.length; i++) bytes[i] = int(256);
      return { body: bytes, contentType: pick(['application/json', 'application/octet-stream', null]) };
    },
    truncated: () => {
      const text = JSON.stringify(base());
      return { body: text.slice(0, int(text.length)) };
    },
    deepArrays: () => ({ body: deep(1000 + int(200_000), '[', ']') }),
    deepObjects: () => ({ body: deep(1000 + int(100_000), '{"a":', '}') }),
    deepInsideObject: () => {
      const review = base();
      const depth = 100 + int(20_000);
      const request = review.request as Record<string, unknown>;
      const text = JSON.stringify({ ...review, request: { ...request, object: '@@' } }).replace('"@@"', `{"kind":"Bucket","metadata":{"name":"d","namespace":"apps"},"spec":${deep(depth, '{"x":', '}')}}`);
      return { body: text, uid: request.uid as string };
    },
    hugeStrings: () => {
      const review = base();
      const request = review.request as Record<string, unknown>;
      const big = 'ab'.repeat(int(700_000));
      const where = int(3);
      if (where === 0) return { body: JSON.stringify({ ...review, request: { ...request, uid: big } }) };
      const object = { ...bucket('apps', big.slice(0, 100_000) || 'x'), spec: { name: big, location: big } };
      return { body: JSON.stringify({ ...review, request: { ...request, operation: 'CREATE', object } }), uid: request.uid as string };
    },
    wrongTypes: () => ({ body: JSON.stringify(mutate(base())) }),
    prototypePollution: () => {
      const review = JSON.stringify(base());
      const payload = pick(['"__proto__":{"polluted":true}', '"constructor":{"prototype":{"polluted":true}}', '"__proto__":[1]']);
      const at = pick(['{', '"request":{', '"metadata":{', '"spec":{']);
      return { body: review.replace(at, `${at}${payload},`) };
    },
    wrongContentType: () => ({
      body: JSON.stringify(base()),
      contentType: pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/yaml', 'application/xml', '*/*', 'application/json-patch+json']),
    }),
    notAReview: () => ({ body: JSON.stringify(pick(weird)) }),
    overLimit: () => ({ body: Buffer.alloc(3 * 1024 * 1024 + 1 + int(1024 * 1024), 0x20) }),
    valid: () => {
      const review = base();
      return { body: JSON.stringify(review), uid: (review.request as Record<string, unknown>).uid as string };
    },
  };
  const names = Object.keys(generators);
  const cases: Hostile[] = [];
  for (let i = 0; i < COUNT; i++) {
    // Keep the expensive ones rare so the test stays fast on two cores.
    let category = pick(names);
    if ((category === 'overLimit' || category === 'hugeStrings' || category === 'deepArrays' || category === 'deepObjects') && random() < 0.9) category = 'wrongTypes';
    cases.push({ category, path: pick(['/validate', '/mutate']), ...generators[category]!() });
  }
  return cases;
}

describe(`fuzz: ${COUNT} malformed and hostile bodies (seed ${SEED})`, () => {
  let server: WebhookServer;
  let client: HttpsClient;

  before(async () => {
    server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logLevel: 'silent', processMetrics: false });
    client = new HttpsClient(server.url, server.caPem);
  });
  after(async () => {
    client.close();
    await server.close();
  });

  it('answers every one with a proper status, never a 5xx, and stays up', { timeout: 240_000 }, async () => {
    const cases = generate(prng(SEED));
    const statuses = new Map<string, number>();
    const failures: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < cases.length) {
        const index = next++;
        const c = cases[index]!;
        const headers: Record<string, string> = c.contentType === null ? {} : { 'content-type': c.contentType ?? 'application/json' };
        let status: number;
        let text: string;
        try {
          const answer = await client.send('POST', c.path, c.body, headers);
          status = answer.status;
          text = answer.text;
        } catch (error) {
          failures.push(`#${index} ${c.category}: no answer (${String(error)})`);
          continue;
        }
        const key = `${c.category} ${status}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (![200, 400, 413, 415].includes(status)) failures.push(`#${index} ${c.category}: status ${status}: ${text.slice(0, 300)}`);
        if (status === 200) {
          const review = JSON.parse(text) as AdmissionReview;
          if (review.kind !== 'AdmissionReview' || !review.response || typeof review.response.allowed !== 'boolean') failures.push(`#${index} ${c.category}: 200 without a review`);
          if (c.uid && review.response?.uid !== c.uid) failures.push(`#${index} ${c.category}: uid not echoed`);
          if (review.response?.status?.code === 503) failures.push(`#${index} ${c.category}: internal error: ${review.response.status.message}`);
        } else if (!/"message"/.test(text)) {
          failures.push(`#${index} ${c.category}: ${status} without a reason`);
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    assert.deepEqual(failures, [], `seed ${SEED}`);
    assert.equal([...statuses.values()].reduce((a, b) => a + b, 0), COUNT);
    assert.ok([...statuses.keys()].some((k) => k.startsWith('valid 200')), 'the valid reviews among them were answered');
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was polluted');
    assert.equal((await client.get('/healthz')).status, 200);
    assert.equal((await client.post('/validate', reviewOf('CREATE', bucket('apps', 'after')))).status, 200);
    console.log([...statuses.entries()].sort().map(([k, v]) => `${k}: ${v}`).join(', '));
  });
});
