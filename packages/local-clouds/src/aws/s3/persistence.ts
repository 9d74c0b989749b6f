import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BucketState } from './store.js';

// The S3 fake's buckets on disk, for `dataDir`: one JSON file rewritten (atomically) after every
// change, read back at start. Maps and Dates are tagged so any field of BucketState round-trips.

const FILE = 'buckets.json';

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

/** The buckets saved in `dataDir`, or none when it holds no state yet. */
export function loadBuckets(dataDir: string): Map<string, BucketState> {
  let text: string;
  try {
    text = readFileSync(join(dataDir, FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const buckets = JSON.parse(text, reviver) as unknown;
  if (!(buckets instanceof Map)) throw new Error(`${join(dataDir, FILE)} does not hold the S3 fake's buckets`);
  return buckets as Map<string, BucketState>;
}

/** Writes every bucket to `dataDir`; a crash mid-write leaves the previous file whole. */
export function saveBuckets(dataDir: string, buckets: Map<string, BucketState>): void {
  mkdirSync(dataDir, { recursive: true });
  const partial = join(dataDir, `${FILE}.partial`);
  writeFileSync(partial, JSON.stringify(buckets, replacer));
  renameSync(partial, join(dataDir, FILE));
}
