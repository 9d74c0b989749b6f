import assert from 'node:assert/strict';
import { createSign, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Storage, type ApiError } from '@google-cloud/storage';
import { startGcsFake, type GcsFake } from '@k8or/local-clouds';

const PROJECT = 'k8or-test-project';
const reasonOf = (error: unknown): string | undefined => (error as ApiError).errors?.[0]?.reason;

/** A service-account key as the Cloud console hands it out, with a fresh RSA key pair. */
function serviceAccountKey(email: string, project: string): { key: { client_email: string; private_key: string; project_id: string }; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    key: { client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), project_id: project },
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** A JWT-bearer assertion for a token endpoint, signed with `privateKey`, as google-auth makes them. */
function assertion(email: string, privateKey: string, audience: string): string {
  const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const signed = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode({ iss: email, scope: 'https://www.googleapis.com/auth/devstorage.full_control', aud: audience, iat: now, exp: now + 3600 })}`;
  return `${signed}.${createSign('RSA-SHA256').update(signed).sign(privateKey).toString('base64url')}`;
}

describe('GCS fake, driven by the real @google-cloud/storage', () => {
  let fake: GcsFake;
  let storage: Storage;
  const dataDir = mkdtempSync(join(tmpdir(), 'gcs-fake-'));
  const ours = serviceAccountKey('operator@k8or-test-project.iam.gserviceaccount.com', PROJECT);
  const theirs = serviceAccountKey('someone@other-project-1.iam.gserviceaccount.com', 'other-project-1');
  const asServiceAccount = (key: { client_email: string; private_key: string; project_id: string }): Storage => {
    const client = new Storage({ apiEndpoint: fake.endpoint, projectId: key.project_id, credentials: key, useAuthWithCustomEndpoint: true });
    // Self-signed JWTs, as the GAPIC libraries use: no token exchange with oauth2.googleapis.com.
    client.authClient.useJWTAccessWithScope = true;
    return client;
  };

  before(async () => {
    fake = await startGcsFake({
      dataDir,
      serviceAccounts: {
        [ours.key.client_email]: { project: PROJECT, publicKeyPem: ours.publicKeyPem },
        [theirs.key.client_email]: { project: theirs.key.project_id, publicKeyPem: theirs.publicKeyPem },
      },
    });
    storage = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT });
  });
  after(async () => {
    await fake?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('inserts a bucket with every managed setting and reads it back as GCS reports it', async () => {
    const [bucket] = await storage.createBucket('photos-team-a', {
      location: 'europe-west1',
      storageClass: 'STANDARD',
      versioning: { enabled: true },
      labels: { team: 'a' },
      iamConfiguration: { uniformBucketLevelAccess: { enabled: true }, publicAccessPrevention: 'enforced' },
      encryption: { defaultKmsKeyName: 'projects/p/locations/europe-west1/keyRings/r/cryptoKeys/k' },
      lifecycle: { rule: [{ action: { type: 'Delete' }, condition: { age: 30, matchesPrefix: ['tmp/'] } }] },
    });
    const [metadata] = await bucket.getMetadata();
    assert.equal(metadata.location, 'EUROPE-WEST1');
    assert.equal(metadata.locationType, 'region');
    assert.equal(metadata.metageneration, '1');
    assert.deepEqual(metadata.versioning, { enabled: true });
    assert.deepEqual(metadata.labels, { team: 'a' });
    assert.equal(metadata.iamConfiguration?.publicAccessPrevention, 'enforced');
    assert.equal(metadata.iamConfiguration?.uniformBucketLevelAccess?.enabled, true);
    assert.equal(metadata.encryption?.defaultKmsKeyName, 'projects/p/locations/europe-west1/keyRings/r/cryptoKeys/k');
    assert.deepEqual(metadata.lifecycle?.rule, [{ action: { type: 'Delete' }, condition: { age: 30, matchesPrefix: ['tmp/'] } }]);
    assert.match(String(metadata.selfLink), /\/storage\/v1\/b\/photos-team-a$/);
  });

  it('patches with merge semantics (a null label removes it) and checks ifMetagenerationMatch', async () => {
    const [bucket] = await storage.createBucket('patched-bucket', { labels: { keep: 'yes', drop: 'me' } });
    await bucket.setMetadata({ labels: { drop: null, added: 'new' }, versioning: { enabled: true } }, { ifMetagenerationMatch: 1 });
    const [metadata] = await bucket.getMetadata();
    assert.deepEqual(metadata.labels, { keep: 'yes', added: 'new' });
    assert.equal(metadata.metageneration, '2');
    await assert.rejects(bucket.setMetadata({ versioning: { enabled: false } }, { ifMetagenerationMatch: 1 }), (error: ApiError) => {
      assert.equal(error.code, 412);
      assert.equal(reasonOf(error), 'conditionNotMet');
      return true;
    });
    await bucket.setMetadata({ lifecycle: null, iamConfiguration: { publicAccessPrevention: 'enforced' } });
    assert.equal((await bucket.getMetadata())[0].iamConfiguration?.publicAccessPrevention, 'enforced');
  });

  it('answers 404 notFound, 409 conflict and 400 invalid as GCS does', async () => {
    await assert.rejects(storage.bucket('no-such-bucket').getMetadata(), (error: ApiError) => error.code === 404 && reasonOf(error) === 'notFound');
    await assert.rejects(storage.createBucket('patched-bucket'), (error: ApiError) => error.code === 409 && /already own it/.test(error.message));
    await assert.rejects(storage.createBucket('Bad_Name'), (error: ApiError) => error.code === 400 && reasonOf(error) === 'invalid');
    await assert.rejects(storage.createBucket('goog-bucket'), (error: ApiError) => error.code === 400);
    await assert.rejects(storage.createBucket('nowhere-bucket', { location: 'moon' }), (error: ApiError) => error.code === 400 && /location/.test(error.message));
    await assert.rejects(storage.createBucket('bad-labels', { labels: { 'Upper': 'x' } }), (error: ApiError) => error.code === 400 && /label key/.test(error.message));
  });

  it('keeps object generations: uploads (multipart and resumable), versioned listing and deletes by generation', async () => {
    const [bucket] = await storage.createBucket('versioned-objects', { versioning: { enabled: true } });
    const file = bucket.file('album/1.jpg');
    await file.save('first', { resumable: false });
    await file.save('second', { resumable: false });
    await bucket.file('big.bin').save(Buffer.alloc(300_000, 7), { resumable: true });
    const [live] = await bucket.getFiles();
    assert.deepEqual(live.map((f) => f.name), ['album/1.jpg', 'big.bin']);
    const [contents] = await file.download();
    assert.equal(contents.toString(), 'second');
    const [all] = await bucket.getFiles({ versions: true });
    assert.equal(all.length, 3);
    await assert.rejects(bucket.delete(), (error: ApiError) => error.code === 409 && /not empty/.test(error.message));
    for (const version of all) await bucket.file(version.name, { generation: version.metadata.generation }).delete();
    assert.equal((await bucket.getFiles({ versions: true }))[0].length, 0);
    await bucket.delete();
    await assert.rejects(bucket.getMetadata(), (error: ApiError) => error.code === 404);
  });

  it('pages object listings', async () => {
    const [bucket] = await storage.createBucket('many-objects');
    for (let i = 0; i < 5; i++) await bucket.file(`o-${i}`).save(`v${i}`, { resumable: false });
    const [first, next] = await bucket.getFiles({ maxResults: 2, autoPaginate: false });
    assert.equal(first.length, 2);
    assert.ok(next?.pageToken);
    const [all] = await bucket.getFiles();
    assert.equal(all.length, 5);
  });

  it('pages bucket listings: maxResults, and at most bucketsPageSize per page', async () => {
    const paged = await startGcsFake({ bucketsPageSize: 2 });
    try {
      const client = new Storage({ apiEndpoint: paged.endpoint, projectId: PROJECT });
      for (const name of ['paged-c', 'paged-a', 'paged-b']) await client.createBucket(name);
      const [first, next] = await client.getBuckets({ autoPaginate: false });
      assert.deepEqual(first.map((b) => b.name), ['paged-a', 'paged-b']);
      const pageToken = (next as { pageToken?: string } | null)?.pageToken;
      assert.ok(pageToken);
      const [rest, last] = await client.getBuckets({ pageToken, autoPaginate: false });
      assert.deepEqual(rest.map((b) => b.name), ['paged-c']);
      assert.equal(last, null);
      const [one] = await client.getBuckets({ maxResults: 1, autoPaginate: false });
      assert.deepEqual(one.map((b) => b.name), ['paged-a']);
    } finally {
      await paged.stop();
    }
  });

  it('authenticates self-signed service-account JWTs: another project\'s bucket is 403, and its name is taken', async () => {
    const someoneElse = asServiceAccount(theirs.key);
    await someoneElse.createBucket('their-bucket');
    const operator = asServiceAccount(ours.key);
    await assert.rejects(operator.bucket('their-bucket').getMetadata(), (error: ApiError) => error.code === 403 && reasonOf(error) === 'forbidden');
    await assert.rejects(operator.createBucket('their-bucket'), (error: ApiError) => error.code === 409 && /not available/.test(error.message));
    fake.deny(ours.key.client_email);
    await assert.rejects(operator.createBucket('denied-bucket'), (error: ApiError) => error.code === 403);
    fake.allow(ours.key.client_email);
    const [mine] = await operator.createBucket('operator-bucket');
    assert.equal((await mine.getMetadata())[0].name, 'operator-bucket');
    assert.ok(fake.requests.some((r) => r.principal === ours.key.client_email && r.status === 200));
  });

  it('answers 401 authError (GCS error JSON) for a JWT of an unknown account, or signed with a key it did not issue', async () => {
    const forged = { ...ours.key, private_key: serviceAccountKey(ours.key.client_email, PROJECT).key.private_key };
    const stranger = serviceAccountKey('stranger@elsewhere.iam.gserviceaccount.com', 'elsewhere').key;
    for (const key of [forged, stranger]) {
      await assert.rejects(asServiceAccount(key).bucket('operator-bucket').getMetadata(), (error: ApiError) => {
        assert.equal(error.code, 401);
        assert.equal(reasonOf(error), 'authError');
        assert.equal(error.message, 'Invalid Credentials');
        return true;
      });
    }
  });

  it('hands out access tokens for an assertion signed with a known key (the key file\'s token_uri), and refuses others as Google does', async () => {
    const exchange = (signedBy: string): Promise<Response> =>
      fetch(fake.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: assertion(ours.key.client_email, signedBy, fake.tokenUri) }),
      });
    const granted = await exchange(ours.key.private_key);
    assert.equal(granted.status, 200);
    const { access_token: token, token_type: type } = (await granted.json()) as { access_token: string; token_type: string };
    assert.equal(type, 'Bearer');
    const read = await fetch(`${fake.endpoint}/storage/v1/b/operator-bucket`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.status, 200);
    assert.ok(fake.requests.some((r) => r.path === '/storage/v1/b/operator-bucket' && r.principal === ours.key.client_email));
    const refused = await exchange(serviceAccountKey(ours.key.client_email, PROJECT).key.private_key);
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    assert.equal((await fetch(`${fake.endpoint}/storage/v1/b/operator-bucket`, { headers: { authorization: 'Bearer ya29.not-issued' } })).status, 401);
  });

  it('reads boolean parameters in any case (versions=True), as GCS does', async () => {
    const [bucket] = await storage.createBucket('versions-param', { versioning: { enabled: true } });
    await bucket.file('a').save('1', { resumable: false });
    await bucket.file('a').save('2', { resumable: false });
    const names = async (versions: string): Promise<number> => {
      const response = await fetch(`${fake.endpoint}/storage/v1/b/versions-param/o?versions=${versions}`);
      return ((await response.json()) as { items?: unknown[] }).items?.length ?? 0;
    };
    assert.equal(await names('True'), 2);
    assert.equal(await names('TRUE'), 2);
    assert.equal(await names('true'), 2);
    assert.equal(await names('False'), 1);
    assert.equal((await fetch(`${fake.endpoint}/storage/v1/b/versions-param/o?versions=yes`)).status, 400);
  });

  it('answers fields= partial responses: comma lists, a/b paths into lists, items(name,generation)', async () => {
    const [bucket] = await storage.createBucket('partial-fields', { labels: { team: 'a', tier: 'b' } });
    await bucket.file('x/1').save('1', { resumable: false });
    await bucket.file('y').save('22', { resumable: false });
    const get = async (path: string, fields: string): Promise<unknown> => (await fetch(`${fake.endpoint}/storage/v1/b/${path}${path.includes('?') ? '&' : '?'}fields=${encodeURIComponent(fields)}`)).json();
    const listed = (await get('partial-fields/o', 'prefixes,items/name,items/size,nextPageToken')) as { items: Record<string, unknown>[] };
    assert.deepEqual(listed, { items: [{ name: 'x/1', size: '1' }, { name: 'y', size: '2' }] });
    const grouped = (await get('partial-fields/o?delimiter=/', 'items(name,generation),prefixes')) as { items: Record<string, unknown>[]; prefixes: string[] };
    assert.deepEqual(grouped.prefixes, ['x/']);
    assert.deepEqual(Object.keys(grouped.items[0] ?? {}).sort(), ['generation', 'name']);
    assert.deepEqual(await get('partial-fields', 'name,labels/team'), { name: 'partial-fields', labels: { team: 'a' } });
    assert.equal((await fetch(`${fake.endpoint}/storage/v1/b/partial-fields?fields=${encodeURIComponent('labels(team')}`)).status, 400);
  });

  it('takes a multipart upload with a single-quoted boundary and bare LF line ends (as the Google Cloud SDK sends it)', async () => {
    await storage.createBucket('quoted-boundary');
    const boundary = '===============5259303036590599600==';
    const body = `--${boundary}\nContent-Type: application/json\nMIME-Version: 1.0\n\n{"name": "f.txt", "contentType": "text/plain"}\n--${boundary}\nContent-Type: text/plain\nContent-Transfer-Encoding: binary\n\nhello\n\n--${boundary}--\n`;
    const response = await fetch(`${fake.endpoint}/upload/storage/v1/b/quoted-boundary/o?uploadType=multipart`, {
      method: 'POST',
      headers: { 'content-type': `multipart/related; boundary='${boundary}'` },
      body,
    });
    assert.equal(response.status, 200, await response.clone().text());
    const [content] = await storage.bucket('quoted-boundary').file('f.txt').download();
    assert.equal(content.toString(), 'hello\n');
  });

  it('runs resumable sessions as the JSON API documents them: /resumable/upload, 308 with Range, status checks, the object at the end', async () => {
    await storage.createBucket('resumable-wire');
    const start = await fetch(`${fake.endpoint}/resumable/upload/storage/v1/b/resumable-wire/o?uploadType=resumable`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-upload-content-type': 'application/octet-stream' },
      body: JSON.stringify({ name: 'chunks.bin' }),
    });
    assert.equal(start.status, 200);
    const session = start.headers.get('location') ?? '';
    assert.match(session, /^http:\/\/127\.0\.0\.1:\d+\/upload\/storage\/v1\/b\/resumable-wire\/o\?/);
    const status = (): Promise<Response> => fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes */10' } });
    const unstarted = await status();
    assert.equal(unstarted.status, 308);
    assert.equal(unstarted.headers.get('range'), null);
    const first = await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes 0-5/*' }, body: '012345' });
    assert.equal(first.status, 308);
    assert.equal(first.headers.get('range'), 'bytes=0-5');
    assert.equal((await status()).headers.get('range'), 'bytes=0-5');
    // The same chunk again (its answer was lost), then the rest.
    assert.equal((await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes 0-5/*' }, body: '012345' })).status, 308);
    const last = await fetch(session, { method: 'PUT', headers: { 'content-range': 'bytes 6-9/10' }, body: '6789' });
    assert.equal(last.status, 200);
    const object = (await last.json()) as { name: string; size: string; generation: string };
    assert.deepEqual([object.name, object.size], ['chunks.bin', '10']);
    const again = await status();
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { generation: string }).generation, object.generation);
    const [content] = await storage.bucket('resumable-wire').file('chunks.bin').download();
    assert.equal(content.toString(), '0123456789');
    const cancelled = await fetch(`${fake.endpoint}/upload/storage/v1/b/resumable-wire/o?uploadType=resumable`, { method: 'POST', body: JSON.stringify({ name: 'never.bin' }) });
    assert.equal((await fetch(cancelled.headers.get('location') ?? '', { method: 'DELETE' })).status, 499);
  });

  it('answers 429 and 503 on demand', async () => {
    const noRetry = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT, retryOptions: { autoRetry: false } });
    fake.failNext(1, 429);
    await assert.rejects(noRetry.bucket('many-objects').getMetadata(), (error: ApiError) => error.code === 429 && reasonOf(error) === 'rateLimitExceeded');
    fake.failNext(1, 503);
    await assert.rejects(noRetry.bucket('many-objects').getMetadata(), (error: ApiError) => error.code === 503);
  });

  it('keeps its buckets and objects across a restart under dataDir', async () => {
    await fake.stop();
    fake = await startGcsFake({ dataDir });
    storage = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT });
    const [metadata] = await storage.bucket('photos-team-a').getMetadata();
    assert.deepEqual(metadata.labels, { team: 'a' });
    assert.equal((await storage.bucket('many-objects').getFiles())[0].length, 5);
  });
});
