// Operator killed: SIGKILL at random points of a run of creates, updates and deletes across the
// clouds (while a cloud write is in flight: the cloud acted, the operator never hears; or at a random
// moment; where Bigtable takes part, while some of its admin calls are in flight; and once, before
// the seeded run, while a delete of every store is in flight together), a restart each time, as a
// Pod's container is killed and restarted. Afterwards every resource has converged, no cloud resource
// leaked, none was created twice, no finalizer is stuck, the cloud calls per resource stayed bounded,
// and the data written before the faults into the resources that keep it is all there.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@k8or/core/testing';
import { applyProviderConfigs, missingOperator } from '../support/cluster.ts';
import type { CloudCall } from '../support/cloud-proxy.ts';
import { deleteKills } from '../support/delete-kills.ts';
import { assertCallsBounded, assertNothingDoneTwiceOrLost, itHoldsDataBeforeTheFaults, type FaultRun } from '../support/fault-run.ts';
import { cloudWriteCounts, waitConverged } from '../support/invariants.ts';
import { condition, type Entry, type Ledger } from '../support/resources.ts';
import { sized } from '../support/scale.ts';
import { suiteSeed, type Random } from '../support/seed.ts';
import type { Store } from '../support/stores/index.ts';
import { supervise, whileWebhookDown, type Supervisor } from '../support/supervisor.ts';
import { fates, runOperations } from '../support/workload.ts';

const SIZE = sized({
  // timed kills, kills in flight at any proxy, and kills kept for Bigtable's admin writes (in flight at its gRPC proxy)
  ci: { perCloud: { buckets: 2, tables: 1 }, operations: 16, timedKills: 2, inFlightKills: 2, bigtableKills: 2 },
  large: { perCloud: { buckets: 10, tables: 5 }, operations: 120, timedKills: 13, inFlightKills: 12, bigtableKills: 6 },
});

/**
 * How long the first held answer of the deletes made together waits for the others' (`deleteKills`):
 * the operator sends them within a second or two of each other, its workers reconciling them at once.
 */
const DELETES_TOGETHER_MS = 10_000;

export function operatorKilled(run: FaultRun): void {
  describe('operator killed: SIGKILL at random points, then a restart', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
    let ledger: Ledger;
    let operator: Supervisor;
    let random: Random;
    const killLog: string[] = [];
    /** One resource of each store, deleted together at the start of the run, the operator killed with every delete in flight. */
    let doomed: Array<{ entry: Entry; store: Store }>;

    before(async () => {
      random = suiteSeed('operator killed');
      ledger = await run.ledger('killed');
      // one replica without leader election, so a restart need not wait out the dead one's Lease
      operator = await supervise(run.cluster, { env: { K8OR_LEADER_ELECT: 'false' } });
      await run.cluster.waitReady(operator.current());
      await applyProviderConfigs(run.cluster);
      // made with the data holders (and converged with them in the first test)
      doomed = await Promise.all(
        run.cluster.stores.all().map(async (store) => ({ store, entry: await ledger.create({ cloud: store.cloud, kind: store.kind, name: `${store.cloud}-doomed-${store.kind.toLowerCase()}` }) })),
      );
    });

    after(async () => {
      operator?.stop();
      for (const proxy of Object.values(run.cluster.proxies)) proxy.onAnswered = undefined;
      await run.cluster.stopReplicas();
    });

    itHoldsDataBeforeTheFaults(run, () => ledger);

    it('converges with no leak, no duplicate, no stuck finalizer and no data lost after random kills', async () => {
      const { cluster } = run;
      const bigtable = cluster.proxies.bigtable ? cluster.stores.of('gcp', 'Table') : undefined;
      // the cloud writes of every store, as its proxy names them
      const cloudWrites = new Set(cluster.stores.all().flatMap((s) => [s.writes.create, s.writes.delete, ...s.writes.settings]));
      // kill points: some while a cloud write is in flight, some at a random moment after an operation
      const killAfterOperation = new Set<number>();
      while (killAfterOperation.size < SIZE.timedKills) killAfterOperation.add(random.int(0, SIZE.operations - 1));
      let inFlightKills = SIZE.inFlightKills;
      let writesUntilKill = random.int(1, 4);
      const inFlightKill = (call: CloudCall): void | Promise<void> => {
        if (inFlightKills === 0 || !cloudWrites.has(call.operation) || --writesUntilKill > 0) return;
        inFlightKills--;
        writesUntilKill = random.int(1, 6);
        killLog.push(`in flight: ${call.operation} ${call.resource} (${call.answer})`);
        return operator.kill();
      };
      for (const proxy of Object.values(cluster.proxies)) proxy.onAnswered = inFlightKill;
      // Bigtable has few writes in a short run (its one new table's CreateTable, the TTL edits'
      // ModifyColumnFamilies, a DeleteTable): its kills come from a budget of their own, on its first
      // admin writes, so every run kills the operator while one is in flight; at most a third of the
      // budget (rounded up) per RPC method, so one kind does not spend it all (its DeleteTable is
      // killed in flight by the deletes together below)
      const bigtableWrites = new Set(bigtable ? [bigtable.writes.create, bigtable.writes.delete, ...bigtable.writes.settings] : []);
      let bigtableKills = SIZE.bigtableKills;
      const bigtableKillsOf = new Map<string, number>();
      const bigtableKill = (call: CloudCall): void | Promise<void> => {
        const spent = bigtableKillsOf.get(call.operation) ?? 0;
        if (bigtableKills === 0 || !bigtableWrites.has(call.operation) || spent >= Math.ceil(SIZE.bigtableKills / 3)) return inFlightKill(call);
        bigtableKills--;
        bigtableKillsOf.set(call.operation, spent + 1);
        killLog.push(`in flight: Bigtable ${call.operation} ${call.resource} (${call.answer})`);
        return operator.kill();
      };
      if (cluster.proxies.bigtable) cluster.proxies.bigtable.onAnswered = bigtableKill;
      // every store's delete killed in flight, before the seeded run: the doomed resources' deletes,
      // each answer held at its proxy until all are in flight (the others' kill hooks see every other call)
      const storeOf = new Map(doomed.map(({ entry, store }) => [entry.externalName, store]));
      const deletes = deleteKills(
        doomed,
        async (held) => {
          killLog.push(`in flight together: ${held.map((c) => `${storeOf.get(c.resource ?? '')?.dialect} ${c.operation} ${c.resource} (${c.answer})`).join(', ')}`);
          await operator.kill();
        },
        DELETES_TOGETHER_MS,
      );
      for (const proxy of Object.values(cluster.proxies)) {
        const kill = proxy.onAnswered;
        proxy.onAnswered = (call) => deletes.hold(call) ?? kill?.(call);
      }
      await waitFor('the doomed resources Ready', async () => {
        const objects = await ledger.readAll();
        return doomed.every(({ entry }) => condition(objects.get(ledger.key(entry.kind, entry.name)), 'Ready')?.status === 'True');
      }, 120_000);
      for (const { entry } of doomed) await whileWebhookDown(() => ledger.delete(entry));
      // the seeded run starts after that kill, so none of its own comes between the deletes
      await waitFor(
        "every store's delete killed in flight",
        () => {
          const missing = deletes.missing();
          if (missing.length > 0) throw new Error(`never in flight at a kill yet: ${missing.join(', ')}; kills: ${killLog.join('; ')}`);
          return true;
        },
        120_000,
      );

      await runOperations(ledger, cluster.stores, random, {
        ...SIZE,
        diagnostics: () => cluster.operatorOutput(),
        after: async (i) => {
          if (!killAfterOperation.has(i)) return;
          // a random moment within the reconciles this operation started
          const delayMs = random.int(0, 1500);
          await new Promise((resolve) => setTimeout(resolve, delayMs));
          killLog.push(`after operation ${i} + ${delayMs} ms`);
          await operator.kill();
        },
      });

      await waitConverged(cluster, ledger, run.ledgers);
      for (const proxy of Object.values(cluster.proxies)) proxy.onAnswered = undefined;

      console.log(`# seed ${random.seed}: ${ledger.entries.size} resources ${JSON.stringify(fates(ledger))}, ${SIZE.operations} operations, ${killLog.length} kills, ${operator.restarts} restarts; cloud writes ${JSON.stringify(cloudWriteCounts(cluster, ledger))}`);
      for (const kill of killLog) console.log(`#   kill ${kill}`);
      // the in-flight kills wait for cloud writes; a short run may have had fewer than asked
      assert.ok(killLog.length >= SIZE.timedKills, `kills done: ${killLog.join('; ')}`);
      if (bigtable) {
        // its DeleteTable, killed with the other stores' deletes, or a write the budget caught in the seeded run
        // (a run whose operations make no Bigtable admin write has only the first)
        const bigtableKilled = (kill: string): boolean => kill.startsWith('in flight: Bigtable') || (kill.startsWith('in flight together:') && kill.includes(`${bigtable.dialect} ${bigtable.writes.delete} `));
        assert.ok(killLog.some(bigtableKilled), `no kill while a Bigtable admin write was in flight: ${killLog.join('; ')}`);
      }
      // every start of the operator may reconcile every resource once more
      assertCallsBounded(run, ledger, operator.restarts + 1);
      await assertNothingDoneTwiceOrLost(run, ledger);
    });
  });
}
