// Operator killed: SIGKILL at random points of a run of creates, updates and deletes (while a cloud
// call is in flight, or at a random moment), a restart each time, as a Pod's container is killed and
// restarted. Afterwards every resource has converged, no cloud resource leaked, none was created
// twice, no finalizer is stuck, and the data in the resources that keep it is all there.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyProviderConfig, missingOperator, startReliabilityCluster, type ReliabilityCluster } from './support/cluster.ts';
import { cloudClients, writeData, type CloudClients } from './support/data.ts';
import { cloudWriteCounts, dataLost, duplicateCreates, waitConverged } from './support/invariants.ts';
import { Ledger, type Entry, type Kind } from './support/resources.ts';
import { sized } from './support/scale.ts';
import { suiteSeed, type Random } from './support/seed.ts';
import { supervise, whileWebhookDown, type Supervisor } from './support/supervisor.ts';
import type { CloudCall } from './support/cloud-proxy.ts';

const SIZE = sized({
  ci: { buckets: 5, tables: 3, operations: 16, kills: 4 },
  large: { buckets: 30, tables: 15, operations: 120, kills: 25 },
});

const CLOUD_WRITES = new Set(['CreateBucket', 'DeleteBucket', 'PUT ?versioning', 'PUT ?tagging', 'CreateTable', 'DeleteTable', 'UpdateTable', 'TagResource', 'UpdateTimeToLive']);

describe('operator killed: SIGKILL at random points, then a restart', { skip: missingOperator() ?? false, timeout: 600_000 }, () => {
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

  it('keeps the data of Retain, forceDelete: false, deletionProtection and k8or.io/protect resources, written before the faults', async () => {
    const holders: Array<Parameters<Ledger['create']>[0]> = [
      { kind: 'Bucket', name: 'keep-retained', deletionPolicy: 'Retain' },
      { kind: 'Bucket', name: 'keep-not-forced' },
      { kind: 'Bucket', name: 'keep-protected', protect: true },
      { kind: 'Table', name: 'keep-retained', deletionPolicy: 'Retain' },
      { kind: 'Table', name: 'keep-deletion-protected', deletionProtection: true },
      { kind: 'Table', name: 'keep-protected', protect: true },
    ];
    for (const holder of holders) await ledger.create(holder);
    await waitConverged(cluster, ledger, clients);
    for (const entry of ledger.list()) await writeData(clients, entry);
    assert.deepEqual(await dataLost(ledger, clients), []);
  });

  it('converges with no leak, no duplicate, no stuck finalizer and no data lost after random kills', async () => {
    let created = 0;
    const toCreate: Kind[] = [...Array<Kind>(SIZE.buckets).fill('Bucket'), ...Array<Kind>(SIZE.tables).fill('Table')];
    // kill points: half while a cloud write is in flight (the cloud acted, the operator never hears), half at a random moment
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

    for (let i = 0; i < SIZE.operations; i++) {
      const live = ledger.list((e) => e.fate === 'live' || e.fate === 'protected');
      const choice = created < toCreate.length && (live.length < 3 || random.chance(0.5)) ? 'create' : random.chance(0.5) ? 'update' : 'delete';
      if (choice === 'create' || live.length === 0) {
        const kind = toCreate[created]!;
        const name = `r${created++}`;
        const deletionPolicy = random.chance(0.3) ? 'Retain' : 'Delete';
        await whileWebhookDown(() => ledger.create({ kind, name, deletionPolicy, ...(kind === 'Bucket' ? { versioning: random.chance(0.5) } : {}) }));
      } else {
        const target: Entry = random.pick(live);
        if (choice === 'update') await whileWebhookDown(() => ledger.update(target, i));
        else await whileWebhookDown(() => ledger.delete(target));
      }
      if (killAfterOperation.has(i)) {
        // a random moment: somewhere in the reconciles this operation started
        const delayMs = random.int(0, 1500);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        killLog.push(`after operation ${i} + ${delayMs} ms`);
        await operator.kill();
      }
    }
    // the data holders go too: each must keep its data (or be refused, or be blocked)
    for (const entry of ledger.list((e) => e.holdsData)) await whileWebhookDown(() => ledger.delete(entry));

    await waitConverged(cluster, ledger, clients);
    cluster.s3Proxy.onAnswered = undefined;
    cluster.dynamodbProxy.onAnswered = undefined;

    const fates = ledger.list().reduce<Record<string, number>>((counts, e) => ({ ...counts, [e.fate]: (counts[e.fate] ?? 0) + 1 }), {});
    console.log(`# seed ${random.seed}: ${ledger.entries.size} resources (${JSON.stringify(fates)}), ${SIZE.operations} operations, ${killLog.length} kills, ${operator.restarts} restarts; cloud writes ${JSON.stringify(cloudWriteCounts(cluster))}`);
    for (const kill of killLog) console.log(`#   kill ${kill}`);
    assert.equal(killLog.length, SIZE.kills, `kills done: ${killLog.join('; ')}`);
    assert.deepEqual(duplicateCreates(cluster, ledger), []);
    assert.deepEqual(await dataLost(ledger, clients), []);
  });
});
