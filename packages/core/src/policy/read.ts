/**
 * Readers for objects that may arrive as untrusted JSON (the webhook) or typed
 * (the engine): every policy below reads through them, so the engine and the
 * webhook decide from the same fields the same way.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value under `key` of an object; undefined when `node` is not one or has no such own key. */
function step(node: unknown, key: string): unknown {
  return isPlainObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
}

/**
 * The value at the path `a`, `b`, ... (up to five keys), or undefined when any step is missing or
 * not an object. Fixed parameters rather than a rest array: the assigner reads a handful of fields
 * of every object of the cluster in each full pass, and a rest array is garbage per call. The
 * overloads take keys that are strings, never undefined: an undefined key would end the path early.
 */
export function field(object: unknown, a: string): unknown;
export function field(object: unknown, a: string, b: string): unknown;
export function field(object: unknown, a: string, b: string, c: string): unknown;
export function field(object: unknown, a: string, b: string, c: string, d: string): unknown;
export function field(object: unknown, a: string, b: string, c: string, d: string, e: string): unknown;
export function field(object: unknown, a: string, b?: string, c?: string, d?: string, e?: string): unknown {
  return valueAt(object, a, b, c, d, e);
}

function valueAt(object: unknown, a: string, b: string | undefined, c: string | undefined, d: string | undefined, e: string | undefined): unknown {
  let node = step(object, a);
  if (b === undefined || node === undefined) return node;
  node = step(node, b);
  if (c === undefined || node === undefined) return node;
  node = step(node, c);
  if (d === undefined || node === undefined) return node;
  node = step(node, d);
  if (e === undefined || node === undefined) return node;
  return step(node, e);
}

/** The value at `path` (any length), or undefined when any step is missing or not an object. */
export function fieldAt(object: unknown, path: readonly string[]): unknown {
  let node = object;
  for (const key of path) {
    node = step(node, key);
    if (node === undefined) return undefined;
  }
  return node;
}

/** A non-empty string at the path `a`, `b`, ... (as `field` reads it), else undefined. */
export function stringField(object: unknown, a: string): string | undefined;
export function stringField(object: unknown, a: string, b: string): string | undefined;
export function stringField(object: unknown, a: string, b: string, c: string): string | undefined;
export function stringField(object: unknown, a: string, b: string, c: string, d: string): string | undefined;
export function stringField(object: unknown, a: string, b: string, c: string, d: string, e: string): string | undefined;
export function stringField(object: unknown, a: string, b?: string, c?: string, d?: string, e?: string): string | undefined {
  const value = valueAt(object, a, b, c, d, e);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A non-empty annotation value. */
export function annotation(object: unknown, key: string): string | undefined {
  return stringField(object, 'metadata', 'annotations', key);
}

/** True when the annotation is exactly "true". */
export function annotationIsTrue(object: unknown, key: string): boolean {
  return annotation(object, key) === 'true';
}
