import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A tag as DynamoDB lists it. */
export interface TableTag {
  Key: string;
  Value: string;
}

/** What the proxy keeps for a table that DynamoDB Local cannot: its tags and point-in-time recovery. */
export interface TableExtras {
  /** The table's CreationDateTime (epoch milliseconds) when this was recorded: a table re-created at the same name starts afresh. */
  created: number;
  tags: TableTag[];
  /** When point-in-time recovery was turned on (epoch seconds), and for how many days; absent when off. */
  pointInTimeRecovery?: { since: number; recoveryPeriodInDays: number };
}

const FILE = 'proxy-state.json';

/** The proxy's state by table name, in memory, written to `dataDir/proxy-state.json` after every change when given. */
export class ExtrasStore {
  readonly #tables: Map<string, TableExtras>;
  readonly #dataDir: string | undefined;

  constructor(dataDir?: string) {
    this.#dataDir = dataDir;
    this.#tables = new Map(dataDir ? Object.entries(ExtrasStore.#load(dataDir)) : []);
  }

  static #load(dataDir: string): Record<string, TableExtras> {
    try {
      return JSON.parse(readFileSync(join(dataDir, FILE), 'utf8')) as Record<string, TableExtras>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
  }

  /** The extras recorded for the table created at `created`; a record of an older table at that name is dropped. */
  get(table: string, created: number): TableExtras {
    const extras = this.#tables.get(table);
    if (extras && extras.created === created) return extras;
    return { created, tags: [] };
  }

  set(table: string, extras: TableExtras): void {
    this.#tables.set(table, extras);
    this.#save();
  }

  delete(table: string): void {
    if (this.#tables.delete(table)) this.#save();
  }

  #save(): void {
    if (!this.#dataDir) return;
    mkdirSync(this.#dataDir, { recursive: true });
    const partial = join(this.#dataDir, `${FILE}.partial`);
    writeFileSync(partial, JSON.stringify(Object.fromEntries(this.#tables), null, 1));
    renameSync(partial, join(this.#dataDir, FILE));
  }
}
