import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { mapBounded } from '../dist/util/bounded.js';

/** A task per item that settles only when the test says so, counting how many run at once. */
function gatedTasks(): { task: (item: number) => Promise<number>; running: () => number; most: () => number; started: number[]; finish: (item: number, error?: Error) => void } {
  const gates = new Map<number, { resolve: (value: number) => void; reject: (error: Error) => void }>();
  const started: number[] = [];
  let running = 0;
  let most = 0;
  return {
    task: (item) => {
      started.push(item);
      most = Math.max(most, ++running);
      return new Promise<number>((resolve, reject) => gates.set(item, { resolve, reject })).finally(() => running--);
    },
    running: () => running,
    most: () => most,
    started,
    finish: (item, error) => {
      const gate = gates.get(item)!;
      if (error) gate.reject(error);
      else gate.resolve(item * 10);
    },
  };
}

/** Lets every promise callback that can run, run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('mapBounded', () => {
  it('runs at most `limit` tasks at once, starts the next as one ends, and keeps the order of the results', async () => {
    const tasks = gatedTasks();
    const items = Array.from({ length: 40 }, (_, i) => i);
    const all = mapBounded(items, 16, tasks.task);
    await settle();
    assert.equal(tasks.running(), 16);
    assert.deepEqual(tasks.started, items.slice(0, 16));
    tasks.finish(3);
    await settle();
    assert.equal(tasks.running(), 16, 'one ended, the next started');
    assert.equal(tasks.started.length, 17);
    const finished = new Set([3]);
    while (finished.size < items.length) {
      for (const item of tasks.started.filter((i) => !finished.has(i))) {
        tasks.finish(item);
        finished.add(item);
      }
      await settle();
      assert.ok(tasks.running() <= 16);
    }
    assert.deepEqual(await all, items.map((i) => i * 10));
    assert.equal(tasks.most(), 16);
  });

  it('stops starting tasks at the first failure and throws it once the running ones settled', async () => {
    const tasks = gatedTasks();
    const all = mapBounded(Array.from({ length: 10 }, (_, i) => i), 4, tasks.task);
    let thrown: unknown;
    void all.catch((error: unknown) => (thrown = error));
    await settle();
    tasks.finish(0, new Error('refused'));
    await settle();
    assert.equal(tasks.started.length, 4, 'nothing started after the failure');
    assert.equal(thrown, undefined, 'not thrown while three still run');
    for (const item of [1, 2, 3]) tasks.finish(item);
    await assert.rejects(all, /refused/);
  });

  it('starts nothing more once the signal aborts', async () => {
    const tasks = gatedTasks();
    const aborting = new AbortController();
    const all = mapBounded(Array.from({ length: 10 }, (_, i) => i), 2, tasks.task, aborting.signal);
    await settle();
    aborting.abort();
    tasks.finish(0);
    tasks.finish(1);
    await assert.rejects(all, { name: 'AbortError' });
    assert.deepEqual(tasks.started, [0, 1]);
  });
});
