import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { CoreMetrics, HealthChecks, informersSynced, startProbeServer, type ProbeServer } from '@k8or/core';

describe('probe server', () => {
  const health = new HealthChecks();
  const metrics = new CoreMetrics();
  let server: ProbeServer;
  // Stand-ins for the operator's informers: anything with hasSynced().
  const bucketInformer = { synced: false, hasSynced(): boolean { return this.synced; } };
  const tableInformer = { synced: false, hasSynced(): boolean { return this.synced; } };
  let alive = true;

  before(async () => {
    health.addReadinessCheck('informers', informersSynced(bucketInformer, tableInformer));
    health.addReadinessCheck('webhook-certs', () => true);
    health.addLivenessCheck('event-loop', () => alive);
    health.addLivenessCheck('throws', () => {
      if (!alive) throw new Error('broken');
      return true;
    });
    metrics.recordReconcile('bucket', 'success', 0.1);
    server = await startProbeServer({ port: 0, host: '127.0.0.1', health, metrics });
  });

  after(async () => {
    await server.close();
  });

  async function get(path: string): Promise<{ status: number; body: string; contentType: string | null }> {
    const response = await fetch(`${server.url}${path}`);
    return { status: response.status, body: await response.text(), contentType: response.headers.get('content-type') };
  }

  it('is not ready until the informers have synced, and says which check fails', async () => {
    let answer = await get('/readyz');
    assert.equal(answer.status, 500);
    assert.match(answer.body, /\[-\]informers failed/);
    assert.doesNotMatch(answer.body, /webhook-certs/, 'only failures without ?verbose');

    answer = await get('/readyz?verbose');
    assert.equal(answer.status, 500);
    assert.match(answer.body, /\[-\]informers failed\n\[\+\]webhook-certs ok\nreadyz check failed/);

    bucketInformer.synced = true;
    assert.equal((await get('/readyz')).status, 500, 'one informer is not enough');
    tableInformer.synced = true;
    answer = await get('/readyz');
    assert.equal(answer.status, 200);
    assert.equal(answer.body, 'ok\n');
    answer = await get('/readyz?verbose');
    assert.equal(answer.body, '[+]informers ok\n[+]webhook-certs ok\nreadyz check passed\n');
  });

  it('answers one named check, and 404 for an unknown one', async () => {
    assert.equal((await get('/readyz/webhook-certs')).status, 200);
    assert.equal((await get('/readyz/nope')).status, 404);
  });

  it('reports liveness, counting a throwing check as failed', async () => {
    assert.equal((await get('/healthz')).status, 200);
    alive = false;
    const answer = await get('/healthz?verbose');
    assert.equal(answer.status, 500);
    assert.match(answer.body, /\[-\]event-loop failed\n\[-\]throws failed\nhealthz check failed/);
    alive = true;
    assert.equal(health.healthz().ok, true);
    assert.deepEqual(health.healthz().checks, { 'event-loop': true, throws: true });
  });

  it('serves Prometheus metrics', async () => {
    const answer = await get('/metrics');
    assert.equal(answer.status, 200);
    assert.match(answer.contentType ?? '', /^text\/plain/);
    assert.match(answer.body, /controller_runtime_reconcile_total\{controller="bucket",result="success"\} 1/);
  });

  it('answers 404 elsewhere and 405 to writes', async () => {
    assert.equal((await get('/')).status, 404);
    const response = await fetch(`${server.url}/readyz`, { method: 'POST' });
    assert.equal(response.status, 405);
    await response.text();
  });

  it('refuses duplicate or malformed check names', () => {
    assert.throws(() => health.addReadinessCheck('informers', () => true), /already exists/);
    assert.throws(() => health.addLivenessCheck('has space', () => true), /invalid check name/);
  });
});
