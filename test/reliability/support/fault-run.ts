// One cluster for the fault phases of a file: started once before the first phase, stopped after the
// last. Each phase runs its own operator replicas in a namespace of its own with a ledger of its own,
// so its failure report is its own; the leak check counts what every phase's ledger accounts for.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { bigtableLeftOut, OPERATOR_USER, startReliabilityCluster, type ReliabilityCluster } from './cluster.ts';
import { callBound, dataLost, duplicateCreates, forbiddenDeletes, waitConverged } from './invariants.ts';
import { Ledger } from './resources.ts';
import { createDataHolders, fillDataHolders } from './workload.ts';

export interface FaultRun {
  /** The shared cluster (throws before it started). */
  readonly cluster: ReliabilityCluster;
  /** A ledger in a new namespace, for one phase. */
  ledger(namespace: string): Promise<Ledger>;
  /** Every phase's ledger so far. */
  readonly ledgers: readonly Ledger[];
}

/**
 * Starts the shared cluster before the file's first test and stops it after its last. The API server
 * runs with its fault injector armed for the operator's user and off (rate 0) until a phase turns it on.
 */
export function faultRun(): FaultRun {
  let cluster: ReliabilityCluster | undefined;
  const ledgers: Ledger[] = [];
  before(async () => {
    const started = Date.now();
    cluster = await startReliabilityCluster({ sandbox: { faults: { rate: 0, users: [OPERATOR_USER], enabled: false } } });
    const kinds = cluster.stores.all().map((store) => `${store.cloud} ${store.kind} (${store.dialect})`);
    console.log(`# the shared cluster (API server, chart, every backend) started in ${Date.now() - started} ms; the runs drive ${kinds.join(', ')}`);
    if (!cluster.proxies.bigtable) console.log(`# GCP Tables (Bigtable) left out of the runs: ${bigtableLeftOut()}`);
  });
  after(async () => {
    await cluster?.stop();
  });
  return {
    get cluster() {
      if (!cluster) throw new Error('the reliability cluster did not start');
      return cluster;
    },
    ledgers,
    ledger: async (namespace) => {
      if (!cluster) throw new Error('the reliability cluster did not start');
      await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      const ledger = new Ledger(cluster.admin, namespace);
      ledgers.push(ledger);
      startedAt.set(ledger, Date.now());
      return ledger;
    },
  };
}

/** When each phase's ledger was made: the start of the phase. */
const startedAt = new WeakMap<Ledger, number>();

/** Each phase's first test: the data holders of every cloud made, filled with the SDKs and read back, before the faults. */
export function itHoldsDataBeforeTheFaults(run: FaultRun, ledger: () => Ledger): void {
  it('Retain, forceDelete: false, deletionProtection and k8or.io/protect resources of every cloud hold data written before the faults', async () => {
    await createDataHolders(ledger(), run.cluster.stores);
    await waitConverged(run.cluster, ledger(), run.ledgers);
    await fillDataHolders(ledger(), run.cluster.stores);
    assert.deepEqual(await dataLost(run.cluster, ledger()), []);
  });
}

/** The checks every phase ends with, once converged: nothing created twice, nothing deleted that must stay, no data lost. */
export async function assertNothingDoneTwiceOrLost(run: FaultRun, ledger: Ledger): Promise<void> {
  assert.deepEqual(duplicateCreates(run.cluster, ledger), []);
  assert.deepEqual(forbiddenDeletes(run.cluster, ledger), []);
  assert.deepEqual(await dataLost(run.cluster, ledger), []);
}

/**
 * The closing check of cloud calls per resource (`callBound`): every call at a proxy naming one of the
 * phase's resources, against what its history, the phase's time and `extraReconciles` allow.
 */
export function assertCallsBounded(run: FaultRun, ledger: Ledger, extraReconciles: number): void {
  const started = startedAt.get(ledger);
  if (started === undefined) throw new Error(`no phase of ledger ${ledger.namespace}`);
  const bound = callBound(run.cluster, ledger, { extraReconciles, phaseMs: Date.now() - started });
  console.log(`# cloud calls per resource, the nearest its bound per cloud and kind (${extraReconciles} extra reconciles): ${bound.report.join(', ')}`);
  assert.deepEqual(bound.over, []);
}
