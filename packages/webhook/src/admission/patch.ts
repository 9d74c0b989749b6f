import type { JsonPatchOperation } from './types.js';

/** Escapes one reference token for a JSON Pointer (RFC 6901): `~` first, then `/`. */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The JSON Pointer for a path of keys, such as `['metadata', 'annotations', 'k8or.io/protect']`. */
export function pointer(path: readonly string[]): string {
  return path.map((token) => `/${escapePointerToken(token)}`).join('');
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Collects `add` operations against a working copy of the object, so each
 * operation sees the ones before it: a missing parent is added once, as an
 * object holding the value, and later values go inside it. The copy is made
 * along the changed paths only (the original is never modified), and keys are
 * set with own-property semantics, so `__proto__` in a path cannot reach a prototype.
 */
export class PatchBuilder {
  readonly operations: JsonPatchOperation[] = [];
  readonly object: Record<string, unknown>;
  /** Nodes of `object` that are already private copies (safe to write). */
  private readonly copied = new WeakSet<object>();

  constructor(original: Record<string, unknown>) {
    this.object = { ...original };
    this.copied.add(this.object);
  }

  /** The value at `path`, or undefined when any step is missing or not an object. */
  get(path: readonly string[]): unknown {
    let node: unknown = this.object;
    for (const key of path) {
      if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
      node = node[key];
    }
    return node;
  }

  /**
   * Adds `value` (a JSON value) at `path` unless something is there already.
   * Returns false (and adds nothing) when a parent exists but is not an object:
   * the schema rejects such an object anyway, and a patch must never replace user data.
   */
  addIfAbsent(path: readonly string[], value: string | number | boolean): boolean {
    let node: Record<string, unknown> = this.object;
    for (let i = 0; i < path.length; i++) {
      const key = path[i] as string;
      if (!Object.hasOwn(node, key) || node[key] === undefined || node[key] === null) {
        // `add` on an existing member replaces it (RFC 6902 4.1), which is what a null asks for.
        const rest = path.slice(i + 1);
        const nested = (): unknown => rest.reduceRight<unknown>((inner, k) => defineOwn({}, k, inner), value);
        this.operations.push({ op: 'add', path: pointer(path.slice(0, i + 1)), value: nested() });
        const added = nested();
        defineOwn(node, key, added);
        if (isPlainObject(added)) this.markCopied(added);
        return true;
      }
      if (i === path.length - 1) return false;
      const next = node[key];
      if (!isPlainObject(next)) return false;
      node = this.writable(node, key, next);
    }
    return false;
  }

  /** The child `key` of `parent`, replaced by a shallow copy the first time it is written through. */
  private writable(parent: Record<string, unknown>, key: string, child: Record<string, unknown>): Record<string, unknown> {
    if (this.copied.has(child)) return child;
    const copy = { ...child };
    this.copied.add(copy);
    defineOwn(parent, key, copy);
    return copy;
  }

  private markCopied(node: Record<string, unknown>): void {
    this.copied.add(node);
    for (const child of Object.values(node)) if (isPlainObject(child)) this.markCopied(child);
  }
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}
