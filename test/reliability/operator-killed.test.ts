// Operator killed: SIGKILL at random points of a run of creates, updates and deletes (while a cloud
// write is in flight: the cloud acted, the operator never hears; or at a random moment), a restart
// each time, as a Pod's container is killed and restarted. Afterwards every resource has converged,
// no cloud resource leaked, none was created twice, no finalizer is stuck, and the data written
// before the faults into the resources that keep it is all there.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyProviderConfig, missingOperator, startReliabilityCluster, type ReliabilityCluster } from './support/cluster.ts';
import { cloudClients, type CloudClients } from './support/data.ts';
import { cloudWriteCounts, dataLost, duplicateCreates, forbiddenDeletes, waitConverged } from './support/invariants.ts';
import { Ledger } from './support/resources.ts';
import { sized } from './support/scale.ts';
import { suiteSeed, type Random } from './support/seed.ts';
import { supervise, type Supervisor } from './support/supervisor.ts';
import { createDataHolders, fates, fillDataHolders, runOperations } from './support/workload.ts';
import type { CloudCall } from './support/cloud-proxy.ts';

const SIZE = sized({
  ci: { buckets: 5, tables: 3, operations: 16, kills: 4 },
  large: { buckets: 30, tables: 15, operations: 120, kills: 25 },
});

const CLOUD_WRITES = new Set(['CreateBucket', 'DeleteBucket', 'PUT ?versioning', 'PUT ?tagging', 'CreateTable', 'DeleteTable', 'UpdateTable', 'UpdateTimeToLive']);

describe('operator killed: SIGKILL at random points, then a restart', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
  let cluster: ReliabilityCluster;
  let clients: CloudClients;
  let ledger: Ledger;
  let operator: Supervisor;
  let random: Random;
  const killLog: string[] = [];

  before(async () => {
    random = suiteSeed('operator killed');
    cluster = await startReliabilityCluster();
    clients = cloudClients(cluster.endpoints);
    ledger = new Ledger(cluster.admin);
    // one replica without leader election, so a restart need not wait out the dead one's Lease
    operator = await supervise(cluster, { env: { K8OR_LEADER_ELECT: 'false' } });
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

  it('converges with no leak, no duplicate, no stuck finalizer and no data lost after random kills', async () => {
    // kill points: half while a cloud write is in flight, half at a random moment after an operation
    const killAfterOperation = new Set<number>();
    while (killAfterOperation.size < Math.ceil(SIZE.kills / 2)) killAfterOperation.add(random.int(0, SIZE.operations - 1));
    let inFlightKills = SIZE.kills - killAfterOperation.size;
    let writesUntilKill = random.int(1, 4);
    const inFlightKill = (call: CloudCall): void | Promise<void> => {
      if (inFlightKills === 0 || !CLOUD_WRITES.has(call.operation) || --writesUntilKill > 0) return;
      inFlightKills--;
      writesUntilKill = random.int(1, 6);
      killLog.push(`in flight: ${call.operation} ${call.resource} (${call.status})`);
      return operator.kill();
    };
    cluster.s3Proxy.onAnswered = inFlightKill;
    cluster.dynamodbProxy.onAnswered = inFlightKill;

    await runOperations(ledger, random, {
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

    await waitConverged(cluster, ledger, clients);
    cluster.s3Proxy.onAnswered = undefined;
    cluster.dynamodbProxy.onAnswered = undefined;

    console.log(`# seed ${random.seed}: ${ledger.entries.size} resources ${JSON.stringify(fates(ledger))}, ${SIZE.operations} operations, ${killLog.length} kills, ${operator.restarts} restarts; cloud writes ${JSON.stringify(cloudWriteCounts(cluster))}`);
    for (const kill of killLog) console.log(`#   kill ${kill}`);
    // the in-flight kills wait for cloud writes; a short run may have had fewer than asked
    assert.ok(killLog.length >= Math.ceil(SIZE.kills / 2), `kills done: ${killLog.join('; ')}`);
    assert.deepEqual(duplicateCreates(cluster, ledger), []);
    assert.deepEqual(forbiddenDeletes(cluster, ledger), []);
    assert.deepEqual(await dataLost(ledger, clients), []);
  });
});
