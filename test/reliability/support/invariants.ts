// What "converged, nothing leaked, nothing done twice, nothing lost" means, checked against the API
// server (the admin's view) and the clouds (the backends themselves, not the operator's proxies).
import { waitFor } from '@k8or/core/testing';
import { condition, type Entry, type Ledger, type ManagedObject } from './resources.ts';
import type { ReliabilityCluster } from './cluster.ts';
import type { CloudProxy, ProxiedApi } from './cloud-proxy.ts';

const idOf = (entry: Entry): string => `${entry.cloud} ${entry.kind}/${entry.name} (${entry.externalName}, ${entry.fate}, ${entry.deletionPolicy})`;

/** Why one resource has not reached its fate in the API server yet (empty: it has there). */
function apiProblems(entry: Entry, object: ManagedObject | undefined): string[] {
  const id = idOf(entry);
  switch (entry.fate) {
    case 'live':
    case 'protected': {
      if (!object) return [`${id}: gone from the API server`];
      const problems: string[] = [];
      if (object.metadata.deletionTimestamp) problems.push(`${id}: terminating`);
      const ready = condition(object, 'Ready');
      const synced = condition(object, 'Synced');
      if (ready?.status !== 'True') problems.push(`${id}: Ready=${ready?.status} ${ready?.reason ?? ''} ${ready?.message ?? ''}`);
      if (synced?.status !== 'True') problems.push(`${id}: Synced=${synced?.status} ${synced?.reason ?? ''} ${synced?.message ?? ''}`);
      if (object.status?.observedGeneration !== object.metadata.generation) problems.push(`${id}: observedGeneration ${object.status?.observedGeneration} of generation ${object.metadata.generation}`);
      return problems;
    }
    case 'deleted':
      return object ? [`${id}: still in the API server (finalizers ${JSON.stringify(object.metadata.finalizers)}, Synced ${condition(object, 'Synced')?.reason ?? '-'}: ${condition(object, 'Synced')?.message ?? ''})`] : [];
    case 'blocked': {
      if (!object) return [`${id}: its finalizer went though the cloud resource holds data`];
      const problems: string[] = [];
      if (!object.metadata.deletionTimestamp) problems.push(`${id}: not terminating`);
      const synced = condition(object, 'Synced');
      if (synced?.reason !== 'DeletionBlocked') problems.push(`${id}: Synced reason ${synced?.reason ?? '-'}, not DeletionBlocked`);
      return problems;
    }
  }
}

/** Why one resource has not reached its fate in its cloud yet (empty: it has there). */
async function cloudProblems(cluster: ReliabilityCluster, entry: Entry): Promise<string[]> {
  const id = idOf(entry);
  const store = cluster.stores.of(entry.cloud, entry.kind);
  const inCloud = await store.exists(entry.externalName);
  switch (entry.fate) {
    case 'live':
    case 'protected':
      return inCloud ? (await store.settingsProblems(entry)).map((p) => `${id}: ${p}`) : [`${id}: not in the cloud`];
    case 'deleted':
      if (entry.deletionPolicy === 'Delete' && inCloud) return [`${id}: still in the cloud`];
      // (deleted before the operator created it, a Retain resource has nothing in the cloud to keep)
      if (entry.deletionPolicy === 'Retain' && !inCloud && createsOf(cluster, entry) > 0) return [`${id}: Retain, but gone from the cloud`];
      return [];
    case 'blocked':
      return inCloud ? [] : [`${id}: deleted from the cloud with its data`];
  }
}

/**
 * Every problem of one run's resources, and the cloud resources no run of the cluster accounts for
 * (leaks): the runs share the clouds, so what an earlier run kept on purpose is no leak of a later one.
 * The API server is read first (two lists); the clouds only once it shows every resource at its fate,
 * so waiting for convergence costs the operator's 2 cores little.
 */
export async function convergenceProblems(cluster: ReliabilityCluster, ledger: Ledger, allLedgers: readonly Ledger[]): Promise<string[]> {
  const objects = await ledger.readAll();
  const inApi = ledger.list().flatMap((entry) => apiProblems(entry, objects.get(ledger.key(entry.kind, entry.name))));
  if (inApi.length > 0) return inApi;
  // every resource and every store looked at at once: one round of checks takes as long as its slowest call
  const [perEntry, perStore] = await Promise.all([
    Promise.all(ledger.list().map((entry) => cloudProblems(cluster, entry))),
    Promise.all(cluster.stores.all().map(async (store) => ({ store, names: await store.names() }))),
  ]);
  const problems = perEntry.flat();
  const accounted = new Set(
    allLedgers.flatMap((l) => l.list((e) => e.fate !== 'deleted' || e.deletionPolicy === 'Retain').map((e) => `${e.cloud}/${e.kind}/${e.externalName}`)),
  );
  for (const { store, names } of perStore) {
    for (const name of names) if (!accounted.has(`${store.cloud}/${store.kind}/${name}`)) problems.push(`leaked ${store.cloud} ${store.kind} ${name}`);
  }
  return problems;
}

/**
 * Waits until every resource of the run has reached its fate; the error gives the operators' last
 * words, then what had not converged, last, so a log cut to its tail still shows it.
 */
export async function waitConverged(cluster: ReliabilityCluster, ledger: Ledger, allLedgers: readonly Ledger[], timeoutMs = 180_000): Promise<void> {
  let last: string[] = [];
  try {
    await waitFor(
      'every resource converged',
      async () => {
        last = await convergenceProblems(cluster, ledger, allLedgers);
        return last.length === 0;
      },
      timeoutMs,
      250,
    );
  } catch {
    throw new Error(`not converged within ${timeoutMs / 1000} s; the operators' last output:\n${cluster.operatorOutput(3000)}\nnot converged within ${timeoutMs / 1000} s (${ledger.namespace}):\n  ${last.join('\n  ')}`);
  }
}

/** Successful cloud writes of one operation on a resource's external name by the operator, as its proxy counted them. */
function writesOf(cluster: ReliabilityCluster, entry: Entry, which: 'create' | 'delete'): number {
  const store = cluster.stores.of(entry.cloud, entry.kind);
  return proxyOf(cluster, store.dialect).succeeded(store.writes[which]).get(entry.externalName) ?? 0;
}

function proxyOf(cluster: ReliabilityCluster, api: ProxiedApi): CloudProxy {
  const proxy = cluster.proxies[api];
  if (!proxy) throw new Error(`no ${api} proxy in this run`);
  return proxy;
}

const createsOf = (cluster: ReliabilityCluster, entry: Entry): number => writesOf(cluster, entry, 'create');

/**
 * Cloud deletes that succeeded on resources whose cloud side must stay: `Retain`, a bucket holding
 * data without forceDelete, a table with deletionProtection, a `k8or.io/protect` resource.
 */
export function forbiddenDeletes(cluster: ReliabilityCluster, ledger: Ledger): string[] {
  return ledger
    .list((e) => e.deletionPolicy === 'Retain' || e.fate === 'blocked' || e.fate === 'protected')
    .filter((e) => writesOf(cluster, e, 'delete') > 0)
    .map((e) => `${e.cloud} ${e.kind}/${e.name} (${e.externalName}, ${e.fate}, ${e.deletionPolicy}) was deleted from the cloud`);
}

/**
 * Cloud creates that succeeded more than once for one external name (the operator did something
 * twice), and resources in the cloud that were never created through the operator's endpoint (a
 * create the backend had whose answer was cut, `outcomeUnknown`, may have made it).
 */
export function duplicateCreates(cluster: ReliabilityCluster, ledger: Ledger): string[] {
  const problems: string[] = [];
  for (const entry of ledger.list()) {
    const count = createsOf(cluster, entry);
    if (count > 1) problems.push(`${entry.cloud} ${entry.kind}/${entry.name}: ${count} successful creates of ${entry.externalName}`);
    if (count === 0 && entry.fate !== 'deleted' && unknownCreatesOf(cluster, entry) === 0) problems.push(`${entry.cloud} ${entry.kind}/${entry.name}: ${entry.externalName} exists but no create of it reached the cloud`);
  }
  return problems;
}

/** Creates of a resource's external name that reached its backend and whose answer was cut. */
function unknownCreatesOf(cluster: ReliabilityCluster, entry: Entry): number {
  const store = cluster.stores.of(entry.cloud, entry.kind);
  return proxyOf(cluster, store.dialect).unknown(store.writes.create).get(entry.externalName) ?? 0;
}

/** Data lost from any resource of the run that held some. */
export async function dataLost(cluster: ReliabilityCluster, ledger: Ledger): Promise<string[]> {
  return (await Promise.all(ledger.list((e) => e.holdsData).map((entry) => cluster.stores.of(entry.cloud, entry.kind).lostData(entry)))).flat();
}

/** The run's cloud creates and deletes that succeeded, per cloud and kind (`aws Bucket create: 8`). */
export function cloudWriteCounts(cluster: ReliabilityCluster, ledger: Ledger): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of ledger.list()) {
    for (const which of ['create', 'delete'] as const) {
      const n = writesOf(cluster, entry, which);
      if (n > 0) counts[`${entry.cloud} ${entry.kind} ${which}`] = (counts[`${entry.cloud} ${entry.kind} ${which}`] ?? 0) + n;
    }
  }
  return counts;
}

/** The engine's retry of a deletion the cloud refuses (DeletionBlocked): its default, which the chart keeps. */
export const DELETION_BLOCKED_RETRY_MS = 60_000;

/** Every call at a resource's proxy naming its external name. */
function callsAt(cluster: ReliabilityCluster, entry: Entry): number {
  return proxyOf(cluster, cluster.stores.of(entry.cloud, entry.kind).dialect).calls.filter((c) => c.resource === entry.externalName).length;
}

export interface CallBoundInputs {
  /**
   * Reconciles any resource may make beyond those its own history earns: one per operator start
   * (each start reconciles everything), and per event of the phase that may reconcile a resource
   * again (a takeover, an injected API server fault, a watch reset).
   */
  extraReconciles: number;
  /** How long the phase has run: a blocked deletion is tried again every DELETION_BLOCKED_RETRY_MS. */
  phaseMs: number;
}

/**
 * Every cloud call naming a resource at its proxy, against a bound: the most calls one reconcile of
 * its kind makes (`Store.callsPerReconcile`, counted from the providers' code), times the reconciles
 * the resource earned: 2 for its create (the create, and a pass the engine's own writes of the
 * finalizer and markers may start), 1 per spec edit, 2 for a deletion (the finalizer's pass and the
 * pass that finds the resource gone), 1 more per DELETION_BLOCKED_RETRY_MS of the phase for a deletion
 * the cloud refuses (tried again on that period), plus `extraReconciles`. A kill or a fault that cuts
 * a reconcile short costs the calls it made and the reconcile after the restart or the retry, which
 * `extraReconciles` counts. A retry loop without backoff, or a reconcile that repeats calls, breaks
 * it; the bound is loose (a run makes a quarter to a half of it), so it catches loops, not one call
 * too many. Returns the resources over the bound, and a line per cloud and kind for the report (its
 * resource nearest the bound).
 */
export function callBound(cluster: ReliabilityCluster, ledger: Ledger, inputs: CallBoundInputs): { over: string[]; report: string[] } {
  const over: string[] = [];
  const nearest = new Map<string, { calls: number; bound: number; name: string }>();
  for (const entry of ledger.list()) {
    const store = cluster.stores.of(entry.cloud, entry.kind);
    const blockedRetries = entry.fate === 'blocked' ? Math.ceil(inputs.phaseMs / DELETION_BLOCKED_RETRY_MS) : 0;
    const reconciles = 2 + entry.edits + (entry.fate === 'live' || entry.fate === 'protected' ? 0 : 2) + blockedRetries + inputs.extraReconciles;
    const bound = store.callsPerReconcile * reconciles;
    const calls = callsAt(cluster, entry);
    if (calls > bound) over.push(`${entry.cloud} ${entry.kind}/${entry.name} (${entry.externalName}): ${calls} calls at its proxy > ${bound} (${reconciles} reconciles x ${store.callsPerReconcile})`);
    const key = `${store.cloud} ${store.kind}`;
    const before = nearest.get(key);
    if (!before || calls / bound > before.calls / before.bound) nearest.set(key, { calls, bound, name: entry.name });
  }
  return { over, report: [...nearest].map(([key, n]) => `${key} ${n.calls} (bound ${n.bound}, ${n.name})`) };
}
