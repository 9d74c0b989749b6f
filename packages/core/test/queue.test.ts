import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ItemExponentialFailureRateLimiter, WorkQueue } from '@k8or/core';

/** Resolves with the next item, or 'pending' if none arrives within a few turns of the event loop. */
async function tryGet<T>(pending: Promise<T | undefined>): Promise<T | undefined | 'pending'> {
  return Promise.race([pending, sleep(20).then(() => 'pending' as const)]);
}

/** Takes `count` items one at a time, each done before the next is taken: the order the queue hands them out. */
async function takeInOrder<T>(queue: WorkQueue<T>, count: number): Promise<T[]> {
  const order: T[] = [];
  for (let i = 0; i < count; i++) {
    const item = (await queue.get())!;
    order.push(item);
    queue.done(item);
  }
  return order;
}

describe('WorkQueue', () => {
  it('queues a key once however many times it is added', async () => {
    const queue = new WorkQueue<string>({ name: 'dedupe' });
    queue.add('default/a');
    queue.add('default/a');
    queue.add('default/b');
    queue.add('default/a');
    assert.equal(queue.len(), 2);
    assert.equal(await queue.get(), 'default/a');
    assert.equal(await queue.get(), 'default/b');
    assert.equal(queue.len(), 0);
    queue.shutDown();
  });

  it('never hands one key to two workers, and re-queues it after done when it changed meanwhile', async () => {
    const queue = new WorkQueue<string>({ name: 'exclusive' });
    queue.add('default/a');
    const first = await queue.get();
    assert.equal(first, 'default/a');

    // An event arrives for the key while worker 1 still processes it.
    queue.add('default/a');
    assert.equal(queue.len(), 0, 'the key is held back, not queued, while in flight');
    const secondWorker = queue.get();
    assert.equal(await tryGet(secondWorker), 'pending');

    queue.done('default/a');
    assert.equal(await secondWorker, 'default/a', 'the change is processed once worker 1 is done');
    queue.done('default/a');
    assert.equal(queue.len(), 0);
    assert.equal(await tryGet(queue.get()), 'pending', 'nothing more to do: it was re-queued exactly once');
    queue.shutDown();
  });

  it('does not re-queue a key that did not change while it was processed', async () => {
    const queue = new WorkQueue<string>({ name: 'clean' });
    queue.add('a');
    const item = await queue.get();
    queue.done(item!);
    assert.equal(queue.len(), 0);
    queue.shutDown();
  });

  it('keeps many workers on many keys free of overlap and loses no add', async () => {
    const queue = new WorkQueue<string>({ name: 'workers' });
    const running = new Set<string>();
    const processed = new Map<string, number>();
    const lastAdd = new Map<string, number>();
    const lastSeen = new Map<string, number>();
    let overlaps = 0;
    let tick = 0;

    const worker = async (): Promise<void> => {
      for (;;) {
        const key = await queue.get();
        if (key === undefined) return;
        if (running.has(key)) overlaps++;
        running.add(key);
        lastSeen.set(key, tick);
        await sleep(Math.random() * 3);
        processed.set(key, (processed.get(key) ?? 0) + 1);
        running.delete(key);
        queue.done(key);
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());
    for (let round = 0; round < 300; round++) {
      const key = `ns/obj-${round % 17}`;
      tick++;
      lastAdd.set(key, tick);
      queue.add(key);
      if (round % 10 === 0) await sleep(1);
    }
    // Every key must be processed after its last add.
    await waitFor(() => [...lastAdd].every(([key, added]) => (lastSeen.get(key) ?? -1) >= added) && queue.len() === 0);
    assert.ok(await queue.shutDownWithDrain(10_000));
    await Promise.all(workers);
    assert.equal(overlaps, 0);
    assert.equal(processed.size, 17);
  });

  it('lets a caller claim a key as a worker would: out of its line, never one a worker holds, and queued again when added meanwhile', async () => {
    const queue = new WorkQueue<string>({ name: 'claim' });
    queue.add('default/a');
    queue.add('default/b', 'background');
    queue.add('default/c');
    assert.deepEqual(queue.claim('default/a'), { waited: true });
    assert.deepEqual(queue.claim('default/b'), { waited: true });
    assert.equal(queue.len(), 1, 'both claimed keys left their lines');
    assert.equal(queue.claim('default/a'), undefined, 'held by its claimer: not claimed twice');
    assert.equal(await queue.get(), 'default/c');
    assert.equal(queue.claim('default/c'), undefined, 'held by a worker');
    assert.deepEqual(queue.claim('default/d'), { waited: false }, 'a key not waiting can be claimed too');
    queue.add('default/a');
    const next = queue.get();
    assert.equal(await tryGet(next), 'pending', 'not handed to a worker while claimed');
    queue.done('default/a');
    queue.done('default/b');
    assert.equal(await next, 'default/a', 'added while claimed: queued again at done');
    assert.equal(queue.len(), 0);
    queue.shutDown();
    assert.equal(queue.claim('default/e'), undefined, 'nothing is claimed once shut down');
  });

  it('hands out delayed items in the order they become ready', async () => {
    const queue = new WorkQueue<string>({ name: 'delayed' });
    queue.addAfter('c', 90);
    queue.addAfter('a', 10);
    queue.addAfter('b', 50);
    assert.equal(queue.len(), 0, 'nothing is ready yet');
    assert.deepEqual(await takeInOrder(queue, 3), ['a', 'b', 'c']);
    queue.shutDown();
  });

  it('moves a waiting item earlier for a sooner addAfter, and ignores a later one', async () => {
    const queue = new WorkQueue<string>({ name: 'delayed-dedupe' });
    queue.addAfter('late', 60_000);
    queue.addAfter('late', 5);
    queue.addAfter('late', 120_000);
    assert.equal(await queue.get(), 'late');
    queue.done('late');
    assert.equal(await tryGet(queue.get()), 'pending', 'the item came out once');
    queue.shutDown();
  });

  it('lets a finished pass drop a wake set before it began, and keeps one set while it ran', async () => {
    const queue = new WorkQueue<string>({ name: 'stale-wake' });
    // A failed pass left a retry due in 40 ms; an event brought the item in sooner.
    queue.addAfter('photos', 40);
    queue.add('photos');
    assert.equal(await queue.get(), 'photos');
    queue.dropWakeSetBeforeProcessing('photos');
    assert.equal(queue.nextWakeAt('photos'), undefined, 'the retry the pass made good is gone');
    queue.addAfter('photos', 60_000);
    queue.done('photos');
    await sleep(80);
    assert.equal(queue.len(), 0, 'nothing at the retry\'s time');

    // A wake set while the pass ran stays.
    queue.add('videos');
    assert.equal(await queue.get(), 'videos');
    queue.addAfter('videos', 5);
    queue.dropWakeSetBeforeProcessing('videos');
    assert.ok(queue.nextWakeAt('videos') !== undefined);
    queue.done('videos');
    assert.equal(await queue.get(), 'videos');
    queue.shutDown();
  });

  it('hands out a background item only when no change waits, and moves it ahead for a change', async () => {
    const queue = new WorkQueue<string>({ name: 'lanes' });
    queue.add('drift-1', 'background');
    queue.add('drift-2', 'background');
    queue.add('drift-3', 'background');
    queue.add('edit-a');
    queue.add('drift-2');
    queue.add('edit-b', 'background');
    queue.add('edit-b');
    assert.equal(queue.len(), 5, 'each item waits once, in one line');
    assert.deepEqual(await takeInOrder(queue, 5), ['edit-a', 'drift-2', 'edit-b', 'drift-1', 'drift-3']);
    queue.shutDown();
  });

  it('re-queues an item changed while in flight as a change, even when it was taken as a background one', async () => {
    const queue = new WorkQueue<string>({ name: 'lanes-in-flight' });
    queue.add('a', 'background');
    assert.equal(await queue.get(), 'a');
    queue.add('a', 'background');
    queue.add('b', 'background');
    queue.add('a');
    queue.done('a');
    assert.equal(await queue.get(), 'a', 'the change made while it ran goes before the waiting drift check');
    queue.done('a');
    assert.equal(await queue.get(), 'b');
    queue.shutDown();
  });

  it('brings a delayed wake back in its line: a drift check behind changes, unless a change wake was set too', async () => {
    const queue = new WorkQueue<string>({ name: 'lanes-delayed' });
    queue.addAfter('drift', 5, 'background');
    queue.addAfter('poll', 5, 'background');
    queue.addAfter('poll', 60_000);
    await waitFor(() => queue.len() === 2);
    queue.add('edit');
    assert.deepEqual(await takeInOrder(queue, 3), ['poll', 'edit', 'drift']);
    queue.shutDown();
  });

  it('over random histories of adds in both lines: no item held twice, none lost, none taken from the background while a change waits', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      let state = seed;
      const random = (n: number): number => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);
      const queue = new WorkQueue<number>({ name: `lanes-random-${seed}` });
      const held = new Set<number>();
      /** Items added since last taken: true when some add was a change. */
      const pending = new Map<number, boolean>();
      for (let step = 0; step < 2_000; step++) {
        const action = random(3);
        if (action < 2) {
          const item = random(12);
          const lane = random(2) === 0 ? 'change' : 'background';
          queue.add(item, lane);
          pending.set(item, (pending.get(item) ?? false) || lane === 'change');
        } else if (queue.len() > 0) {
          const changeWaiting = [...pending].some(([item, change]) => change && !held.has(item));
          const item = (await queue.get())!;
          assert.ok(!held.has(item), `seed ${seed}: ${item} handed out while held`);
          assert.ok(pending.has(item), `seed ${seed}: ${item} handed out with no add`);
          assert.ok(pending.get(item) || !changeWaiting, `seed ${seed}: background ${item} taken while a change waited`);
          pending.delete(item);
          held.add(item);
        }
        if (held.size > 0 && random(2) === 0) {
          const item = [...held][random(held.size)]!;
          held.delete(item);
          queue.done(item);
        }
      }
      for (const item of held) queue.done(item);
      held.clear();
      while (queue.len() > 0) {
        const item = (await queue.get())!;
        pending.delete(item);
        queue.done(item);
      }
      assert.deepEqual([...pending.keys()], [], `seed ${seed}: every add was handed out`);
      queue.shutDown();
    }
  });

  it('treats addAfter with no delay as add', async () => {
    const queue = new WorkQueue<string>({ name: 'no-delay' });
    queue.addAfter('now', 0);
    assert.equal(queue.len(), 1);
    queue.shutDown();
  });

  it('backs off rate-limited adds per item and forgets on success', async () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1000, 0);
    const queue = new WorkQueue<string>({ name: 'rate-limited', rateLimiter: limiter });
    for (let attempt = 1; attempt <= 4; attempt++) {
      queue.addRateLimited('failing');
      const item = (await queue.get())!;
      assert.equal(queue.numRequeues(item), attempt);
      queue.done(item);
    }
    queue.forget('failing');
    assert.equal(queue.numRequeues('failing'), 0);
    queue.shutDown();
  });

  it('stops handing out items on shutdown and releases waiting workers', async () => {
    const queue = new WorkQueue<string>({ name: 'shutdown' });
    const waiting = queue.get();
    queue.addAfter('never', 60_000);
    queue.shutDown();
    assert.equal(await waiting, undefined);
    queue.add('ignored');
    assert.equal(queue.len(), 0);
    assert.equal(await queue.get(), undefined);
    assert.equal(queue.shuttingDown, true);
  });

  it('drains in-flight items on shutdown, and gives up at the deadline', async () => {
    const queue = new WorkQueue<string>({ name: 'drain' });
    queue.add('quick');
    queue.add('stuck');
    const quick = (await queue.get())!;
    const stuck = (await queue.get())!;
    queue.add('queued-but-not-started');

    const drained = queue.shutDownWithDrain(60_000);
    assert.equal(await queue.get(), undefined, 'no new work starts during the drain');
    queue.done(quick);
    queue.done(stuck);
    assert.equal(await drained, true);

    const second = new WorkQueue<string>({ name: 'drain-deadline' });
    second.add('hangs');
    await second.get();
    assert.equal(await second.shutDownWithDrain(20), false, 'the deadline passed with work still in flight');
  });

  it('reports a drain of an idle queue as complete at once', async () => {
    const queue = new WorkQueue<string>({ name: 'idle' });
    assert.equal(await queue.shutDownWithDrain(1), true);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}
