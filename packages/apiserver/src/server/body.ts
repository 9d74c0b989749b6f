/** Request bodies: bounded reading and decoding of JSON and YAML. */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { decodeProtobufObject } from './protobuf.js';
import { ApiError, badRequest } from '../status.js';

/** The real server's limit for a request body. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

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
    try {
      return JSON.parse(text);
    } catch (err) {
      if (type === 'application/json' || type.endsWith('+json')) {
        throw badRequest(`error decoding JSON body: ${(err as Error).message}`);
      }
    }
  }
  try {
    return parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw badRequest(`error converting YAML to JSON: ${(err as Error).message.split('\n')[0]}`);
  }
}
