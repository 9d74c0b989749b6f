/** A webhook's JSONPatch applied without a deep copy of the object. */
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';

/**
 * Applies `ops` (RFC 6902) to a copy of `document` that shares every part the patch does not touch:
 * only the objects and arrays on the way to each changed location are copied. `document` is left
 * as it was; the result must be treated as sharing its untouched parts with it. Throws as
 * fast-json-patch does (with validation) for an invalid operation or a failed `test`.
 */
export function applyJsonPatchSharing<T extends object>(document: T, ops: Operation[]): T {
  if (!Array.isArray(ops)) throw new fastJsonPatch.JsonPatchError('Patch sequence must be an array', 'SEQUENCE_NOT_AN_ARRAY');
  let root = shallowCopy(document);
  const copies = new Set<unknown>([root]);
  // Op by op: an earlier move or add may put an uncopied part of the original on a later op's way.
  ops.forEach((op, index) => {
    if (op.op !== 'test' && op.op !== '_get') {
      copyOnTheWayTo(root, op.path, copies);
      if (op.op === 'move') copyOnTheWayTo(root, op.from, copies);
    }
    root = fastJsonPatch.applyOperation(root, op, true, true, true, index).newDocument;
  });
  return root;
}

function shallowCopy<T>(value: T): T {
  return (Array.isArray(value) ? [...(value as unknown[])] : { ...value }) as T;
}

/** Replaces each object or array above the pointer's target (not the target itself) with a shallow copy, once. */
function copyOnTheWayTo(root: object, pointer: unknown, copies: Set<unknown>): void {
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) return;
  const tokens = pointer.slice(1).split('/');
  let node = root as Record<string, unknown>;
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i]!.replace(/~1/g, '/').replace(/~0/g, '~');
    // Never through the prototype: the patch itself then fails validation.
    if (token === '__proto__' || !Object.hasOwn(node, token)) return;
    const child = node[token];
    if (child === null || typeof child !== 'object') return;
    if (copies.has(child)) {
      node = child as Record<string, unknown>;
      continue;
    }
    const copy = shallowCopy(child);
    node[token] = copy;
    copies.add(copy);
    node = copy as Record<string, unknown>;
  }
}
