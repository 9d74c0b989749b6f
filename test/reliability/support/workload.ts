// The run every fault suite makes: resources holding data first (written before the faults), then a
// seeded sequence of creates, spec edits and deletes, then the data holders' deletions.
import { whileWebhookDown } from './supervisor.ts';
import { writeData, type CloudClients } from './data.ts';
import type { Entry, Kind, Ledger, NewResource } from './resources.ts';
import type { Random } from './seed.ts';

/** One resource per way of keeping data: Retain, forceDelete: false, deletionProtection, k8or.io/protect. */
export const DATA_HOLDERS: NewResource[] = [
  { kind: 'Bucket', name: 'keep-retained', deletionPolicy: 'Retain' },
  { kind: 'Bucket', name: 'keep-not-forced' },
  { kind: 'Bucket', name: 'keep-protected', protect: true },
  { kind: 'Table', name: 'keep-retained', deletionPolicy: 'Retain' },
  { kind: 'Table', name: 'keep-deletion-protected', deletionProtection: true },
  { kind: 'Table', name: 'keep-protected', protect: true },
];

export async function createDataHolders(ledger: Ledger): Promise<void> {
  for (const holder of DATA_HOLDERS) await ledger.create(holder);
}

export async function fillDataHolders(ledger: Ledger, clients: CloudClients): Promise<void> {
  for (const holder of DATA_HOLDERS) await writeData(clients, ledger.get(holder.kind, holder.name));
}

export interface OperationsOptions {
  buckets: number;
  tables: number;
  operations: number;
  /** Called after operation i (0-based), e.g. to kill the operator at a random moment. */
  after?: (i: number) => Promise<void>;
}

/**
 * `operations` steps, each a create (of `buckets` + `tables` new resources, about a third Retain), a
 * spec edit or a delete of a live resource, chosen by `random`; then every data holder still live is
 * deleted too (each must keep its data: refused, blocked or retained).
 */
export async function runOperations(ledger: Ledger, random: Random, options: OperationsOptions & { diagnostics?: () => string }): Promise<void> {
  try {
    await operations(ledger, random, options);
  } catch (error) {
    throw new Error(`${String(error)}\n${options.diagnostics?.() ?? ''}`, { cause: error });
  }
}

async function operations(ledger: Ledger, random: Random, options: OperationsOptions): Promise<void> {
  const toCreate: Kind[] = [...Array<Kind>(options.buckets).fill('Bucket'), ...Array<Kind>(options.tables).fill('Table')];
  let created = 0;
  for (let i = 0; i < options.operations; i++) {
    const live = ledger.list((e) => e.fate === 'live' || e.fate === 'protected');
    const choice = created < toCreate.length && (live.length < 3 || random.chance(0.5)) ? 'create' : random.chance(0.5) ? 'update' : 'delete';
    if (choice === 'create' || live.length === 0) {
      if (created >= toCreate.length) continue;
      const kind = toCreate[created]!;
      const name = `r${created++}`;
      const deletionPolicy = random.chance(0.3) ? 'Retain' : 'Delete';
      const versioning = random.chance(0.5);
      await whileWebhookDown(() => ledger.create({ kind, name, deletionPolicy, ...(kind === 'Bucket' ? { versioning } : {}) }));
    } else {
      const target: Entry = random.pick(live);
      if (choice === 'update') await whileWebhookDown(() => ledger.update(target, i));
      else await whileWebhookDown(() => ledger.delete(target));
    }
    await options.after?.(i);
  }
  for (const entry of ledger.list((e) => e.holdsData && (e.fate === 'live' || e.fate === 'protected'))) await whileWebhookDown(() => ledger.delete(entry));
}

/** How many resources ended in each fate. */
export function fates(ledger: Ledger): Record<string, number> {
  return ledger.list().reduce<Record<string, number>>((counts, e) => ({ ...counts, [e.fate]: (counts[e.fate] ?? 0) + 1 }), {});
}
