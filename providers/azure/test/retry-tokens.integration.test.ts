// The SDKs' retries take a rate-limit token each: real @azure/storage-blob and @azure/data-tables
// against Azurite, behind the fault proxy that throttles every attempt of one call.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Bucket, Table } from '@k8or/api';
import { CloudRateLimits, ProviderError, type CloudCallRecorder, type ExternalClient } from '@k8or/core';
import { callRateReport } from '@k8or/core/testing';
import { azureProvider, bucketConnector, tableConnector } from '@k8or/provider-azure';
import type { CloudDialectName } from '@k8or/local-clouds';
import { accountKeySecret, azureProviderConfig, bucket, connectionContext, startProxiedAzurite, table, type ProxiedAzurite } from './support.ts';

/**
 * Slow enough that the SDKs' own backoff (0.5 s base, three tries: at most 2 s between two) can
 * never space a call's three attempts as far apart as the bucket does (5 s), even with the
 * allowance below: without a token per retry the check fails (two attempts within 2 s, 1.8 allowed).
 */
const LIMIT = { requestsPerSecond: 0.2, burst: 1 };
/** An attempt reaches the proxy some time after it took its token: up to 2 s on a loaded machine. */
const LATENCY_ALLOWANCE_S = 2;
/** The SDKs' tries per call (providers/azure/src/clients.ts). */
const ATTEMPTS = 3;
const call = { signal: new AbortController().signal };

describe("the Azure SDKs' retries take a rate-limit token each (Azurite behind a throttling proxy)", () => {
  let azure: ProxiedAzurite;

  before(async () => {
    azure = await startProxiedAzurite();
  });
  after(async () => await azure?.stop());

  async function throttledObserve<R extends Bucket | Table>(
    dialect: CloudDialectName,
    service: string,
    resource: R,
    connect: (resource: R, context: ReturnType<typeof connectionContext>) => Promise<ExternalClient<R>>,
  ): Promise<void> {
    const proxy = azure.proxies.get(dialect)!;
    const limits = new CloudRateLimits();
    const providerConfig = azureProviderConfig(resource.kind === 'Bucket' ? { bucket: proxy.endpoint } : { table: proxy.endpoint });
    providerConfig.metadata.name = `throttled-${dialect}`;
    providerConfig.spec.rateLimits = { [service]: LIMIT };
    const context = connectionContext(providerConfig, resource, accountKeySecret(azure.azurite));
    const recordCall: CloudCallRecorder = limits.recorder(azureProvider, providerConfig, context.recordCall);
    const client = await connect(resource, { ...context, recordCall });
    proxy.setFaults({ script: Array.from({ length: ATTEMPTS }, () => 'throttle' as const) });
    const since = Date.now();

    await assert.rejects(client.observe(resource, call), (error: unknown) => error instanceof ProviderError && error.retryable);

    const arrivals = proxy.calls.filter((c) => c.at >= since).map((c) => c.at);
    assert.equal(arrivals.length, ATTEMPTS, 'the SDK retried the throttled call');
    const report = callRateReport(arrivals, LIMIT, LATENCY_ALLOWANCE_S);
    assert.ok(report.withinLimit, `${report.worstWindow.calls} attempts in ${report.worstWindow.seconds} s, ${report.worstWindow.allowed} allowed`);
    const state = limits.state(providerConfig.metadata.name, service);
    assert.equal(state?.calls, ATTEMPTS, 'each attempt took a token of the bucket');
    assert.ok((state?.delayed ?? 0) >= 1, 'a retry waited for its token');
  }

  it('Blob: waits for a token before every attempt after the first', async () => {
    await throttledObserve('azure-blob', 'blob-containers', bucket('throttled'), (resource, context) => bucketConnector.connect(resource, context));
  });

  it('Tables: waits for a token before every attempt after the first', async () => {
    await throttledObserve('azure-table', 'table-service', table('throttled'), (resource, context) => tableConnector.connect(resource, context));
  });
});
