import type { IncomingHttpHeaders } from 'node:http';

/** A request body as sent, and as S3 reads it: the payload, and the trailing headers of an aws-chunked body. */
export interface DecodedBody {
  payload: Buffer;
  /** Trailing headers (`x-amz-checksum-crc32: ...`), lower-case names; empty unless aws-chunked. */
  trailers: Record<string, string>;
}

/** Whether the body is aws-chunked (`Content-Encoding: aws-chunked`, or a STREAMING-* payload hash). */
export function isAwsChunked(headers: IncomingHttpHeaders): boolean {
  return (headers['content-encoding'] ?? '').includes('aws-chunked') || String(headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-');
}

/**
 * Decodes an aws-chunked body (`size;chunk-signature=...\r\ndata\r\n ... 0\r\ntrailer:value\r\n\r\n`).
 * Chunk signatures are not checked.
 */
export function decodeAwsChunked(raw: Buffer): DecodedBody {
  const parts: Buffer[] = [];
  const trailers: Record<string, string> = {};
  let offset = 0;
  while (offset < raw.length) {
    const lineEnd = raw.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = parseInt(raw.subarray(offset, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isFinite(size)) break;
    if (size === 0) {
      for (const line of raw.subarray(lineEnd + 2).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      break;
    }
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return { payload: Buffer.concat(parts), trailers };
}
