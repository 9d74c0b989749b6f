// API server faults: while the operator works through a run of creates, edits and deletes, the API
// server answers a seeded share of its requests with 409, 429 and 500, ends resuming watches with
// 410 Gone, cuts watches without a word, and every so often drops every watch and compacts its
// history (so each informer must relist). Everything converges with the faults still on, no edit is
// lost (the cloud ends as each resource's last spec says), nothing is created twice, no data is lost.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyProviderConfig, missingOperator, OPERATOR_USER, startReliabilityCluster, type ReliabilityCluster } from './support/cluster.ts';
import { cloudClients, type CloudClients } from './support/data.ts';
import { cloudWriteCounts, dataLost, duplicateCreates, forbiddenDeletes, waitConverged } from './support/invariants.ts';
import { Ledger } from './support/resources.ts';
import { sized } from './support/scale.ts';
import { suiteSeed, type Random } from './support/seed.ts';
import { supervise, type Supervisor } from './support/supervisor.ts';
import { createDataHolders, fates, fillDataHolders, runOperations } from './support/workload.ts';

const SIZE = sized({
  ci: { buckets: 5, tables: 3, operations: 16, rate: 0.25, watchResets: 3 },
  large: { buckets: 30, tables: 15, operations: 120, rate: 0.3, watchResets: 20 },
});

describe('API server faults: dropped watches, 410, 409, 429 and 500 at random', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
  let cluster: ReliabilityCluster;
  let clients: CloudClients;
  let ledger: Ledger;
  let operator: Supervisor;
  let random: Random;

  before(async () => {
    random = suiteSeed('API server faults');
    // only the operator's requests (its ServiceAccount) are faulted; the suite, as the admin, sees the truth
    cluster = await startReliabilityCluster({ sandbox: { faults: { rate: SIZE.rate, seed: random.seed, users: [OPERATOR_USER], enabled: false } } });
    clients = cloudClients(cluster.endpoints);
    ledger = new Ledger(cluster.admin);
    // the chart's env as it is: leader election on, so Lease renewals meet the faults too
    operator = await supervise(cluster);
    await cluster.waitReady(operator.current());
    await applyProviderConfig(cluster);
  });

  after(async () => {
    operator?.stop();
    await cluster?.stop();
  });

  it('Retain, forceDelete: false, deletionProtection and k8or.io/protect resources hold data written before the faults', async () => {
    await createDataHolders(ledger);
    await waitConverged(cluster, ledger, clients);
    await fillDataHolders(ledger, clients);
    assert.deepEqual(await dataLost(ledger, clients), []);
  });

  it('converges with the faults on, loses no change, creates nothing twice and loses no data', async () => {
    const { sandbox } = cluster;
    const resetAfter = new Set<number>();
    while (resetAfter.size < SIZE.watchResets) resetAfter.add(random.int(0, SIZE.operations - 1));
    let resets = 0;
    sandbox.faults.enable();
    await runOperations(ledger, random, {
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
    await waitConverged(cluster, ledger, clients);
    const injected = { ...sandbox.faults.injected };
    sandbox.faults.disable();
    // a changed spec the faults hid would show now, with the API server answering truthfully again
    await waitConverged(cluster, ledger, clients);

    console.log(`# seed ${random.seed}: ${ledger.entries.size} resources ${JSON.stringify(fates(ledger))}, ${SIZE.operations} operations at fault rate ${SIZE.rate}; faults injected ${JSON.stringify(injected)}, ${resets} watch resets (drop all + compact); operator restarts ${operator.restarts}; cloud writes ${JSON.stringify(cloudWriteCounts(cluster))}`);
    assert.ok(injected.conflict + injected.throttle + injected.internal > 0, `faults injected: ${JSON.stringify(injected)}`);
    assert.deepEqual(duplicateCreates(cluster, ledger), []);
    assert.deepEqual(forbiddenDeletes(cluster, ledger), []);
    assert.deepEqual(await dataLost(ledger, clients), []);
    const access = sandbox.accessOf('k8or-system', 'k8or');
    assert.deepEqual(access.denied, [], `calls the chart's RBAC does not grant:\n${access.denied.join('\n')}`);
  });
});
