// Leader killed: two replicas of the chart's Deployment with leader election; the leader is killed
// with SIGKILL mid-run. The standby takes over within the lease duration (plus one retry period, the
// interval at which a standby looks at the Lease), finishes the run, and nothing is done twice: each
// cloud resource was created exactly once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '@k8or/core/testing';
import { applyProviderConfig, missingOperator, NAMESPACE, startReliabilityCluster, type ReliabilityCluster, type Replica } from './support/cluster.ts';
import { cloudClients, type CloudClients } from './support/data.ts';
import { cloudWriteCounts, dataLost, duplicateCreates, forbiddenDeletes, waitConverged } from './support/invariants.ts';
import { Ledger } from './support/resources.ts';
import { sized } from './support/scale.ts';
import { suiteSeed, type Random } from './support/seed.ts';
import { createDataHolders, fates, fillDataHolders, runOperations } from './support/workload.ts';

const SIZE = sized({
  ci: { buckets: 5, tables: 3, operations: 14 },
  large: { buckets: 30, tables: 15, operations: 100 },
});

/** The standby's retry period (core's LeaderElector default): how often it looks at the Lease. */
const RETRY_PERIOD_MS = 2_000;

interface Lease {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; leaseTransitions?: number };
}

describe('leader killed: two replicas, the leader SIGKILLed mid-run', { skip: missingOperator() ?? false, timeout: 900_000 }, () => {
  let cluster: ReliabilityCluster;
  let clients: CloudClients;
  let ledger: Ledger;
  let random: Random;
  const replicas: Replica[] = [];

  const lease = async (): Promise<Lease | undefined> => await cluster.admin.get<Lease>(`/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/k8or-operator`);
  /** The replica whose log says it acquired leadership under this identity. */
  const replicaOf = (identity: string): Replica | undefined =>
    replicas.find((r) => r.logs().some((line) => line['msg'] === 'acquired leadership' && line['identity'] === identity));

  before(async () => {
    random = suiteSeed('leader killed');
    cluster = await startReliabilityCluster();
    clients = cloudClients(cluster.endpoints);
    ledger = new Ledger(cluster.admin);
    // the chart's env as it is (leaderElection.enabled: true), two replicas as replicaCount: 2. The
    // first becomes the leader; the second starts once it leads, so it stands by. Each replica makes
    // its own self-signed CA and writes it into the webhook configurations (see docs/reliability.md,
    // "two replicas, two CAs"), so the webhook Service is routed to the one whose CA is there: the
    // standby, which wrote last.
    const first = await cluster.startReplica();
    replicas.push(first);
    await cluster.waitReady(first);
    await waitFor('the first replica leading', async () => replicaOf((await lease())?.spec?.holderIdentity ?? '') === first, 60_000);
    const second = await cluster.startReplica();
    replicas.push(second);
    await cluster.waitReady(second);
    await waitFor('the standby has written its CA', () => second.logs().some((line) => line['msg'] === 'caBundle set on ValidatingWebhookConfiguration'), 60_000);
    cluster.routeWebhookTo(second);
    await applyProviderConfig(cluster);
  });

  after(() => cluster?.stop());

  it('Retain, forceDelete: false, deletionProtection and k8or.io/protect resources hold data written before the kill', async () => {
    await createDataHolders(ledger);
    await waitConverged(cluster, ledger, clients);
    await fillDataHolders(ledger, clients);
    assert.deepEqual(await dataLost(ledger, clients), []);
  });

  it('the standby takes over within the lease duration, finishes the run, and creates each resource exactly once', async () => {
    const leaderIdentity = await waitFor('a leader', async () => (await lease())?.spec?.holderIdentity, 60_000);
    const leader = await waitFor('the leader among the replicas', () => replicaOf(leaderIdentity), 30_000);
    const standby = replicas.find((r) => r !== leader)!;
    const killAt = random.int(2, SIZE.operations - 3);
    let killedAt = 0;
    let leaseAtKill: Lease | undefined;

    await runOperations(ledger, random, {
      ...SIZE,
      after: async (i) => {
        if (i !== killAt) return;
        leaseAtKill = await lease();
        await leader.kill();
        killedAt = Date.now();
      },
    });
    const newIdentity = await waitFor(
      'the standby holding the Lease',
      async () => {
        const holder = (await lease())?.spec?.holderIdentity;
        return holder && holder !== leaderIdentity ? holder : undefined;
      },
      120_000,
      50,
    );
    const takeoverMs = Date.now() - killedAt;
    assert.equal(await waitFor('the new leader named in a log', () => replicaOf(newIdentity), 30_000), standby, 'the new leader is the standby');

    await waitConverged(cluster, ledger, clients);
    const leaseDurationMs = (leaseAtKill?.spec?.leaseDurationSeconds ?? 15) * 1000;
    console.log(
      `# seed ${random.seed}: leader ${leader.name} killed after operation ${killAt} of ${SIZE.operations}; ${standby.name} took over ${takeoverMs} ms after the kill (lease duration ${leaseDurationMs} ms, retry period ${RETRY_PERIOD_MS} ms); ` +
        `${ledger.entries.size} resources ${JSON.stringify(fates(ledger))}; cloud writes ${JSON.stringify(cloudWriteCounts(cluster))}`,
    );
    // a standby may take the Lease once it has seen no renewal for the lease duration, and it looks every retry period
    assert.ok(takeoverMs <= leaseDurationMs + RETRY_PERIOD_MS, `took over ${takeoverMs} ms after the kill, lease duration ${leaseDurationMs} ms`);
    assert.deepEqual(duplicateCreates(cluster, ledger), []);
    assert.deepEqual(forbiddenDeletes(cluster, ledger), []);
    assert.deepEqual(await dataLost(ledger, clients), []);
  });
});
