// The watch history a watch resumes from: one window per resource type, sized as kube-apiserver's
// watch cache sizes its own (at least 75 s of events, from 100 up to 102,400), on a clock the test moves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WatchHistory, EVENT_FRESH_MS, LOWER_BOUND_CAPACITY, UPPER_BOUND_CAPACITY } from '../dist/storage/watch/history.js';
import type { StoreEvent } from '../dist/storage/store.js';

const WIDGETS = 'example.com/widgets';
const LEASES = 'coordination.k8s.io/leases';

function clocked(): { history: WatchHistory; append: (resourceKey: string) => number; advance: (ms: number) => void } {
  let now = 0;
  let rv = 1;
  const history = new WatchHistory(rv, { now: () => now });
  return {
    history,
    append: (resourceKey) => {
      rv += 1;
      const event: StoreEvent = { type: 'MODIFIED', resourceKey, namespace: 'default', name: `o-${rv}`, rv, object: { metadata: { name: `o-${rv}` } } };
      history.append(event);
      return rv;
    },
    advance: (ms) => void (now += ms),
  };
}

describe('watch history', () => {
  it('keeps every event of the last 75 s, however many, as the real server\'s cache grows to', () => {
    const { history, append, advance } = clocked();
    const first = append(WIDGETS);
    for (let i = 0; i < 5_000; i++) {
      append(WIDGETS);
      advance(10);
    }
    assert.equal(history.since(WIDGETS, first)?.length, 5_000, 'a watch resumed 50 s and 5,000 events later replays them all');
  });

  it('keeps each resource type\'s window apart: writes of others do not expire it', () => {
    const { history, append } = clocked();
    const from = append(WIDGETS);
    append(WIDGETS);
    for (let i = 0; i < 2_000; i++) append(LEASES);
    assert.equal(history.since(WIDGETS, from)?.length, 1);
    assert.equal(history.since('example.com/gadgets', from)?.length, 0, 'a type without events resumes from any version since the start');
  });

  it('drops events past 102,400 even when fresh', () => {
    const { history, append } = clocked();
    const first = append(WIDGETS);
    for (let i = 0; i < UPPER_BOUND_CAPACITY; i++) append(WIDGETS);
    assert.equal(history.since(WIDGETS, first - 1), undefined, '410 Gone: the first event is gone');
    assert.equal(history.since(WIDGETS, first)?.length, UPPER_BOUND_CAPACITY);
  });

  it('shrinks back once even its newest quarter is older than 75 s, keeping at least 100', () => {
    const { history, append, advance } = clocked();
    for (let i = 0; i < 400; i++) append(WIDGETS);
    advance(EVENT_FRESH_MS + 1);
    // Full at 400 and stale: halved to 200 by the next event, to 100 by the one after.
    append(WIDGETS);
    const last = append(WIDGETS);
    assert.equal(history.since(WIDGETS, last - LOWER_BOUND_CAPACITY)?.length, LOWER_BOUND_CAPACITY);
    assert.equal(history.since(WIDGETS, last - LOWER_BOUND_CAPACITY - 1), undefined, '410 Gone past the 100 kept');
  });

  it('a slow trickle keeps its 100 newest events, however old', () => {
    const { history, append, advance } = clocked();
    const first = append(WIDGETS);
    for (let i = 0; i < LOWER_BOUND_CAPACITY - 1; i++) {
      advance(3_600_000);
      append(WIDGETS);
    }
    assert.equal(history.since(WIDGETS, first - 1)?.length, LOWER_BOUND_CAPACITY);
    append(WIDGETS);
    assert.equal(history.since(WIDGETS, first - 1), undefined, 'the oldest dropped at 101');
  });

  it('a fixed capacity (tests of expiry) never grows', () => {
    let rv = 1;
    const history = new WatchHistory(rv, { capacity: 50 });
    for (let i = 0; i < 60; i++) history.append({ type: 'ADDED', resourceKey: WIDGETS, namespace: 'default', name: `w-${i}`, rv: ++rv, object: {} });
    assert.equal(history.since(WIDGETS, 1), undefined);
    assert.equal(history.since(WIDGETS, rv - 50)?.length, 50);
  });
});
