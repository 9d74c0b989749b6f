import type { KubeObject } from './types.js';

/** Narrow an unknown JSON value to a plain object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object's metadata, created when absent. */
export function metadataOf(obj: KubeObject): Record<string, unknown> {
  let meta = obj['metadata'];
  if (!isObject(meta)) {
    meta = {};
    obj['metadata'] = meta;
  }
  return meta as Record<string, unknown>;
}

export function stringField(obj: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = obj?.[key];
  return typeof v === 'string' ? v : undefined;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Deep structural equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}

let isoSecond = NaN;
let isoText = '';

/** The time now, to the second, as Kubernetes writes timestamps (every write stamps one or more). */
export function nowIso(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
  }
  return isoText;
}
