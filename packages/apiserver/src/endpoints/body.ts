/** Request bodies: bounded reading and decoding of JSON and YAML. */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { decodeProtobufObject } from './protobuf.js';
import { ApiError, badRequest } from '../status.js';

/** The real server's limit for a request body. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * The deepest nesting a body may have. kube-apiserver's JSON decoder stops at 10,000 levels
 * ("exceeded max depth"); the recursive work done on an object here (cloning, pruning, schema
 * validation) overflows Node's stack well before that, so the sandbox stops sooner. Real objects
 * nest a few dozen levels at most.
 */
export const MAX_BODY_DEPTH = 1_000;

/** True when `value` nests deeper than `limit`; iterative, so the check itself cannot overflow. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

function withinDepth(value: unknown): unknown {
  if (nestsDeeperThan(value, MAX_BODY_DEPTH)) throw badRequest(`error decoding body: exceeded max depth of ${MAX_BODY_DEPTH}`);
  return value;
}

export function tooLarge(): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY_BYTES}`);
}

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) {
    req.resume();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) {
      req.resume();
      throw tooLarge();
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** The media type without parameters, lower-cased. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** Decode a JSON or YAML body (by content type; JSON is tried first when unspecified). */
export function decodeBody(body: Buffer, contentType: string | undefined): unknown {
  const type = mediaType(contentType);
  if (type === 'application/vnd.kubernetes.protobuf') return decodeProtobufObject(body);
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest('the body of the request was in an unknown format - accepted media types include: application/json, application/yaml');
  if (type.includes('protobuf') || type.includes('cbor')) {
    throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`);
  }
  const isYaml = type.endsWith('yaml');
  if (!isYaml) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      if (type === 'application/json' || type.endsWith('+json')) {
        throw badRequest(`error decoding JSON body: ${(err as Error).message}`);
      }
    }
    if (parsed !== undefined) return withinDepth(parsed);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw badRequest(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  return withinDepth(parsed);
}
