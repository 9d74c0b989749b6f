/** --data-dir: the store as a JSON snapshot, written atomically (debounced after changes, and on stop). */
import { mkdirSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ObjectStore, StoreSnapshot } from '../store.js';
import { isObject } from '../../util.js';

const STATE_FILE = 'state.json';
const DEBOUNCE_MS = 100;

export function readSnapshot(dataDir: string): StoreSnapshot | undefined {
  const file = join(dataDir, STATE_FILE);
  if (!existsSync(file)) return undefined;
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isObject(parsed) || typeof parsed['resourceVersion'] !== 'number' || !isObject(parsed['resources'])) {
    throw new Error(`${file} is not a sandbox state file`);
  }
  return parsed as unknown as StoreSnapshot;
}

function writeAtomically(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, file);
}

export class SnapshotWriter {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;

  constructor(
    private readonly dataDir: string,
    private readonly store: ObjectStore,
  ) {
    mkdirSync(dataDir, { recursive: true });
    store.onEvent(() => this.changed());
  }

  private changed(): void {
    this.dirty = true;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, DEBOUNCE_MS);
  }

  /** Write now if anything changed since the last write. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.dirty) return;
    this.dirty = false;
    writeAtomically(join(this.dataDir, STATE_FILE), JSON.stringify(this.store.snapshot()));
  }
}

/** Read a small text file from the data dir, or create it with `make()`. */
export function persistedText(dataDir: string | undefined, name: string, make: () => string): string {
  if (!dataDir) return make();
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8');
  const value = make();
  writeAtomically(file, value);
  return value;
}
