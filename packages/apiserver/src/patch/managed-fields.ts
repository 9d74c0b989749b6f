/**
 * metadata.managedFields: which field manager owns which fields, in the FieldsV1 format. Paths are
 * FieldsV1 keys: `f:name` for a field, `k:{"type":"Ready"}` for an item of a map-list, `v:"x"` for an
 * item of a set; other lists are atomic (owned as a whole).
 */
import type { KubeObject } from '../types.js';
import { isObject, jsonEqual, metadataOf, nowIso } from '../util.js';
import { ApiError } from '../status.js';
import type { ListType, ListTypeOf } from './list-types.js';

type Path = string[];
const SEP = '\u0000';

/** Metadata fields that managers own; the rest of metadata is the server's. */
const TRACKED_METADATA = new Set(['labels', 'annotations', 'finalizers', 'ownerReferences']);

export interface TrackOptions {
  /** Which part of the object this write may touch: the main resource or the status subresource. */
  subresource: '' | 'status';
  /** Main-resource writes do not own status when the kind has a status subresource. */
  statusIsSubresource: boolean;
  /** Map-lists and sets of this kind; other lists are atomic. */
  listTypeOf: ListTypeOf;
}

function tracked(top: string, options: TrackOptions): boolean {
  if (top === 'apiVersion' || top === 'kind') return false;
  if (options.subresource === 'status') return top === 'status';
  if (top === 'status' && options.statusIsSubresource) return false;
  return true;
}

function itemKey(item: Record<string, unknown>, keys: string[]): string {
  const key: Record<string, unknown> = {};
  for (const k of keys) key[k] = item[k];
  return `k:${JSON.stringify(key)}`;
}

/** Leaf paths of a JSON object (objects and map-list items recursed into; atomic lists and scalars are leaves). */
export function leafPaths(obj: unknown, options: TrackOptions): Path[] {
  const out: Path[] = [];
  const walk = (value: unknown, path: Path, schemaPath: string[]): void => {
    if (isObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, `f:${k}`], [...schemaPath, k]);
      return;
    }
    if (Array.isArray(value)) {
      const listType = options.listTypeOf(schemaPath);
      if (listType?.kind === 'map') {
        for (const item of value) {
          if (!isObject(item)) continue;
          const element = [...path, itemKey(item, listType.keys)];
          out.push([...element, '.']);
          for (const [k, v] of Object.entries(item)) walk(v, [...element, `f:${k}`], [...schemaPath, '[]', k]);
        }
        if (value.length > 0) return;
      } else if (listType?.kind === 'set') {
        for (const item of value) out.push([...path, `v:${JSON.stringify(item)}`]);
        if (value.length > 0) return;
      }
    }
    out.push(path);
  };
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (!tracked(k, options)) continue;
    if (k === 'metadata') {
      if (!isObject(v)) continue;
      for (const [mk, mv] of Object.entries(v)) if (TRACKED_METADATA.has(mk)) walk(mv, ['f:metadata', `f:${mk}`], ['metadata', mk]);
      continue;
    }
    walk(v, [`f:${k}`], [k]);
  }
  return out;
}

function matchesKey(item: unknown, element: string): boolean {
  if (!isObject(item)) return false;
  const key = JSON.parse(element.slice(2)) as Record<string, unknown>;
  return Object.entries(key).every(([k, v]) => jsonEqual(item[k], v));
}

/** The value a path points at, undefined when absent. */
function valueAt(obj: unknown, path: Path): unknown {
  let cur = obj;
  for (const segment of path) {
    if (segment === '.') return cur;
    if (segment.startsWith('f:')) {
      if (!isObject(cur)) return undefined;
      cur = cur[segment.slice(2)];
    } else if (segment.startsWith('k:')) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur.find((item) => matchesKey(item, segment));
    } else if (segment.startsWith('v:')) {
      if (!Array.isArray(cur)) return undefined;
      const wanted: unknown = JSON.parse(segment.slice(2));
      cur = cur.find((item) => jsonEqual(item, wanted));
    } else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** Remove what a path points at (a field, a map-list item or a set item). */
function removeAt(obj: KubeObject, path: Path): void {
  const effective = path[path.length - 1] === '.' ? path.slice(0, -1) : path;
  const parent = valueAt(obj, effective.slice(0, -1));
  const last = effective[effective.length - 1];
  if (last === undefined) return;
  if (last.startsWith('f:') && isObject(parent)) delete parent[last.slice(2)];
  else if (last.startsWith('k:') && Array.isArray(parent)) {
    const i = parent.findIndex((item) => matchesKey(item, last));
    if (i >= 0) parent.splice(i, 1);
  } else if (last.startsWith('v:') && Array.isArray(parent)) {
    const wanted: unknown = JSON.parse(last.slice(2));
    const i = parent.findIndex((item) => jsonEqual(item, wanted));
    if (i >= 0) parent.splice(i, 1);
  }
}

function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let node = root;
    for (const part of path) {
      if (!isObject(node[part])) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
  }
  return root;
}

function fromFieldsV1(fields: unknown): Path[] {
  const out: Path[] = [];
  const walk = (node: unknown, path: Path): void => {
    const children = isObject(node) ? Object.keys(node) : [];
    if (children.length === 0) {
      if (path.length > 0) out.push(path);
      return;
    }
    for (const k of children) walk((node as Record<string, unknown>)[k], [...path, k]);
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
  /** The stored entry this was read from, written back as it is while nothing about it changes. */
  stored?: Record<string, unknown>;
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
    stored: e,
  }));
}

/** The entry changed: it is written anew. */
function touch(entry: Entry): void {
  delete entry.stored;
}

function writeEntries(obj: KubeObject, entries: Entry[]): void {
  const live = entries.filter((e) => e.paths.size > 0);
  const meta = metadataOf(obj);
  if (live.length === 0) {
    delete meta['managedFields'];
    return;
  }
  meta['managedFields'] = live.map((e) => {
    // stored entries are never changed in place, so an unchanged one is shared, not rebuilt
    if (e.stored) return e.stored;
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
  if (entry.apiVersion !== apiVersion) touch(entry);
  entry.apiVersion = apiVersion;
  return entry;
}

/** Drop ownership of fields that no longer exist in `obj`. */
function pruneMissing(entries: Entry[], obj: KubeObject): void {
  for (const e of entries) {
    for (const p of [...e.paths]) {
      if (valueAt(obj, p.split(SEP)) !== undefined) continue;
      e.paths.delete(p);
      touch(e);
    }
  }
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
    for (const e of entries) for (const p of changed) if (e.paths.delete(p)) touch(e);
    const entry = entryFor(entries, manager, 'Update', options.subresource, apiVersion);
    for (const p of changed) entry.paths.add(p);
    entry.time = nowIso();
    touch(entry);
  }
  pruneMissing(entries, next);
  // nothing changed hands and nothing went missing: the managedFields stay as they were
  if (old && entries.every((e) => e.stored) && metadataOf(next)['managedFields'] === metadataOf(old)['managedFields']) return;
  writeEntries(next, entries);
}

/** Record a create by server-side apply: `manager` owns exactly the fields of the applied configuration. */
export function recordApplyCreate(next: KubeObject, applied: KubeObject, manager: string, apiVersion: string, options: TrackOptions): void {
  const entry: Entry = { manager, operation: 'Apply', apiVersion, time: nowIso(), subresource: options.subresource, paths: new Set(leafPaths(applied, options).map((p) => p.join(SEP))) };
  const entries = [entry];
  pruneMissing(entries, next);
  writeEntries(next, entries);
}

/** Deep-merge an applied configuration into the live object: maps merge, map-lists merge by key, sets unite, other lists replace. */
function mergeApplied(live: unknown, applied: unknown, schemaPath: string[], listTypeOf: ListTypeOf): unknown {
  if (Array.isArray(applied) && Array.isArray(live)) {
    const listType: ListType | undefined = listTypeOf(schemaPath);
    if (listType?.kind === 'set') return [...live, ...applied.filter((a) => !live.some((l) => jsonEqual(l, a)))];
    if (listType?.kind === 'map') {
      const out = [...live];
      for (const item of applied) {
        if (!isObject(item)) continue;
        const element = itemKey(item, listType.keys);
        const i = out.findIndex((l) => matchesKey(l, element));
        if (i >= 0) out[i] = mergeApplied(out[i], item, [...schemaPath, '[]'], listTypeOf);
        else out.push(structuredClone(item));
      }
      return out;
    }
    return structuredClone(applied);
  }
  if (!isObject(applied) || !isObject(live)) return structuredClone(applied);
  const out: Record<string, unknown> = { ...live };
  for (const [k, v] of Object.entries(applied)) out[k] = v === null ? v : mergeApplied(live[k], v, [...schemaPath, k], listTypeOf);
  return out;
}

/** The map-list item a path lies in (its deepest `k:` element), as a path prefix. */
function itemPrefix(path: Path): Path | undefined {
  for (let i = path.length - 1; i >= 0; i--) if (path[i]?.startsWith('k:')) return path.slice(0, i + 1);
  return undefined;
}

/**
 * Server-side apply: merge `applied` into `live`, owned by `manager`. Fields other managers own with a
 * different value conflict (409) unless `force`. Fields this manager applied before but no longer
 * applies, and nobody else owns, are removed (whole map-list items when nothing of them is kept).
 */
export function serverSideApply(
  live: KubeObject,
  applied: KubeObject,
  manager: string,
  apiVersion: string,
  force: boolean,
  options: TrackOptions,
): KubeObject {
  const entries = readEntries(live);
  const appliedPaths = leafPaths(applied, options).map((p) => p.join(SEP));
  const appliedSet = new Set(appliedPaths);
  const conflicts: Array<{ manager: string; apiVersion: string; path: string }> = [];
  for (const e of entries) {
    if (e.manager === manager && e.operation === 'Apply' && e.subresource === options.subresource) continue;
    for (const p of e.paths) {
      if (!appliedSet.has(p)) continue;
      const path = p.split(SEP);
      if (path[path.length - 1] === '.') continue;
      if (!jsonEqual(valueAt(live, path), valueAt(applied, path))) conflicts.push({ manager: e.manager, apiVersion: e.apiVersion, path: displayPath(path) });
    }
  }
  if (conflicts.length > 0 && !force) throw applyConflict(conflicts);

  const next = mergeApplied(live, applied, [], options.listTypeOf) as KubeObject;
  // keep server-owned metadata of the live object
  const meta = metadataOf(next);
  for (const [k, v] of Object.entries(metadataOf(live))) if (!TRACKED_METADATA.has(k)) meta[k] = v;
  const mine = entryFor(entries, manager, 'Apply', options.subresource, apiVersion);
  const others = entries.filter((e) => e !== mine);
  for (const e of others) for (const p of appliedPaths) e.paths.delete(p);
  const keptElsewhere = (prefix: string): boolean => appliedPaths.some((p) => p.startsWith(prefix)) || others.some((e) => [...e.paths].some((p) => p.startsWith(prefix)));
  const removed = new Set<string>();
  for (const p of mine.paths) {
    if (appliedSet.has(p) || others.some((e) => e.paths.has(p))) continue;
    const path = p.split(SEP);
    const item = itemPrefix(path);
    const target = item && !keptElsewhere(item.join(SEP) + SEP) ? item : path;
    const key = target.join(SEP);
    if (removed.has(key)) continue;
    removed.add(key);
    removeAt(next, target);
  }
  mine.paths = appliedSet;
  mine.time = nowIso();
  // apply changes ownership in several places at once: every entry is written anew
  for (const e of entries) touch(e);
  pruneMissing(entries, next);
  writeEntries(next, entries);
  return next;
}

/** `.spec.lifecycle[id="r1"].days` as the real server prints conflicting fields. */
function displayPath(path: Path): string {
  let out = '';
  for (const segment of path) {
    if (segment.startsWith('f:')) out += `.${segment.slice(2)}`;
    else if (segment.startsWith('k:')) {
      const key = JSON.parse(segment.slice(2)) as Record<string, unknown>;
      out += `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
    } else if (segment.startsWith('v:')) out += `[${segment.slice(2)}]`;
  }
  return out;
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
