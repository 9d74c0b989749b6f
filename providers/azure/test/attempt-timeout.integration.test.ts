// A stalled HTTP attempt ends at the per-attempt timeout (src/attempt-timeout.ts) and the SDK tries
// again, instead of holding the call until the reconcile's deadline. The real @azure/storage-blob
// and @azure/data-tables against Azurite behind the fault proxy, which holds a call without an
// answer; the connectors are made with a 1 s per-attempt timeout (30 s by default), and every call
// gets a deadline far longer than the attempts it may make, so only the per-attempt timeout can
// end a stalled attempt.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Bucket, Table } from '@k8or/api';
import { CloudRateLimits, RetryableError, type ExternalClient } from '@k8or/core';
import { azureBucketConnector, azureProvider, azureTableConnector } from '@k8or/provider-azure';
import { accountKeySecret, azureProviderConfig, bucket, connectionContext, startProxiedAzurite, table, type ProxiedAzurite } from './support.ts';

const ATTEMPT_TIMEOUT_MS = 1_000;
/** Far past three timed-out attempts and the SDKs' backoffs between them. */
const CALL_DEADLINE_MS = 20_000;
/** Longer than the call's deadline: a stall the per-attempt timeout does not end outlasts the call. */
const STALL_MS = 60_000;
const LIMIT = { requestsPerSecond: 100, burst: 100 };

interface Service<R extends Bucket | Table> {
  name: string;
  dialect: 'azure-blob' | 'azure-table';
  rateLimitService: string;
  resource: (name: string) => R;
  endpoints: (endpoint: string) => { bucket?: string; table?: string };
  connect: (resource: R, context: ReturnType<typeof connectionContext>) => Promise<ExternalClient<R>>;
}

const blob: Service<Bucket> = {
  name: 'Blob',
  dialect: 'azure-blob',
  rateLimitService: 'blob-containers',
  resource: bucket,
  endpoints: (endpoint) => ({ bucket: endpoint }),
  connect: (resource, context) => azureBucketConnector({ attemptTimeoutMs: ATTEMPT_TIMEOUT_MS }).connect(resource, context),
};

const tables: Service<Table> = {
  name: 'Tables',
  dialect: 'azure-table',
  rateLimitService: 'table-service',
  // Azure table names are letters and digits only.
  resource: (name) => table(name.replace(/-/g, '')),
  endpoints: (endpoint) => ({ table: endpoint }),
  connect: (resource, context) => azureTableConnector({ attemptTimeoutMs: ATTEMPT_TIMEOUT_MS }).connect(resource, context),
};

describe('a stalled Azure attempt ends at the per-attempt timeout (Azurite behind the fault proxy)', () => {
  let azure: ProxiedAzurite;
  let configs = 0;

  before(async () => {
    azure = await startProxiedAzurite();
  });
  after(async () => await azure?.stop());

  /** A client for `resource` through the service's proxy, under a rate-limit bucket of its own. */
  async function rateLimited<R extends Bucket | Table>(service: Service<R>, resource: R) {
    const proxy = azure.proxies.get(service.dialect)!;
    const limits = new CloudRateLimits();
    const providerConfig = azureProviderConfig(service.endpoints(proxy.endpoint));
    providerConfig.metadata.name = `attempt-timeout-${(configs += 1)}`;
    providerConfig.spec.rateLimits = { [service.rateLimitService]: LIMIT };
    const context = connectionContext(providerConfig, resource, accountKeySecret(azure.azurite));
    const client = await service.connect(resource, { ...context, recordCall: limits.recorder(azureProvider, providerConfig, context.recordCall) });
    return { proxy, client, tokens: () => limits.state(providerConfig.metadata.name ?? '', service.rateLimitService)?.calls ?? 0 };
  }

  for (const service of [blob, tables] as Service<Bucket | Table>[]) {
    it(`${service.name}: one stalled attempt is given up at the timeout and the SDK's next attempt succeeds, a token each`, async () => {
      const resource = service.resource('stalled-once');
      const { proxy, client, tokens } = await rateLimited(service, resource);
      await client.create(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) });
      const tokensBefore = tokens();
      proxy.setFaults({ script: ['stall'], stallMs: STALL_MS, stallAfterForward: 0 });
      proxy.clearCalls();
      try {
        const observation = await client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) });
        assert.equal(observation.exists, true);
      } finally {
        proxy.setFaults({});
      }
      assert.deepEqual(
        proxy.calls.map((c) => c.outcome),
        ['stalled', 'forwarded'],
      );
      assert.equal(proxy.calls[0]?.status, undefined, 'the client left the stalled attempt');
      assert.equal(proxy.calls[0]?.operationId, proxy.calls[1]?.operationId, 'the second attempt is the SDK retrying the first');
      assert.equal(tokens() - tokensBefore, 2, 'each attempt took a token');
    });

    it(`${service.name}: when every attempt stalls the call fails retryable with ETIMEDOUT (never absence) after three attempts`, async () => {
      const resource = service.resource('stalled-always');
      const { proxy, client } = await rateLimited(service, resource);
      proxy.setFaults({ stall: 1, stallMs: STALL_MS, stallAfterForward: 0 });
      proxy.clearCalls();
      try {
        await assert.rejects(client.observe(resource, { signal: AbortSignal.timeout(CALL_DEADLINE_MS) }), (error: unknown) => {
          assert.ok(error instanceof RetryableError, `a retryable error, not ${String(error)}`);
          assert.equal(error.code, 'ETIMEDOUT', error.message);
          return true;
        });
      } finally {
        proxy.setFaults({});
      }
      assert.deepEqual(
        proxy.calls.map((c) => c.outcome),
        ['stalled', 'stalled', 'stalled'],
        'three attempts (providers/azure/src/clients.ts MAX_TRIES), each given up',
      );
    });
  }
});
