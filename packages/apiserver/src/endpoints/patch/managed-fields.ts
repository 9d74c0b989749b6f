/**
 * metadata.managedFields: which field manager owns which fields, in the FieldsV1 format. Paths are
 * FieldsV1 keys: `f:name` for a field, `k:{"type":"Ready"}` for an item of a map-list, `v:"x"` for an
 * item of a set; other lists are atomic (owned as a whole).
 */
import type { KubeObject } from '../../types.js';
import { isObject, jsonEqual, metadataOf, nowIso } from '../../util.js';
import { ApiError } from '../../status.js';
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

/** Leaf paths of a JSON object (objects and map-list items recursed into; atomic lists and scalars are leaves). */
export function leafPaths(obj: unknown, options: TrackOptions): Path[] {
  return isObject(obj) ? changedLeaves(obj, undefined, options) : [];
}

/** A FieldsV1 tree: keys are `f:`, `k:`, `v:` and `.` segments; a key with no children is an owned leaf. */
type Fields = Record<string, unknown>;

const hasKeys = (node: Record<string, unknown>): boolean => {
  for (const _ in node) return true;
  return false;
};

/** Parsed `k:` and `v:` segments: the same few (a condition type, a finalizer) come back on every write. */
const parsedSegments = new Map<string, unknown>();
function parsedSegment(segment: string): unknown {
  let parsed = parsedSegments.get(segment);
  if (parsed === undefined) {
    if (parsedSegments.size >= 4096) parsedSegments.clear();
    parsed = JSON.parse(segment.slice(2)) as unknown;
    parsedSegments.set(segment, parsed);
  }
  return parsed;
}

function matchesKey(item: unknown, key: Record<string, unknown>): boolean {
  if (!isObject(item)) return false;
  for (const k in key) if (!jsonEqual(item[k], key[k])) return false;
  return true;
}

/** The value a map-list item key selects: the keys' values, as JSON would carry them. */
function keyOf(item: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const key: Record<string, unknown> = {};
  for (const k of keys) if (item[k] !== undefined) key[k] = item[k];
  return key;
}

/** The child of `value` that one segment names, undefined when absent (`.` is the value itself). */
function childAt(value: unknown, segment: string): unknown {
  if (segment === '.') return value;
  if (segment.startsWith('f:')) return isObject(value) ? value[segment.slice(2)] : undefined;
  if (!Array.isArray(value)) return undefined;
  if (segment.startsWith('k:')) {
    const key = parsedSegment(segment) as Record<string, unknown>;
    return value.find((item) => matchesKey(item, key));
  }
  if (segment.startsWith('v:')) {
    const wanted = parsedSegment(segment);
    return value.find((item) => jsonEqual(item, wanted));
  }
  return undefined;
}

/** The value a path points at, undefined when absent. */
function valueAt(obj: unknown, path: Path): unknown {
  let cur = obj;
  for (const segment of path) {
    cur = childAt(cur, segment);
    if (cur === undefined || segment === '.') return cur;
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
    const key = parsedSegment(last) as Record<string, unknown>;
    const i = parent.findIndex((item) => matchesKey(item, key));
    if (i >= 0) parent.splice(i, 1);
  } else if (last.startsWith('v:') && Array.isArray(parent)) {
    const wanted = parsedSegment(last);
    const i = parent.findIndex((item) => jsonEqual(item, wanted));
    if (i >= 0) parent.splice(i, 1);
  }
}

function toFieldsV1(paths: Path[]): Fields {
  return withLeaves({}, paths);
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

// FieldsV1 trees are never changed in place (a stored entry's tree is shared with the stored
// object): these return a new tree along the changed path, or the same tree when nothing changed.

/** `fields` with every path of `paths` owned: each node on the way is copied once, then changed. */
function withLeaves(fields: Fields, paths: Path[]): Fields {
  if (paths.length === 0) return fields;
  const copies = new Set<Fields>();
  const writable = (node: Fields): Fields => {
    if (copies.has(node)) return node;
    const copy = { ...node };
    copies.add(copy);
    return copy;
  };
  const root = writable(fields);
  for (const path of paths) {
    let node = root;
    for (let at = 0; at < path.length; at++) {
      const segment = path[at]!;
      const child = node[segment];
      if (at === path.length - 1) {
        if (child === undefined) node[segment] = {};
        break;
      }
      const below = writable(isObject(child) ? child : {});
      node[segment] = below;
      node = below;
    }
  }
  return root;
}

/** `fields` without the leaf `path` (and without the parents it leaves empty); a path that is not a leaf stays. */
function withoutLeaf(fields: Fields, path: Path, at = 0): Fields {
  const segment = path[at];
  if (segment === undefined || !(segment in fields)) return fields;
  const child = fields[segment];
  let keep: Fields | undefined;
  if (at === path.length - 1) {
    if (isObject(child) && hasKeys(child)) return fields;
  } else {
    if (!isObject(child)) return fields;
    const next = withoutLeaf(child, path, at + 1);
    if (next === child) return fields;
    if (hasKeys(next)) keep = next;
  }
  const out = { ...fields };
  if (keep) out[segment] = keep;
  else delete out[segment];
  return out;
}

/** `fields` without the leaves that point at nothing in `value`. */
function withoutMissing(fields: Fields, value: unknown): Fields {
  let out: Fields | undefined;
  for (const segment in fields) {
    const child = fields[segment];
    let keep: unknown = child;
    if (segment !== '.') {
      const below = childAt(value, segment);
      if (below === undefined) keep = undefined;
      else if (isObject(child) && hasKeys(child)) {
        const pruned = withoutMissing(child, below);
        keep = hasKeys(pruned) ? pruned : undefined;
      }
    }
    if (keep === child) continue;
    out ??= { ...fields };
    if (keep === undefined) delete out[segment];
    else out[segment] = keep;
  }
  return out ?? fields;
}

/**
 * The leaf paths of `next` (within what `options` tracks) whose value differs from `old`'s, in
 * `next`'s order; every leaf when there is no `old`. Subtrees `next` shares with `old` are skipped.
 */
function changedLeaves(next: KubeObject, old: KubeObject | undefined, options: TrackOptions): Path[] {
  const out: Path[] = [];
  const path: Path = [];
  const schemaPath: string[] = [];
  const enter = (segment: string, schemaSegment: string | undefined, value: unknown, before: unknown): void => {
    path.push(segment);
    if (schemaSegment !== undefined) schemaPath.push(schemaSegment);
    walk(value, before);
    path.pop();
    if (schemaSegment !== undefined) schemaPath.pop();
  };
  const walk = (value: unknown, before: unknown): void => {
    if (value === before) return;
    if (isObject(value) && hasKeys(value)) {
      const beforeObject = isObject(before) ? before : undefined;
      for (const k in value) enter(`f:${k}`, k, value[k], beforeObject?.[k]);
      return;
    }
    if (Array.isArray(value) && value.length > 0) {
      const listType = options.listTypeOf(schemaPath);
      const beforeList = Array.isArray(before) ? before : [];
      if (listType?.kind === 'map') {
        schemaPath.push('[]');
        for (const item of value) {
          if (!isObject(item)) continue;
          const key = keyOf(item, listType.keys);
          const element = `k:${JSON.stringify(key)}`;
          const beforeItem = beforeList.find((b) => matchesKey(b, key));
          path.push(element);
          if (!jsonEqual(item, beforeItem)) out.push([...path, '.']);
          const beforeObject = isObject(beforeItem) ? beforeItem : undefined;
          if (item !== beforeItem) for (const k in item) enter(`f:${k}`, k, item[k], beforeObject?.[k]);
          path.pop();
        }
        schemaPath.pop();
        return;
      }
      if (listType?.kind === 'set') {
        for (const item of value) if (!beforeList.some((b) => jsonEqual(b, item))) out.push([...path, `v:${JSON.stringify(item)}`]);
        return;
      }
    }
    if (!jsonEqual(value, before)) out.push([...path]);
  };
  const oldMeta = old && isObject(old['metadata']) ? old['metadata'] : undefined;
  for (const k in next) {
    if (!tracked(k, options)) continue;
    const value = next[k];
    if (k === 'metadata') {
      if (!isObject(value)) continue;
      path.push('f:metadata');
      schemaPath.push('metadata');
      for (const mk in value) if (TRACKED_METADATA.has(mk)) enter(`f:${mk}`, mk, value[mk], oldMeta?.[mk]);
      path.pop();
      schemaPath.pop();
      continue;
    }
    enter(`f:${k}`, k, value, old?.[k]);
  }
  return out;
}

interface Entry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  subresource: string;
  fields: Fields;
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
    fields: isObject(e['fieldsV1']) ? e['fieldsV1'] : {},
    stored: e,
  }));
}

/** The entry's fields, changed or not: an entry whose fields changed is written anew. */
function setFields(entry: Entry, fields: Fields): void {
  if (fields === entry.fields) return;
  entry.fields = fields;
  touch(entry);
}

/** The entry changed: it is written anew. */
function touch(entry: Entry): void {
  delete entry.stored;
}

function writeEntries(obj: KubeObject, entries: Entry[]): void {
  const live = entries.filter((e) => hasKeys(e.fields));
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
      fieldsV1: e.fields,
    };
    if (e.subresource) out['subresource'] = e.subresource;
    return out;
  });
}

function entryFor(entries: Entry[], manager: string, operation: Entry['operation'], subresource: string, apiVersion: string): Entry {
  let entry = entries.find((e) => e.manager === manager && e.operation === operation && e.subresource === subresource);
  if (!entry) {
    entry = { manager, operation, apiVersion, time: nowIso(), subresource, fields: {} };
    entries.push(entry);
  }
  if (entry.apiVersion !== apiVersion) touch(entry);
  entry.apiVersion = apiVersion;
  return entry;
}

/** Drop ownership of fields that no longer exist in `obj`. */
function pruneMissing(entries: Entry[], obj: KubeObject): void {
  for (const e of entries) setFields(e, withoutMissing(e.fields, obj));
}

/**
 * Record a create/update/patch by `manager` (operation Update): it takes ownership of every field it
 * set or changed, other managers lose those fields. `next` is modified in place.
 */
export function recordUpdate(next: KubeObject, old: KubeObject | undefined, manager: string, apiVersion: string, options: TrackOptions): void {
  const entries = old ? readEntries(old) : [];
  const changed = changedLeaves(next, old, options);
  for (const e of entries) for (const p of changed) setFields(e, withoutLeaf(e.fields, p));
  pruneMissing(entries, next);
  // after the pruning: a changed leaf (a list set to []) may be where another entry's items were
  if (changed.length > 0) {
    const entry = entryFor(entries, manager, 'Update', options.subresource, apiVersion);
    entry.fields = withLeaves(entry.fields, changed);
    entry.time = nowIso();
    touch(entry);
  }
  // nothing changed hands and nothing went missing: the managedFields stay as they were
  if (old && entries.every((e) => e.stored) && metadataOf(next)['managedFields'] === metadataOf(old)['managedFields']) return;
  writeEntries(next, entries);
}

/** Record a create by server-side apply: `manager` owns exactly the fields of the applied configuration. */
export function recordApplyCreate(next: KubeObject, applied: KubeObject, manager: string, apiVersion: string, options: TrackOptions): void {
  const entry: Entry = { manager, operation: 'Apply', apiVersion, time: nowIso(), subresource: options.subresource, fields: toFieldsV1(leafPaths(applied, options)) };
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
        const key = keyOf(item, listType.keys);
        const i = out.findIndex((l) => matchesKey(l, key));
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
  // apply reasons about leaf paths across entries, so it works on sets of joined paths
  const paths = new Map(entries.map((e) => [e, new Set(fromFieldsV1(e.fields).map((p) => p.join(SEP)))]));
  const pathsOf = (e: Entry): Set<string> => paths.get(e) ?? new Set();
  const appliedPaths = leafPaths(applied, options).map((p) => p.join(SEP));
  const appliedSet = new Set(appliedPaths);
  const conflicts: Array<{ manager: string; apiVersion: string; path: string }> = [];
  for (const e of entries) {
    if (e.manager === manager && e.operation === 'Apply' && e.subresource === options.subresource) continue;
    for (const p of pathsOf(e)) {
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
  for (const e of others) for (const p of appliedPaths) pathsOf(e).delete(p);
  const keptElsewhere = (prefix: string): boolean => appliedPaths.some((p) => p.startsWith(prefix)) || others.some((e) => [...pathsOf(e)].some((p) => p.startsWith(prefix)));
  const removed = new Set<string>();
  for (const p of pathsOf(mine)) {
    if (appliedSet.has(p) || others.some((e) => pathsOf(e).has(p))) continue;
    const path = p.split(SEP);
    const item = itemPrefix(path);
    const target = item && !keptElsewhere(item.join(SEP) + SEP) ? item : path;
    const key = target.join(SEP);
    if (removed.has(key)) continue;
    removed.add(key);
    removeAt(next, target);
  }
  paths.set(mine, appliedSet);
  mine.time = nowIso();
  // apply changes ownership in several places at once: every entry is written anew
  for (const e of entries) {
    e.fields = toFieldsV1([...pathsOf(e)].map((p) => p.split(SEP)));
    touch(e);
  }
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
