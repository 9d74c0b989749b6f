// The run every fault phase makes: resources holding data first (written before the faults), then a
// seeded sequence of creates, spec edits and deletes across the clouds, then the data holders' deletions.
import { whileWebhookDown } from './supervisor.ts';
import type { CloudName, Entry, Kind, Ledger, NewResource } from './resources.ts';
import type { Random } from './seed.ts';
import type { Stores } from './stores/index.ts';

/** Per cloud and kind, one resource per way of keeping data: Retain, forceDelete: false or deletionProtection, k8or.io/protect. */
export function dataHolders(stores: Stores): NewResource[] {
  return stores.all().flatMap(({ cloud, kind }): NewResource[] =>
      kind === 'Bucket'
        ? [
            { cloud, kind, name: `${cloud}-keep-retained`, deletionPolicy: 'Retain' },
            { cloud, kind, name: `${cloud}-keep-not-forced` },
            { cloud, kind, name: `${cloud}-keep-protected`, protect: true },
          ]
        : [
            { cloud, kind, name: `${cloud}-keep-retained`, deletionPolicy: 'Retain' },
            { cloud, kind, name: `${cloud}-keep-deletion-protected`, deletionProtection: true },
            { cloud, kind, name: `${cloud}-keep-protected`, protect: true },
          ],
  );
}

export async function createDataHolders(ledger: Ledger, stores: Stores): Promise<void> {
  await Promise.all(dataHolders(stores).map((holder) => ledger.create(holder)));
}

/** Writes objects, blobs and items into every data holder with the clouds' own SDKs. */
export async function fillDataHolders(ledger: Ledger, stores: Stores): Promise<void> {
  await Promise.all(
    dataHolders(stores).map(async (holder) => {
      const entry = ledger.get(holder.kind, holder.name);
      await stores.of(entry.cloud, entry.kind).writeData(entry);
      entry.holdsData = true;
    }),
  );
}

export interface OperationsOptions {
  /** New resources per cloud: buckets, and tables where the run has the cloud's tables. */
  perCloud: { buckets: number; tables: number };
  operations: number;
  /** Called after operation i (0-based), e.g. to kill the operator at a random moment. */
  after?: (i: number) => Promise<void>;
}

/**
 * `operations` steps, each a create (of `perCloud` new resources in each cloud, about a third Retain),
 * a spec edit or a delete of a live resource, chosen by `random`; then every data holder still live is
 * deleted too (each must keep its data: refused, blocked or retained).
 */
export async function runOperations(ledger: Ledger, stores: Stores, random: Random, options: OperationsOptions & { diagnostics?: () => string }): Promise<void> {
  try {
    await operations(ledger, stores, random, options);
  } catch (error) {
    throw new Error(`${String(error)}\n${options.diagnostics?.() ?? ''}`, { cause: error });
  }
}

async function operations(ledger: Ledger, stores: Stores, random: Random, options: OperationsOptions): Promise<void> {
  const toCreate: Array<{ cloud: CloudName; kind: Kind }> = stores
    .all()
    .flatMap(({ cloud, kind }) => Array.from({ length: kind === 'Bucket' ? options.perCloud.buckets : options.perCloud.tables }, () => ({ cloud, kind })));
  // interleaved, so every cloud meets the faults early and late
  for (let i = toCreate.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [toCreate[i], toCreate[j]] = [toCreate[j]!, toCreate[i]!];
  }
  let created = 0;
  for (let i = 0; i < options.operations; i++) {
    const live = ledger.list((e) => e.fate === 'live' || e.fate === 'protected');
    const editable = live.filter((e) => stores.of(e.cloud, e.kind).editable);
    const choice = created < toCreate.length && (live.length < 3 || random.chance(0.5)) ? 'create' : random.chance(0.5) && editable.length > 0 ? 'update' : 'delete';
    if (choice === 'create' || live.length === 0) {
      if (created >= toCreate.length) continue;
      const { cloud, kind } = toCreate[created]!;
      const name = `${cloud}-r${created++}`;
      const deletionPolicy = random.chance(0.3) ? 'Retain' : 'Delete';
      const versioning = random.chance(0.5);
      await whileWebhookDown(() => ledger.create({ cloud, kind, name, deletionPolicy, ...(kind === 'Bucket' ? { versioning } : {}) }));
    } else {
      const target: Entry = random.pick(choice === 'update' ? editable : live);
      if (choice === 'update') await whileWebhookDown(() => ledger.update(target, i));
      else await whileWebhookDown(() => ledger.delete(target));
    }
    await options.after?.(i);
  }
  for (const entry of ledger.list((e) => e.holdsData && (e.fate === 'live' || e.fate === 'protected'))) await whileWebhookDown(() => ledger.delete(entry));
}

/** How many resources ended in each fate, and how many each cloud had: `{"live":7,...,"aws":9,"gcp":9,"azure":9}`. */
export function fates(ledger: Ledger): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of ledger.list()) counts[e.fate] = (counts[e.fate] ?? 0) + 1;
  for (const e of ledger.list()) counts[e.cloud] = (counts[e.cloud] ?? 0) + 1;
  return counts;
}
