// What the Azure SDKs' own retries do on the wire, with the real @azure/storage-blob and
// @azure/data-tables against Azurite behind the fault proxy: how many attempts one provider call
// makes under throttling with a Retry-After, under a stall and after a storm, and that every
// attempt takes a token of the call's rate-limit bucket. A stalled attempt ends at the per-attempt
// timeout (src/attempt-timeout.ts; 1 s here, 30 s by default) and the SDK tries again; those calls
// get a deadline far past the attempts they may make, so only the per-attempt timeout can end one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Bucket, Table } from '@k8or/api';
import { CloudRateLimits, NotOwnedError, RetryableError, type ExternalClient } from '@k8or/core';
import { azureBucketConnector, azureProvider, azureTableConnector, type AzureConnectorOptions } from '@k8or/provider-azure';
import { accountKeySecret, azureProviderConfig, bucket, connectionContext, startProxiedAzurite, startFaultProxy as startErrorProxy, table, type ProxiedAzurite } from './support.ts';
import { retryableFailureOf } from '@k8or/provider-testkit';

/** Loose enough that the limit never slows these tests; each attempt is still counted. */
const LIMIT = { requestsPerSecond: 100, burst: 100 };
const ATTEMPT_TIMEOUT_MS = 1_000;
/** Far past three timed-out attempts and the SDKs' backoffs between them. */
const CALL_DEADLINE_MS = 20_000;
/** Longer than any call's deadline here: a stall the per-attempt timeout does not end outlasts the call. */
const STALL_MS = 60_000;

interface Service<R extends Bucket | Table> {
  name: string;
  dialect: 'azure-blob' | 'azure-table';
  rateLimitService: string;
  resource: (name: string) => R;
  endpoints: (endpoint: string) => { bucket?: string; table?: string };
  connect: (resource: R, context: ReturnType<typeof connectionContext>, options: AzureConnectorOptions) => Promise<ExternalClient<R>>;
  /** Makes `resource` exist in Azurite, straight through the provider. */
  create: (client: ExternalClient<R>, resource: R) => Promise<unknown>;
  /** The requests an observe of an existing resource makes once its existence check answered (a table's ACL: its identity). */
  readsAfterExistence: number;
}

const blob: Service<Bucket> = {
  name: 'Blob',
  dialect: 'azure-blob',
  rateLimitService: 'blob-containers',
  resource: bucket,
  endpoints: (endpoint) => ({ bucket: endpoint }),
  connect: (resource, context, options) => azureBucketConnector(options).connect(resource, context),
  create: (client, resource) => client.create(resource, { signal: AbortSignal.timeout(30_000) }),
  readsAfterExistence: 0,
};

const tables: Service<Table> = {
  name: 'Tables',
  dialect: 'azure-table',
  rateLimitService: 'table-service',
  // Azure table names are letters and digits only.
  resource: (name) => table(name.replace(/-/g, '')),
  endpoints: (endpoint) => ({ table: endpoint }),
  connect: (resource, context, options) => azureTableConnector(options).connect(resource, context),
  create: (client, resource) => client.create(resource, { signal: AbortSignal.timeout(30_000) }),
  readsAfterExistence: 1,
};

describe("the Azure SDKs' retries on the wire (Azurite behind the fault proxy)", () => {
  let azure: ProxiedAzurite;
  let configs = 0;

  before(async () => {
    azure = await startProxiedAzurite();
  });
  after(async () => await azure?.stop());

  /** A client for `resource` through `endpoint`, under a rate-limit bucket of its own. */
  async function rateLimited<R extends Bucket | Table>(service: Service<R>, resource: R, endpoint: string, options: AzureConnectorOptions = {}) {
    const limits = new CloudRateLimits();
    const providerConfig = azureProviderConfig(service.endpoints(endpoint));
    providerConfig.metadata.name = `retries-${(configs += 1)}`;
    providerConfig.spec.rateLimits = { [service.rateLimitService]: LIMIT };
    const context = connectionContext(providerConfig, resource, accountKeySecret(azure.azurite));
    const client = await service.connect(resource, { ...context, recordCall: limits.recorder(azureProvider, providerConfig, context.recordCall) }, options);
    return { client, tokens: () => limits.state(providerConfig.metadata.name ?? '', service.rateLimitService)?.calls ?? 0 };
  }

  for (const service of [blob, tables] as Service<Bucket | Table>[]) {
    it(`${service.name}: a throttling answer with a Retry-After longer than the SDK's backoff is one attempt, and the engine is told to wait that long`, async () => {
      const proxy = azure.proxies.get(service.dialect)!;
      const resource = service.resource('retry-after');
      const { client, tokens } = await rateLimited(service, resource, proxy.endpoint);
      proxy.setFaults({ throttle: 1, retryAfterSeconds: 30 });
      proxy.clearCalls();
      const started = performance.now();
      try {
        const failure = await retryableFailureOf(client.observe(resource, { signal: AbortSignal.timeout(10_000) }));
        const seconds = (performance.now() - started) / 1000;
        assert.equal(failure.retryAfterMs, 30_000, "the engine requeues after the server's Retry-After");
        assert.equal(failure.code, 'ServerBusy');
        assert.equal(proxy.calls.length, 1, 'the SDK sent no retry the server had asked it to hold');
        assert.equal(tokens(), proxy.calls.length, 'each attempt took a token');
        assert.ok(seconds < 5, `the call ended at once (${seconds.toFixed(1)} s), not after the Retry-After nor at the deadline`);
      } finally {
        proxy.setFaults({});
      }
    });

    it(`${service.name}: a stalled attempt ends with the call's deadline, when that comes before the per-attempt timeout, as a retryable error (never absence), with no attempt after it`, async () => {
      const proxy = azure.proxies.get(service.dialect)!;
      const resource = service.resource('stalled');
      const { client, tokens } = await rateLimited(service, resource, proxy.endpoint);
      proxy.setFaults({ script: ['stall'], stallMs: 60_000, stallAfterForward: 0 });
      proxy.clearCalls();
      const started = performance.now();
      try {
        await assert.rejects(client.observe(resource, { signal: AbortSignal.timeout(1_500) }), (error: unknown) => error instanceof RetryableError);
        const seconds = (performance.now() - started) / 1000;
        assert.ok(seconds < 5, `the call ended with its deadline (${seconds.toFixed(1)} s)`);
        // The SDK's retry loop runs inside the call: once the call has rejected, no attempt can follow.
        assert.deepEqual(proxy.calls.map((c) => c.outcome), ['stalled']);
        assert.equal(tokens(), 1);
      } finally {
        proxy.setFaults({});
      }
    });

    it(`${service.name}: one stalled attempt is given up at the per-attempt timeout and the SDK's next attempt succeeds, a token each`, async () => {
      const proxy = azure.proxies.get(service.dialect)!;
      const resource = service.resource('stalled-once');
      const { client, tokens } = await rateLimited(service, resource, proxy.endpoint, { attemptTimeoutMs: ATTEMPT_TIMEOUT_MS });
      await service.create(client, resource);
      const tokensBefore = tokens();
      proxy.setFaults({ script: ['stall'], stallMs: STALL_MS, stallAfterForward: 0 });
      proxy.clearCalls();
      try {
        const observation = await client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) });
        assert.equal(observation.exists, true);
      } finally {
        proxy.setFaults({});
      }
      const after = service.readsAfterExistence;
      assert.deepEqual(proxy.calls.map((c) => c.outcome), ['stalled', 'forwarded', ...Array<string>(after).fill('forwarded')]);
      assert.equal(proxy.calls[0]?.status, undefined, 'the client left the stalled attempt');
      assert.equal(proxy.calls[0]?.operationId, proxy.calls[1]?.operationId, 'the second attempt is the SDK retrying the first');
      assert.equal(tokens() - tokensBefore, 2 + after, 'each attempt took a token');
    });

    it(`${service.name}: when every attempt stalls the call fails retryable with ETIMEDOUT (never absence) after three attempts`, async () => {
      const proxy = azure.proxies.get(service.dialect)!;
      const resource = service.resource('stalled-always');
      const { client } = await rateLimited(service, resource, proxy.endpoint, { attemptTimeoutMs: ATTEMPT_TIMEOUT_MS });
      proxy.setFaults({ stall: 1, stallMs: STALL_MS, stallAfterForward: 0 });
      proxy.clearCalls();
      try {
        const error = await retryableFailureOf(client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) }));
        assert.equal(error.code, 'ETIMEDOUT', error.message);
      } finally {
        proxy.setFaults({});
      }
      assert.deepEqual(proxy.calls.map((c) => c.outcome), ['stalled', 'stalled', 'stalled'], 'three attempts (providers/azure/src/clients.ts MAX_TRIES), each given up');
    });

    it(`${service.name}: after a throttling storm the client is whole: the next call is one attempt, and succeeds`, async () => {
      const proxy = azure.proxies.get(service.dialect)!;
      const resource = service.resource('after-storm');
      const { client, tokens } = await rateLimited(service, resource, proxy.endpoint);
      await service.create(client, resource);
      proxy.setFaults({ throttle: 1 });
      proxy.clearCalls();
      const tokensBeforeStorm = tokens();
      try {
        const storm = await Promise.allSettled(Array.from({ length: 10 }, () => client.observe(resource, { signal: AbortSignal.timeout(30_000) })));
        assert.ok(storm.every((outcome) => outcome.status === 'rejected' && outcome.reason instanceof RetryableError), 'every call of the storm failed retryable');
        assert.equal(proxy.calls.length, 30, 'three attempts per call (providers/azure/src/clients.ts MAX_TRIES), no more');
      } finally {
        proxy.setFaults({});
      }
      const tokensAfterStorm = tokens();
      proxy.clearCalls();
      const started = performance.now();
      const observation = await client.observe(resource, { signal: AbortSignal.timeout(30_000) });
      assert.equal(observation.exists, true);
      assert.equal(proxy.calls.length, 1 + service.readsAfterExistence, 'one attempt');
      assert.ok(performance.now() - started < 2_000, 'no backoff left over from the storm');
      assert.equal(tokensAfterStorm - tokensBeforeStorm, 30, 'each attempt of the storm took a token');
    });
  }

  it('Tables: a create the SDK retried after a stalled attempt that made the table is no refusal: "already exists" then leaves its outcome unknown (noEffect false)', async () => {
    const proxy = azure.proxies.get('azure-table')!;
    const resource = tables.resource('made-by-a-stalled-attempt');
    const { client } = await rateLimited(tables, resource, proxy.endpoint, { attemptTimeoutMs: ATTEMPT_TIMEOUT_MS });
    // the first attempt reaches Azurite (the table is made), and its answer never comes back
    proxy.setFaults({ script: ['stall'], stallMs: STALL_MS, stallAfterForward: 1 });
    proxy.clearCalls();
    try {
      await assert.rejects(client.create(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) }), (error: unknown) => {
        assert.ok(error instanceof NotOwnedError, String(error));
        assert.equal(error.code, 'TableAlreadyExists');
        assert.equal(error.noEffect, false, 'an earlier attempt may have made it: not a refusal');
        assert.match(error.message, /nothing proves/);
        return true;
      });
    } finally {
      proxy.setFaults({});
    }
    assert.deepEqual(proxy.calls.slice(0, 2).map((c) => c.outcome), ['stalled', 'forwarded'], 'the SDK retried the stalled create');
    assert.equal((await client.observe(resource, { signal: AbortSignal.timeout(10_000) })).exists, true, 'the stalled attempt made the table');

    // a create answered "already exists" at its one attempt is a refusal, as before
    await assert.rejects(client.create(resource, { signal: AbortSignal.timeout(10_000) }), (error: unknown) => error instanceof NotOwnedError && error.noEffect);
  });

  it('Blob and Tables: a 429 without Retry-After is one attempt and a retryable error (neither SDK retries it; the engine backs off)', async () => {
    for (const [service, target] of [
      [blob, azure.azurite.blobEndpoint],
      [tables, azure.azurite.tableEndpoint],
    ] as const) {
      const proxy = await startErrorProxy(target);
      try {
        const resource = (service as Service<Bucket | Table>).resource('too-many');
        const { client, tokens } = await rateLimited(service as Service<Bucket | Table>, resource, proxy.endpoint);
        proxy.fail(5, 429, 'TooManyRequests');
        await assert.rejects(client.observe(resource, { signal: AbortSignal.timeout(10_000) }), (error: unknown) => error instanceof RetryableError && error.code === 'TooManyRequests');
        assert.equal(proxy.injected, 1, `${service.name}: one attempt`);
        assert.equal(tokens(), 1);
      } finally {
        await proxy.close();
      }
    }
  });
});
