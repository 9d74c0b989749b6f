// Kills the operator while a delete of every store is in flight (the cloud deleted, the operator never
// heard), in every run. The seeded run deletes what it picks, and the in-flight kills come at a seeded
// count of writes, so a store's delete may never meet a kill (Bigtable's DeleteTable never had). So a
// phase deletes one resource of each store together, early in its run, and this holds each successful
// delete's answer at its proxy until every one is held, or until the window has passed since the
// first, and then kills once. A store whose delete came too late for the window gets a kill of its own
// on its delete after the restart.
import type { CloudCall } from './cloud-proxy.ts';
import type { Entry } from './resources.ts';
import type { Store } from './stores/index.ts';

export interface DeleteKills {
  /**
   * For the proxies' hook: the promise holding `call`'s answer until the kill, when it is a successful
   * delete of one of the resources; undefined for any other call.
   */
  hold(call: CloudCall): Promise<void> | undefined;
  /** The stores (`aws Bucket`) whose delete was not in flight at a kill yet. */
  missing(): string[];
}

/**
 * `targets`: one resource per store, each to be deleted; `kill` kills the operator, given the held
 * deletes (for the kill log); `windowMs`: how long the first held delete waits for the others.
 */
export function deleteKills(targets: ReadonlyArray<{ entry: Entry; store: Store }>, kill: (held: readonly CloudCall[]) => Promise<void>, windowMs: number): DeleteKills {
  const pending = new Map(targets.map((t) => [t.entry.externalName, t]));
  let held: Array<{ call: CloudCall; release: () => void }> = [];
  let timer: NodeJS.Timeout | undefined;
  const fire = async (): Promise<void> => {
    clearTimeout(timer);
    const batch = held;
    held = [];
    for (const { call } of batch) pending.delete(call.resource ?? '');
    try {
      await kill(batch.map((h) => h.call));
    } finally {
      for (const { release } of batch) release();
    }
  };
  return {
    hold: (call) => {
      const target = call.resource === undefined ? undefined : pending.get(call.resource);
      if (!target || !call.ok || call.operation !== target.store.writes.delete || held.some((h) => h.call.resource === call.resource)) return undefined;
      return new Promise<void>((release) => {
        held.push({ call, release });
        if (held.length === pending.size) void fire();
        else if (held.length === 1) timer = setTimeout(() => void fire(), windowMs);
      });
    },
    missing: () => [...pending.values()].map(({ store }) => `${store.cloud} ${store.kind}`),
  };
}
