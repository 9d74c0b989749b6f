import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BucketState } from './store.js';

// The S3 fake's buckets on disk, for `dataDir`: one JSON file per bucket (`buckets/<name>.json`),
// rewritten (atomically) after each change to that bucket, before the change is answered, and
// read back at start. A change costs the size of its own bucket, not of every bucket the fake
// holds. Maps and Dates are tagged so any field of BucketState round-trips.

const FOLDER = 'buckets';
/** The layout before one file per bucket: every bucket in one file. Read once at start, and moved into `buckets/`. */
const SINGLE_FILE = 'buckets.json';
const SUFFIX = '.json';

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Map) return { $map: [...raw.entries()] };
  if (raw instanceof Date) return { $date: raw.toISOString() };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const tagged = value as { $map?: [unknown, unknown][]; $date?: string };
    if (Array.isArray(tagged.$map)) return new Map(tagged.$map);
    if (typeof tagged.$date === 'string') return new Date(tagged.$date);
  }
  return value;
}

/**
 * The file that holds bucket `name`'s state under `dataDir` (the bucket and its configuration and
 * object versions, as JSON with tagged Maps and Dates). A tool that seeds a stopped fake's folder
 * copies these files.
 */
export function s3BucketFile(dataDir: string, name: string): string {
  return join(dataDir, FOLDER, `${name}${SUFFIX}`);
}

/** The buckets saved in `dataDir`, by name, or none when it holds no state yet. A folder in the single-file layout is moved into one file per bucket first. */
export function loadBuckets(dataDir: string): Map<string, BucketState> {
  moveSingleFile(dataDir);
  const folder = join(dataDir, FOLDER);
  if (!existsSync(folder)) return new Map();
  const names = readdirSync(folder).filter((file) => file.endsWith(SUFFIX)).map((file) => file.slice(0, -SUFFIX.length)).sort();
  return new Map(names.map((name) => [name, readBucket(dataDir, name)]));
}

/** Writes bucket `name`'s state to `dataDir` (`state` undefined: the bucket is gone, and so is its file); a crash mid-write leaves the previous file whole. */
export function saveBucket(dataDir: string, name: string, state: BucketState | undefined): void {
  const file = s3BucketFile(dataDir, name);
  if (state === undefined) {
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(join(dataDir, FOLDER), { recursive: true });
  const partial = `${file}.partial`;
  writeFileSync(partial, JSON.stringify(state, replacer));
  renameSync(partial, file);
}

function readBucket(dataDir: string, name: string): BucketState {
  const file = s3BucketFile(dataDir, name);
  const state = JSON.parse(readFileSync(file, 'utf8'), reviver) as unknown;
  if (!state || typeof state !== 'object' || (state as { name?: unknown }).name !== name) throw new Error(`${file} does not hold the S3 fake's bucket ${name}`);
  return state as BucketState;
}

/** Moves a `buckets.json` of the single-file layout into one file per bucket, then removes it (a crash in between moves it again at the next start). */
function moveSingleFile(dataDir: string): void {
  const single = join(dataDir, SINGLE_FILE);
  let text: string;
  try {
    text = readFileSync(single, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const buckets = JSON.parse(text, reviver) as unknown;
  if (!(buckets instanceof Map)) throw new Error(`${single} does not hold the S3 fake's buckets`);
  for (const [name, state] of buckets as Map<string, BucketState>) saveBucket(dataDir, name, state);
  rmSync(single);
}
