/** JSON patch (RFC 6902), errors answered as the real server does (422). */
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { ApiError, badRequest } from '../../status.js';
import { clone, isObject } from '../../util.js';

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

export function applyJsonPatch(target: Record<string, unknown>, patch: unknown): Record<string, unknown> {
  if (!Array.isArray(patch) || !patch.every((op) => isObject(op) && typeof op['op'] === 'string' && OPS.has(op['op']) && typeof op['path'] === 'string')) {
    throw badRequest('the server rejected our request due to an error in our request: json patch must be an array of operations with op and path');
  }
  try {
    const result = fastJsonPatch.applyPatch(clone(target), patch as Operation[], true, true).newDocument;
    if (!isObject(result)) throw new Error('patch replaced the whole object with a non-object');
    return result;
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'patch failed';
    throw new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${message}`);
  }
}
