// API server faults: while the operator works through a run of creates, edits and deletes across the
// clouds, the API server answers a seeded share of its requests with 409, 429 and 500, ends resuming
// watches with 410 Gone, cuts watches without a word, stores writes and then answers them 500 or cuts
// them (an etcd timeout: the operator cannot tell its write happened), and every so often drops every
// watch and compacts its history (so each informer must relist). Everything converges with the faults
// still on, no edit is lost (the cloud ends as each resource's last spec says), nothing is created
// twice, no data is lost.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { API_FAULT_KINDS, type ApiFaultKind } from '@k8or/apiserver';
import { applyProviderConfigs, missingOperator } from '../support/cluster.ts';
import { assertCallsBounded, assertNothingDoneTwiceOrLost, itHoldsDataBeforeTheFaults, type FaultRun } from '../support/fault-run.ts';
import { cloudWriteCounts, waitConverged } from '../support/invariants.ts';
import type { Ledger } from '../support/resources.ts';
import { sized } from '../support/scale.ts';
import { suiteSeed, type Random } from '../support/seed.ts';
import { supervise, type Supervisor } from '../support/supervisor.ts';
import { fates, runOperations } from '../support/workload.ts';

const SIZE = sized({
  ci: { perCloud: { buckets: 2, tables: 1 }, operations: 16, rate: 0.25, watchResets: 3 },
  large: { perCloud: { buckets: 10, tables: 5 }, operations: 120, rate: 0.3, watchResets: 20 },
});

/** Requests refused without being served, and writes stored then answered 500 or cut: each run meets both. */
const REFUSED_REQUEST_FAULTS: readonly ApiFaultKind[] = ['conflict', 'throttle', 'internal'];
const AFTER_WRITE_FAULTS: readonly ApiFaultKind[] = ['internalAfterWrite', 'cutAfterWrite'];

export function apiServerFaults(run: FaultRun): void {
  describe('API server faults: dropped watches, 410, 409, 429, 500, and writes stored then answered 500 or cut', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
    let ledger: Ledger;
    let operator: Supervisor;
    let random: Random;

    before(async () => {
      random = suiteSeed('API server faults');
      ledger = await run.ledger('apifaults');
      // the chart's env as it is: leader election on, so Lease renewals meet the faults too
      operator = await supervise(run.cluster);
      await run.cluster.waitReady(operator.current());
      await applyProviderConfigs(run.cluster);
    });

    after(async () => {
      // only the operator's requests (its ServiceAccount's) were faulted; off again before it stops and releases its Lease
      run.cluster.sandbox.faults.disable();
      operator?.stop();
      await run.cluster.stopReplicas();
    });

    itHoldsDataBeforeTheFaults(run, () => ledger);

    it('converges with the faults on, loses no change, creates nothing twice and loses no data', async () => {
      const { cluster } = run;
      const { sandbox } = cluster;
      const resetAfter = new Set<number>();
      while (resetAfter.size < SIZE.watchResets) resetAfter.add(random.int(0, SIZE.operations - 1));
      let resets = 0;
      const before = { ...sandbox.faults.injected };
      sandbox.faults.configure({ rate: SIZE.rate, seed: random.seed, enabled: true });
      await runOperations(ledger, cluster.stores, random, {
        ...SIZE,
        diagnostics: () => cluster.operatorOutput(),
        after: async (i) => {
          if (!resetAfter.has(i)) return;
          // every watch dropped and the history compacted: each resume gets 410 and must relist
          sandbox.compactHistory();
          sandbox.dropWatches();
          resets++;
        },
      });
      // The run's operations are only sent: the operator's reconciles of them meet every kind of fault here.
      await waitConverged(cluster, ledger, run.ledgers);
      // A short run can draw none of a group of faults by chance (its seed decides): a few more edits and
      // deletes, with only that group on, until the operator has met one of it.
      const injectedOf = (kinds: readonly ApiFaultKind[]): number => kinds.reduce((sum, kind) => sum + sandbox.faults.injected[kind] - before[kind], 0);
      for (const group of [REFUSED_REQUEST_FAULTS, AFTER_WRITE_FAULTS]) {
        for (let extra = 0; injectedOf(group) === 0 && extra < 10; extra++) {
          sandbox.faults.configure({ kinds: [...group] });
          await runOperations(ledger, cluster.stores, random, { ...SIZE, perCloud: { buckets: 0, tables: 0 }, operations: 4, diagnostics: () => cluster.operatorOutput() });
          await waitConverged(cluster, ledger, run.ledgers);
        }
      }
      sandbox.faults.configure({ kinds: [...API_FAULT_KINDS] });
      await waitConverged(cluster, ledger, run.ledgers);
      const injected = Object.fromEntries(Object.entries(sandbox.faults.injected).map(([kind, n]) => [kind, n - (before[kind as keyof typeof before] ?? 0)]));
      sandbox.faults.disable();
      // a changed spec the faults hid would show now, with the API server answering truthfully again
      await waitConverged(cluster, ledger, run.ledgers);

      console.log(
        `# seed ${random.seed}: ${ledger.entries.size} resources ${JSON.stringify(fates(ledger))}, ${SIZE.operations} operations at fault rate ${SIZE.rate}; ` +
          `faults injected ${JSON.stringify(injected)}, ${resets} watch resets (drop all + compact); operator restarts ${operator.restarts}; cloud writes ${JSON.stringify(cloudWriteCounts(cluster, ledger))}`,
      );
      assert.ok((injected['conflict'] ?? 0) + (injected['throttle'] ?? 0) + (injected['internal'] ?? 0) > 0, `faults injected: ${JSON.stringify(injected)}`);
      assert.ok((injected['internalAfterWrite'] ?? 0) + (injected['cutAfterWrite'] ?? 0) > 0, `writes stored, then answered 500 or cut: ${JSON.stringify(injected)}`);
      await assertNothingDoneTwiceOrLost(run, ledger);
      // each fault may cost a resource one more reconcile, each watch reset (relist) one of every resource
      assertCallsBounded(run, ledger, Object.values(injected).reduce((a, b) => a + b, 0) + resets + operator.restarts + 1);
      const access = sandbox.accessOf('k8or-system', 'k8or');
      assert.deepEqual(access.denied, [], `calls the chart's RBAC does not grant:\n${access.denied.join('\n')}`);
    });
  });
}
