// Bad input at volume: thousands of seeded invalid Buckets, Tables and ProviderConfigs (wrong types,
// values out of range, bad names, unknown fields, bad annotations, huge values, and changes to
// immutable fields of objects that exist) go through `k8or validate` offline and through the real
// kubectl 1.35 against the API server with the operator's webhook (the chart installed with Helm).
// Each is refused with a message naming the field; nothing is created; the API server and the
// webhook stay up and healthy; and the webhook port answers no admission request over plain HTTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { SANDBOX_CREDENTIALS } from '../support/backends.ts';
import { k8orBinary } from '../support/operator-process.ts';
import { run, runOk } from '../support/run.ts';
import { applyProviderConfigs, missingOperator, startReliabilityCluster, USER_NAMESPACE, type ReliabilityCluster, type Replica } from './support/cluster.ts';
import { immutableChanges, invalidManifests, validDefaultProviderConfig, type InvalidManifest } from './support/invalid-manifests.ts';
import { sized } from './support/scale.ts';
import { suiteSeed } from './support/seed.ts';

const random = suiteSeed('bad input');
/** Manifests through `k8or validate` (one file, one run) and through kubectl (multi-document batches). */
const VALIDATE_COUNT = sized({ ci: 2_000, large: 30_000 });
const KUBECTL_COUNT = sized({ ci: 1_000, large: 10_000 });
const KUBECTL_BATCH = 250;
const IMMUTABLE_COUNT = sized({ ci: 40, large: 400 });

interface Refusal {
  manifest: InvalidManifest;
  /** What the user was told about this object. */
  message: string;
}

/** Reads kubectl's stderr for one batch: one error per object, in the order of the documents. */
function refusalsOf(stderr: string): string[] {
  return stderr
    .split(/^(?=Error from server|error: |The \w+ "[^"]*" is invalid)/m)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.length > 0 && !chunk.startsWith('Warning:'));
}

const nameOf = (m: InvalidManifest): string => `${String(m.manifest['kind'])}/${(m.manifest['metadata'] as { name: string }).name}`;
const names = (m: InvalidManifest, message: string): boolean => message.includes(m.field);

describe('bad input at volume: invalid manifests through k8or validate and kubectl', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
  let cluster: ReliabilityCluster;
  let replica: Replica;
  const refusedCount = { validate: 0, kubectl: 0, immutable: 0 };

  before(async () => {
    cluster = await startReliabilityCluster();
    replica = await cluster.startReplica();
    await cluster.waitReady(replica);
    await applyProviderConfigs(cluster);
  });

  after(async () => {
    console.log(`# refused, each naming its field: ${JSON.stringify(refusedCount)}`);
    await cluster?.stop();
  });

  it(`refuses ${VALIDATE_COUNT} generated manifests offline with k8or validate, each naming its field`, async () => {
    const generated = invalidManifests(random, VALIDATE_COUNT, USER_NAMESPACE);
    const file = join(cluster.home, 'invalid.yaml');
    await writeFile(file, [validDefaultProviderConfig(), ...generated.map((g) => g.manifest)].map((m) => JSON.stringify(m)).join('\n---\n'));
    const bin = k8orBinary();
    assert.ok('path' in bin);
    const result = await run({ binary: process.execPath, env: {} }, [bin.path, 'validate', '-f', file, '-o', 'json', '--providers', 'aws', '--secrets-namespace', 'k8or-system'], undefined, 300_000);
    assert.equal(result.code, 1, `exit 1 (violations), not a crash: ${result.stderr.slice(0, 2000)}`);
    assert.equal(result.stderr, '');
    const report = JSON.parse(result.stdout) as { objects: Array<{ document: number; valid: boolean; violations: Array<{ field: string; rule: string; message: string }> }> };
    assert.equal(report.objects.length, generated.length + 1);
    assert.equal(report.objects[0]?.valid, true, 'the ProviderConfig they use is valid');
    const unnamed: string[] = [];
    generated.forEach((g, i) => {
      const verdict = report.objects[i + 1]!;
      const said = verdict.violations.map((v) => `${v.field}: ${v.message}`).join('\n');
      if (verdict.valid || !names(g, said)) unnamed.push(`${nameOf(g)} (${g.defect}, ${g.field}): ${verdict.valid ? 'valid' : said.slice(0, 300)}`);
    });
    assert.deepEqual(unnamed.slice(0, 20), [], `${unnamed.length} not refused with their field named (seed ${random.seed})`);
    refusedCount.validate = generated.length;
  });

  it(`refuses ${KUBECTL_COUNT} generated manifests through kubectl apply, each naming its field, and creates none`, async () => {
    const unnamed: string[] = [];
    const samples = new Map<string, string>();
    const { kubectl } = cluster.tools;
    for (let first = 0; first < KUBECTL_COUNT; first += KUBECTL_BATCH) {
      const batch = invalidManifests(random, Math.min(KUBECTL_BATCH, KUBECTL_COUNT - first), USER_NAMESPACE, first);
      const result = await run(kubectl, ['apply', '-f', '-'], batch.map((b) => JSON.stringify(b.manifest)).join('\n'), 600_000);
      assert.notEqual(result.code, 0);
      assert.equal(result.stdout.trim(), '', `kubectl created or changed something:\n${result.stdout.slice(0, 2000)}`);
      const refusals = refusalsOf(result.stderr);
      assert.equal(refusals.length, batch.length, `one refusal per document (seed ${random.seed}):\n${result.stderr.slice(0, 3000)}`);
      batch.forEach((b, i) => {
        const refusal: Refusal = { manifest: b, message: refusals[i]! };
        // refusals are read in document order; one that quotes an object's name must quote this one's
        const quoted = /"(bad-\d+)"/.exec(refusal.message)?.[1];
        assert.ok(quoted === undefined || nameOf(b).endsWith(`/${quoted}`), `refusal ${i} of the batch is about ${quoted}, not ${nameOf(b)}`);
        if (!names(b, refusal.message)) unnamed.push(`${nameOf(b)} (${b.defect}, ${b.field}): ${refusal.message.slice(0, 400)}`);
        if (!samples.has(b.defect)) samples.set(b.defect, refusal.message.split('\n').slice(0, 3).join(' | ').slice(0, 300));
      });
    }
    for (const [defect, message] of samples) console.log(`# ${defect}: ${message}`);
    assert.deepEqual(unnamed.slice(0, 20), [], `${unnamed.length} refusals do not name the field (seed ${random.seed})`);
    const stored = await runOk(kubectl, ['get', 'buckets,tables', '-n', USER_NAMESPACE, '-o', 'name']);
    const providerConfigs = await runOk(kubectl, ['get', 'providerconfigs', '-o', 'name']);
    assert.equal(stored.trim(), '', 'no Bucket or Table was stored');
    const admins = cluster.providerConfigs.filter((m) => m.kind === 'ProviderConfig').map((m) => `providerconfig.k8or.io/${m.metadata.name}`);
    assert.deepEqual(providerConfigs.trim().split('\n').sort(), admins.sort(), 'no ProviderConfig but the admin\'s');
    refusedCount.kubectl = KUBECTL_COUNT;
  });

  it(`refuses ${IMMUTABLE_COUNT} changes to immutable fields of stored objects, naming the field`, async () => {
    const { kubectl } = cluster.tools;
    const { originals, changes } = immutableChanges(random, IMMUTABLE_COUNT, USER_NAMESPACE);
    await runOk(kubectl, ['apply', '-f', '-'], originals.map((o) => JSON.stringify(o)).join('\n'), 300_000);
    const result = await run(kubectl, ['apply', '-f', '-'], changes.map((c) => JSON.stringify(c.manifest)).join('\n'), 300_000);
    assert.notEqual(result.code, 0);
    assert.doesNotMatch(result.stdout, /configured/, 'no change went through');
    const refusals = refusalsOf(result.stderr);
    assert.equal(refusals.length, changes.length, result.stderr.slice(0, 3000));
    const unnamed = changes.filter((c, i) => !names(c, refusals[i]!)).map((c) => `${nameOf(c)} (${c.field}): ${refusals[changes.indexOf(c)]!.slice(0, 400)}`);
    assert.deepEqual(unnamed, []);
    refusedCount.immutable = changes.length;
  });

  it('refuses a Bucket nested thousands of levels deep with 400 BadRequest (kubectl cannot even send one)', async () => {
    const { sandbox } = cluster;
    for (const levels of [2_000, 50_000]) {
      const body = `{"apiVersion":"k8or.io/v1alpha1","kind":"Bucket","metadata":{"name":"deep-${levels}","namespace":"${USER_NAMESPACE}"},"spec":{"labels":${'['.repeat(levels)}"x"${']'.repeat(levels)}}}`;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const url = new URL(`/apis/k8or.io/v1alpha1/namespaces/${USER_NAMESPACE}/buckets`, sandbox.url);
        const req = httpsRequest(url, { method: 'POST', ca: sandbox.caPem, headers: { authorization: `Bearer ${sandbox.token}`, 'content-type': 'application/json' } }, (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end(body);
      });
      assert.equal(answer.status, 400, `${levels} levels: ${answer.body.slice(0, 300)}`);
      assert.match(answer.body, /exceeded max depth/);
    }
  });

  it('leaves the API server and the webhook up and healthy, still admitting a valid object', async () => {
    assert.equal(replica.exited, false);
    assert.equal(replica.process.child.hasExited(), false, 'the operator process is alive');
    for (const probe of ['healthz', 'readyz']) assert.equal((await fetch(`${replica.process.probes}/${probe}`)).status, 200, `operator /${probe}`);
    assert.equal((await runOk(cluster.tools.kubectl, ['get', '--raw', '/readyz'])).trim(), 'ok');
    const valid = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'still-admitted', namespace: USER_NAMESPACE }, spec: { versioning: true } };
    assert.match(await runOk(cluster.tools.kubectl, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(valid)), /bucket\.k8or\.io\/still-admitted created \(server dry run\)/);
    assert.equal(replica.process.output().includes(SANDBOX_CREDENTIALS.secretAccessKey), false, 'no credential in the operator log');
  });

  it('answers no admission request over plain HTTP on the webhook port (and does over HTTPS)', async () => {
    const review = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'plain-http', kind: { group: 'k8or.io', version: 'v1alpha1', kind: 'Bucket' }, operation: 'CREATE', namespace: USER_NAMESPACE, object: { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'plain', namespace: USER_NAMESPACE }, spec: {} } },
    });
    const plain = await new Promise<string>((resolve) => {
      const socket = connect(replica.webhookPort, '127.0.0.1', () => {
        socket.write(`POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(review)}\r\nConnection: close\r\n\r\n${review}`);
      });
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      socket.on('close', () => resolve(answer));
      socket.on('error', () => resolve(answer));
      socket.setTimeout(30_000, () => socket.destroy());
    });
    assert.doesNotMatch(plain, /AdmissionReview|"allowed"/, `a plain-HTTP request was answered: ${plain.slice(0, 300)}`);
    assert.doesNotMatch(plain, /^HTTP\/1\.[01] 2\d\d/, 'no success status');
    // the same request over TLS is answered: the port serves admission, only not in the clear
    const secure = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: replica.webhookPort, path: '/validate', method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' } }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end(review);
    });
    assert.equal((JSON.parse(secure) as { response?: { uid?: string } }).response?.uid, 'plain-http');
  });
});
