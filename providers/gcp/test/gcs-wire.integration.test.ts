// How the Cloud Storage side meets three answers of the wire, with the real @google-cloud/storage
// against the GCS fake: a throttling answer with Retry-After (the fault proxy), a request that gets
// no answer (the fault proxy's stall), and an objects.list page with no object but a nextPageToken
// (a proxy with a canned answer; the fake never sends one).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Storage } from '@google-cloud/storage';
import { CloudRateLimits, RetryableError } from '@k8or/core';
import { destroyStorageClients, gcpProvider, gcsBucketConnector } from '@k8or/provider-gcp';
import { startFaultProxy, startGcsFake, type FaultProxy, type GcsFake } from '@k8or/local-clouds';
import { PROJECT, bucket, connectionContext, gcpProviderConfig, startCannedProxy } from './support.ts';
import { retryableFailureOf } from '@k8or/provider-testkit';

const LIMIT = { requestsPerSecond: 100, burst: 100 };
const REQUEST_TIMEOUT_MS = 1_000;
/** Far past one timed-out request; shorter than the stall, which only the request timeout can end first. */
const CALL_DEADLINE_MS = 20_000;
const STALL_MS = 60_000;

describe('Cloud Storage on the wire: Retry-After, stalled requests, empty pages with a token', () => {
  let gcs: GcsFake;
  let proxy: FaultProxy;
  let storage: Storage;
  let configs = 0;

  before(async () => {
    gcs = await startGcsFake();
    proxy = await startFaultProxy({ target: gcs.endpoint, dialect: 'gcs' });
    storage = new Storage({ apiEndpoint: gcs.endpoint, projectId: PROJECT });
  });
  after(async () => {
    await destroyStorageClients();
    await proxy?.stop();
    await gcs?.stop();
  });

  /** A client for `name` through `endpoint`, with a 1 s request timeout, under a rate-limit bucket of its own. */
  async function connect(name: string, endpoint: string, spec: Parameters<typeof bucket>[1] = {}) {
    const limits = new CloudRateLimits();
    const providerConfig = gcpProviderConfig({ bucket: endpoint }, { rateLimits: { 'gcs-bucket-metadata': LIMIT } });
    providerConfig.metadata.name = `gcs-wire-${(configs += 1)}`;
    const resource = bucket(name, spec);
    const context = connectionContext(providerConfig, resource);
    const client = await gcsBucketConnector({ requestTimeoutMs: REQUEST_TIMEOUT_MS }).connect(resource, {
      ...context,
      recordCall: limits.recorder(gcpProvider, providerConfig, context.recordCall),
    });
    return { client, resource, context, tokens: () => limits.state(providerConfig.metadata.name ?? '', 'gcs-bucket-metadata')?.calls ?? 0 };
  }

  it('a 429 with Retry-After: 30 is one request and a retryable error carrying the 30 s for the engine', async () => {
    const { client, resource, tokens } = await connect('retry-after', proxy.endpoint);
    proxy.setFaults({ throttle: 1, retryAfterSeconds: 30 });
    proxy.clearCalls();
    try {
      const error = await retryableFailureOf(client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) }));
      assert.equal(error.retryAfterMs, 30_000, "the engine requeues after the server's Retry-After");
      assert.equal(error.code, 'rateLimitExceeded');
      assert.match(error.message, /Retry-After/);
    } finally {
      proxy.setFaults({});
    }
    assert.equal(proxy.calls.length, 1, 'one request');
    assert.equal(tokens(), 1);
  });

  it("a Retry-After of 0 s leaves the wait to the engine's backoff", async () => {
    const { client, resource } = await connect('retry-after-zero', proxy.endpoint);
    proxy.setFaults({ throttle: 1, retryAfterSeconds: 0 });
    try {
      await assert.rejects(client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) }), (error: unknown) => error instanceof RetryableError && error.retryAfterMs === undefined);
    } finally {
      proxy.setFaults({});
    }
  });

  it('a stalled request ends at the request timeout as a retryable ETIMEDOUT (never absence), and the next call succeeds', async () => {
    const { client, resource } = await connect('stalled', proxy.endpoint);
    await client.create(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) });
    proxy.setFaults({ script: ['stall'], stallMs: STALL_MS, stallAfterForward: 0 });
    proxy.clearCalls();
    try {
      const error = await retryableFailureOf(client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) }));
      assert.equal(error.code, 'ETIMEDOUT', error.message);
    } finally {
      proxy.setFaults({});
    }
    assert.deepEqual(
      proxy.calls.map((c) => [c.outcome, c.status]),
      [['stalled', undefined]],
      'one request: the Storage client makes no retry',
    );
    const observation = await client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) });
    assert.equal(observation.exists, true);
  });

  it('forceDelete empties the bucket past an objects.list page with no object and a nextPageToken, then deletes it', async () => {
    const name = 'force-empty-page';
    await storage.createBucket(name);
    for (const object of ['a.txt', 'b.txt']) await storage.bucket(name).file(object).save('data', { resumable: false });
    const isObjectsList = (url: string): boolean => url.startsWith(`/storage/v1/b/${name}/o?`) || url === `/storage/v1/b/${name}/o`;
    let answered = false;
    const canned = await startCannedProxy(gcs.endpoint, (url) => {
      if (!isObjectsList(url) || answered) return undefined;
      answered = true;
      // The fake's page token is the last name listed, base64url: "\0" sorts before every name.
      return { status: 200, headers: { 'content-type': 'application/json; charset=UTF-8' }, body: JSON.stringify({ kind: 'storage#objects', nextPageToken: Buffer.from('\0').toString('base64url') }) };
    });
    try {
      const { client, resource } = await connect(name, canned.endpoint, { forceDelete: true });
      await client.delete(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) });
      const lists = canned.requests.filter(isObjectsList);
      assert.ok(/[?&]pageToken=AA(&|$)/.test(lists[1] ?? ''), `the second objects.list continues from the token (${lists.join(', ')})`);
      const [exists] = await storage.bucket(name).exists();
      assert.equal(exists, false, 'the bucket is gone');
    } finally {
      await canned.close();
    }
  });
});
