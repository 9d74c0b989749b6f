import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { CoreMetrics, RetryableError, WorkQueue } from '@k8or/core';

/** The value of the sample `name{labels}` in Prometheus text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]!] = pair[2]!;
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(found).length && wanted.every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe('CoreMetrics', () => {
  it('exposes a work queue\'s activity under client-go\'s workqueue_* names', async () => {
    const metrics = new CoreMetrics();
    const queue = new WorkQueue<string>({ name: 'bucket', metrics: metrics.workQueueMetrics('bucket') });
    queue.add('team-a/photos');
    queue.add('team-a/photos');
    queue.add('team-a/logs');
    let text = await metrics.metrics();
    assert.equal(sample(text, 'workqueue_adds_total', { name: 'bucket' }), 2, 'a duplicate add is not an add');
    assert.equal(sample(text, 'workqueue_depth', { name: 'bucket' }), 2);

    const item = (await queue.get())!;
    text = await metrics.metrics();
    assert.equal(sample(text, 'workqueue_depth', { name: 'bucket' }), 1);
    assert.equal(sample(text, 'workqueue_queue_duration_seconds_count', { name: 'bucket' }), 1);
    assert.ok((sample(text, 'workqueue_longest_running_processor_seconds', { name: 'bucket' }) ?? -1) >= 0);
    assert.ok((sample(text, 'workqueue_unfinished_work_seconds', { name: 'bucket' }) ?? -1) >= 0);

    queue.done(item);
    queue.addRateLimited(item);
    text = await metrics.metrics();
    assert.equal(sample(text, 'workqueue_work_duration_seconds_count', { name: 'bucket' }), 1);
    assert.equal(sample(text, 'workqueue_retries_total', { name: 'bucket' }), 1);
    assert.equal(sample(text, 'workqueue_longest_running_processor_seconds', { name: 'bucket' }), 0, 'nothing in flight');
    assert.equal(sample(text, 'workqueue_unfinished_work_seconds', { name: 'bucket' }), 0);
    queue.shutDown();
  });

  it('counts and times cloud calls by provider, operation and result, passing outcomes through', async () => {
    const metrics = new CoreMetrics();
    const recordCall = metrics.cloudCallRecorder('aws');
    assert.equal(await recordCall('CreateBucket', async () => 'created'), 'created');
    assert.equal(await recordCall('HeadBucket', async () => 200), 200);
    await assert.rejects(
      recordCall('HeadBucket', async () => {
        throw new RetryableError('SlowDown', { code: 'SlowDown' });
      }),
      RetryableError,
    );
    const text = await metrics.metrics();
    assert.equal(sample(text, 'k8or_cloud_calls_total', { provider: 'aws', operation: 'CreateBucket', result: 'success' }), 1);
    assert.equal(sample(text, 'k8or_cloud_calls_total', { provider: 'aws', operation: 'HeadBucket', result: 'success' }), 1);
    assert.equal(sample(text, 'k8or_cloud_calls_total', { provider: 'aws', operation: 'HeadBucket', result: 'error' }), 1);
    assert.equal(sample(text, 'k8or_cloud_call_duration_seconds_count', { provider: 'aws', operation: 'HeadBucket' }), 2);
  });

  it('records reconciles in controller-runtime\'s names', async () => {
    const metrics = new CoreMetrics();
    metrics.recordReconcile('bucket', 'success', 0.2);
    metrics.recordReconcile('bucket', 'error', 1.5);
    metrics.recordReconcile('bucket', 'requeue_after', 0.01);
    metrics.maxConcurrentReconciles.set({ controller: 'bucket' }, 10);
    metrics.activeWorkers.set({ controller: 'bucket' }, 3);
    metrics.setLeader('k8or-operator', true);
    const text = await metrics.metrics();
    assert.equal(sample(text, 'controller_runtime_reconcile_total', { controller: 'bucket', result: 'success' }), 1);
    assert.equal(sample(text, 'controller_runtime_reconcile_total', { controller: 'bucket', result: 'error' }), 1);
    assert.equal(sample(text, 'controller_runtime_reconcile_errors_total', { controller: 'bucket' }), 1);
    assert.equal(sample(text, 'controller_runtime_reconcile_time_seconds_count', { controller: 'bucket' }), 3);
    assert.equal(sample(text, 'controller_runtime_reconcile_time_seconds_bucket', { controller: 'bucket', le: '0.25' }), 2);
    assert.equal(sample(text, 'controller_runtime_max_concurrent_reconciles', { controller: 'bucket' }), 10);
    assert.equal(sample(text, 'controller_runtime_active_workers', { controller: 'bucket' }), 3);
    assert.equal(sample(text, 'leader_election_master_status', { name: 'k8or-operator' }), 1);
  });

  it('counts informer lists, watch restarts and events', async () => {
    const metrics = new CoreMetrics();
    const informer = metrics.informerMetrics('buckets.k8or.io');
    informer.listed();
    informer.watchEnded('gone');
    informer.listed();
    informer.event('add');
    const text = await metrics.metrics();
    assert.equal(sample(text, 'k8or_informer_lists_total', { resource: 'buckets.k8or.io' }), 2);
    assert.equal(sample(text, 'k8or_informer_watch_restarts_total', { resource: 'buckets.k8or.io', reason: 'gone' }), 1);
    assert.equal(sample(text, 'k8or_informer_events_total', { resource: 'buckets.k8or.io', event: 'add' }), 1);
  });

  it('adds process metrics on request', async () => {
    const metrics = new CoreMetrics();
    metrics.collectProcessMetrics();
    assert.match(await metrics.metrics(), /process_cpu_user_seconds_total/);
  });
});
