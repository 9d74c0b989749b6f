/**
 * Readers for objects that may arrive as untrusted JSON (the webhook) or typed
 * (the engine): every policy below reads through them, so the engine and the
 * webhook decide from the same fields the same way.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path`, or undefined when any step is missing or not an object. */
export function field(object: unknown, ...path: string[]): unknown {
  let node = object;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

/** A non-empty string at `path`, else undefined. */
export function stringField(object: unknown, ...path: string[]): string | undefined {
  const value = field(object, ...path);
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
