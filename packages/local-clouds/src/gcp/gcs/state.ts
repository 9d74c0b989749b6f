import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A JSON object as the API sends it. */
export type Json = Record<string, unknown>;

/** One generation of one object: live until `timeDeleted` is set (a noncurrent version). */
export interface StoredObject {
  name: string;
  generation: string;
  contentType: string;
  storageClass: string;
  /** Content, base64 (the fake serves the control plane; objects are small). */
  data: string;
  md5Hash: string;
  crc32c: string;
  timeCreated: string;
  timeDeleted?: string;
  metadata?: Record<string, string>;
}

/** One bucket: its resource as GCS stores it (without the computed fields), its project and its objects. */
export interface StoredBucket {
  /** The managed fields of the bucket resource (location, storageClass, versioning, labels, lifecycle, iamConfiguration, encryption, ...). */
  resource: Json;
  project: string;
  projectNumber: string;
  metageneration: number;
  timeCreated: string;
  updated: string;
  /** Every generation of every object. */
  objects: StoredObject[];
}

export interface GcsState {
  buckets: Map<string, StoredBucket>;
  /** The last object generation handed out (microseconds since the epoch, strictly increasing). */
  lastGeneration: number;
}

const STATE_FILE = 'gcs-state.json';
const DEBOUNCE_MS = 50;

export function emptyState(): GcsState {
  return { buckets: new Map(), lastGeneration: 0 };
}

/** Reads `gcs-state.json` from the data directory; an empty state when there is none. */
export function loadState(dataDir: string | undefined): GcsState {
  if (!dataDir) return emptyState();
  const file = join(dataDir, STATE_FILE);
  if (!existsSync(file)) return emptyState();
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { buckets?: Record<string, StoredBucket>; lastGeneration?: number };
  if (typeof parsed !== 'object' || parsed === null || typeof parsed.buckets !== 'object') throw new Error(`${file} is not a GCS fake state file`);
  return { buckets: new Map(Object.entries(parsed.buckets)), lastGeneration: parsed.lastGeneration ?? 0 };
}

/** Writes the state to the data directory after changes (debounced, atomically), and on flush. */
export class StateWriter {
  #timer: NodeJS.Timeout | undefined;
  #dirty = false;

  constructor(
    private readonly dataDir: string | undefined,
    private readonly state: GcsState,
  ) {
    if (dataDir) mkdirSync(dataDir, { recursive: true });
  }

  changed(): void {
    if (!this.dataDir) return;
    this.#dirty = true;
    this.#timer ??= setTimeout(() => this.flush(), DEBOUNCE_MS);
  }

  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.dataDir || !this.#dirty) return;
    this.#dirty = false;
    const file = join(this.dataDir, STATE_FILE);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ buckets: Object.fromEntries(this.state.buckets), lastGeneration: this.state.lastGeneration }), { mode: 0o600 });
    renameSync(tmp, file);
  }
}

/** A fresh object generation: microseconds since the epoch, always above the last one. */
export function nextGeneration(state: GcsState): string {
  state.lastGeneration = Math.max(state.lastGeneration + 1, Date.now() * 1000);
  return String(state.lastGeneration);
}
