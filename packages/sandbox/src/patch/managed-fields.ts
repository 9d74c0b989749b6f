/**
 * metadata.managedFields: which field manager owns which fields, in the FieldsV1 format. Lists are
 * treated as atomic (owned as a whole), which is what CRDs without list-type markers get anyway.
 */
import type { KubeObject } from '../types.js';
import { isObject, jsonEqual, metadataOf, nowIso } from '../util.js';
import { ApiError } from '../server/status.js';

type Path = string[];
const SEP = '\u0000';

/** Metadata fields that managers own; the rest of metadata is the server's. */
const TRACKED_METADATA = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences']);

export interface TrackOptions {
  /** Which part of the object this write may touch: the main resource or the status subresource. */
  subresource: '' | 'status';
  /** Main-resource writes do not own status when the kind has a status subresource. */
  statusIsSubresource: boolean;
}

function tracked(top: string, options: TrackOptions): boolean {
  if (top === 'apiVersion' || top === 'kind') return false;
  if (options.subresource === 'status') return top === 'status';
  if (top === 'status' && options.statusIsSubresource) return false;
  return true;
}

/** Leaf paths of a JSON object (objects recursed into; lists and scalars are leaves). */
export function leafPaths(obj: unknown, options: TrackOptions): Path[] {
  const out: Path[] = [];
  const walk = (value: unknown, path: Path): void => {
    if (isObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    } else out.push(path);
  };
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (!tracked(k, options)) continue;
    if (k === 'metadata') {
      if (!isObject(v)) continue;
      for (const [mk, mv] of Object.entries(v)) if (TRACKED_METADATA.has(mk)) walk(mv, ['metadata', mk]);
      continue;
    }
    walk(v, [k]);
  }
  return out;
}

function valueAt(obj: unknown, path: Path): unknown {
  let cur = obj;
  for (const p of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function removeAt(obj: KubeObject, path: Path): void {
  const parents: Array<Record<string, unknown>> = [];
  let cur: unknown = obj;
  for (const p of path.slice(0, -1)) {
    if (!isObject(cur)) return;
    parents.push(cur);
    cur = cur[p];
  }
  if (!isObject(cur)) return;
  delete cur[path[path.length - 1] as string];
  // drop maps emptied by the removal (except the top-level sections)
  for (let i = path.length - 2; i >= 1; i--) {
    const parent = parents[i];
    const child = parent?.[path[i] as string];
    if (parent && isObject(child) && Object.keys(child).length === 0) delete parent[path[i] as string];
    else break;
  }
}

function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let node = root;
    for (const part of path) {
      const key = `f:${part}`;
      if (!isObject(node[key])) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
  }
  return root;
}

function fromFieldsV1(fields: unknown): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, path: Path): void => {
    const children = isObject(node) ? Object.keys(node).filter((k) => k.startsWith('f:')) : [];
    if (children.length === 0) {
      if (path.length > 0) out.push(path);
      return;
    }
    for (const k of children) walk((node as Record<string, unknown>)[k], [...path, k.slice(2)]);
  };
  walk(fields, []);
  return out;
}

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  subresource: string;
  paths: Set<string>;
}

function readEntries(obj: KubeObject): Entry[] {
  const raw = metadataOf(obj)['managedFields'];
  if (!Array.isArray(raw)) return [];
  return raw.filter(isObject).map((e) => ({
    manager: String(e['manager'] ?? ''),
    operation: e['operation'] === 'Apply' ? 'Apply' : 'Update',
    apiVersion: String(e['apiVersion'] ?? ''),
    time: String(e['time'] ?? ''),
    subresource: String(e['subresource'] ?? ''),
    paths: new Set(fromFieldsV1(e['fieldsV1']).map((p) => p.join(SEP))),
  }));
}

function writeEntries(obj: KubeObject, entries: Entry[]): void {
  const live = entries.filter((e) => e.paths.size > 0);
  const meta = metadataOf(obj);
  if (live.length === 0) {
    delete meta['managedFields'];
    return;
  }
  meta['managedFields'] = live.map((e) => {
    const out: Record<string, unknown> = {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      time: e.time,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1([...e.paths].map((p) => p.split(SEP))),
    };
    if (e.subresource) out['subresource'] = e.subresource;
    return out;
  });
}

function entryFor(entries: Entry[], manager: string, operation: Entry['operation'], subresource: string, apiVersion: string): Entry {
  let entry = entries.find((e) => e.manager === manager && e.operation === operation && e.subresource === subresource);
  if (!entry) {
    entry = { manager, operation, apiVersion, time: nowIso(), subresource, paths: new Set() };
    entries.push(entry);
  }
  entry.apiVersion = apiVersion;
  return entry;
}

/** Drop ownership of fields that no longer exist in `obj`. */
function pruneMissing(entries: Entry[], obj: KubeObject): void {
  for (const e of entries) for (const p of [...e.paths]) if (valueAt(obj, p.split(SEP)) === undefined) e.paths.delete(p);
}

/**
 * Record a create/update/patch by `manager` (operation Update): it takes ownership of every field it
 * set or changed, other managers lose those fields. `next` is modified in place.
 */
export function recordUpdate(next: KubeObject, old: KubeObject | undefined, manager: string, apiVersion: string, options: TrackOptions): void {
  const entries = old ? readEntries(old) : [];
  const changed = leafPaths(next, options)
    .filter((p) => !old || !jsonEqual(valueAt(next, p), valueAt(old, p)))
    .map((p) => p.join(SEP));
  if (changed.length > 0) {
    for (const e of entries) for (const p of changed) e.paths.delete(p);
    const entry = entryFor(entries, manager, 'Update', options.subresource, apiVersion);
    for (const p of changed) entry.paths.add(p);
    entry.time = nowIso();
  }
  pruneMissing(entries, next);
  writeEntries(next, entries);
}

/** Deep-merge an applied configuration into the live object: maps merge, lists and scalars replace. */
function mergeApplied(live: unknown, applied: unknown): unknown {
  if (!isObject(applied) || !isObject(live)) return structuredClone(applied);
  const out: Record<string, unknown> = { ...live };
  for (const [k, v] of Object.entries(applied)) out[k] = v === null ? v : mergeApplied(live[k], v);
  return out;
}

/**
 * Server-side apply: merge `applied` into `live` (undefined when creating), owned by `manager`.
 * Fields other managers own with a different value conflict (409) unless `force`. Fields this
 * manager applied before but no longer applies, and nobody else owns, are removed.
 */
export function serverSideApply(
  live: KubeObject | undefined,
  applied: KubeObject,
  manager: string,
  apiVersion: string,
  force: boolean,
  options: TrackOptions,
): KubeObject {
  const entries = live ? readEntries(live) : [];
  const appliedPaths = leafPaths(applied, options).map((p) => p.join(SEP));
  const appliedSet = new Set(appliedPaths);
  const conflicts: Array<{ manager: string; apiVersion: string; path: string }> = [];
  for (const e of entries) {
    if (e.manager === manager && e.operation === 'Apply' && e.subresource === options.subresource) continue;
    for (const p of e.paths) {
      if (!appliedSet.has(p)) continue;
      const path = p.split(SEP);
      if (live && !jsonEqual(valueAt(live, path), valueAt(applied, path))) conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: `.${path.join('.')}` });
    }
  }
  if (conflicts.length > 0 && !force) throw applyConflict(conflicts);

  const next = (live ? mergeApplied(live, applied) : structuredClone(applied)) as KubeObject;
  if (live) {
    // keep server-owned metadata of the live object
    const meta = metadataOf(next);
    const liveMeta = metadataOf(live);
    for (const [k, v] of Object.entries(liveMeta)) if (!TRACKED_METADATA.has(k)) meta[k] = v;
  }
  const mine = entryFor(entries, manager, 'Apply', options.subresource, apiVersion);
  const others = entries.filter((e) => e !== mine);
  for (const p of mine.paths) {
    if (appliedSet.has(p) || others.some((e) => e.paths.has(p))) continue;
    removeAt(next, p.split(SEP));
  }
  for (const e of others) for (const p of appliedPaths) e.paths.delete(p);
  mine.paths = appliedSet;
  mine.time = nowIso();
  pruneMissing(entries, next);
  writeEntries(next, entries);
  return next;
}

/** Record a create by server-side apply: `manager` owns exactly the fields of the applied configuration. */
export function recordApplyCreate(next: KubeObject, applied: KubeObject, manager: string, apiVersion: string, options: TrackOptions): void {
  const entry: Entry = { manager, operation: 'Apply', apiVersion, time: nowIso(), subresource: options.subresource, paths: new Set(leafPaths(applied, options).map((p) => p.join(SEP))) };
  const entries = [entry];
  pruneMissing(entries, next);
  writeEntries(next, entries);
}

function applyConflict(conflicts: Array<{ manager: string; apiVersion: string; path: string }>): ApiError {
  const lines = conflicts.map((c) => `conflict with "${c.manager}" using ${c.apiVersion}: ${c.path}`);
  const message = conflicts.length === 1 ? `Apply failed with 1 conflict: ${lines[0]}` : `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  return new ApiError(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: c.path })),
  });
}

/** Default field manager when the request names none: the user agent's program name, as the real server does. */
export function defaultFieldManager(userAgent: string | undefined): string {
  const first = (userAgent ?? 'unknown').split('/')[0] ?? 'unknown';
  return first.slice(0, 128) || 'unknown';
}
