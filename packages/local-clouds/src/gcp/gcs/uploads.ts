/** Upload bodies: multipart/related (metadata + media), and resumable sessions (chunks with Content-Range). */
import { randomBytes } from 'node:crypto';
import { GcsErrors } from './errors.js';
import type { Json } from './state.js';

/** Splits a multipart/related body into its JSON metadata part and its media part. */
export function parseMultipart(contentType: string, body: Buffer): { metadata: Json; media: Buffer; mediaType: string | undefined } {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) throw GcsErrors.invalid('Multipart upload without a boundary.');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: { headers: string; content: Buffer }[] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const afterDelimiter = start + delimiter.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, afterDelimiter);
    if (next < 0) break;
    const part = body.subarray(afterDelimiter + 2, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    const content = part.subarray(headerEnd + 4);
    const trimmed = content.subarray(content.length - 2).toString() === '\r\n' ? content.subarray(0, content.length - 2) : content;
    parts.push({ headers: part.subarray(0, headerEnd).toString('utf8'), content: trimmed });
    start = next;
  }
  const [metadataPart, mediaPart] = parts;
  if (!metadataPart || !mediaPart) throw GcsErrors.invalid('A multipart upload needs a metadata part and a media part.');
  const metadata: unknown = metadataPart.content.length ? JSON.parse(metadataPart.content.toString('utf8')) : {};
  const mediaType = /content-type:\s*([^\r\n]+)/i.exec(mediaPart.headers)?.[1]?.trim();
  return { metadata: typeof metadata === 'object' && metadata !== null ? (metadata as Json) : {}, media: mediaPart.content, mediaType };
}

/** One resumable upload: where it goes and the bytes received so far. */
export interface ResumableSession {
  bucket: string;
  name: string;
  metadata: Json;
  query: URLSearchParams;
  received: Buffer[];
  size: number;
}

export class ResumableSessions {
  readonly #sessions = new Map<string, ResumableSession>();

  start(bucket: string, name: string, metadata: Json, query: URLSearchParams): string {
    const id = randomBytes(16).toString('hex');
    this.#sessions.set(id, { bucket, name, metadata, query, received: [], size: 0 });
    return id;
  }

  /**
   * Adds one PUT's bytes. Returns the whole content once the declared total has arrived (the
   * session ends), else undefined (answer 308 with the Range received).
   */
  put(id: string, contentRange: string | undefined, chunk: Buffer): { session: ResumableSession; complete: Buffer | undefined } {
    const session = this.#sessions.get(id);
    if (!session) throw GcsErrors.objectNotFound(id, 'upload session');
    let total: number | undefined;
    if (contentRange === undefined) {
      total = session.size + chunk.length;
    } else {
      const match = /^bytes (\*|(\d+)-(\d+|\*))\/(\*|\d+)$/.exec(contentRange.trim());
      if (!match) throw GcsErrors.invalid(`Invalid Content-Range: ${contentRange}`);
      total = match[4] === '*' ? undefined : Number(match[4]);
      // `bytes N-*/*`: a single-request upload streams the rest of the object in this body.
      if (match[3] === '*' && total === undefined) total = Number(match[2]) + chunk.length;
      if (match[2] !== undefined) {
        const first = Number(match[2]);
        // A repeated chunk (the client did not see our answer) is skipped up to what we hold.
        const skip = session.size - first;
        if (skip < 0) throw GcsErrors.invalid(`Content-Range starts at ${first}, but ${session.size} bytes were received`);
        const fresh = chunk.subarray(Math.min(skip, chunk.length));
        session.received.push(fresh);
        session.size += fresh.length;
      }
    }
    if (total !== undefined && session.size >= total) {
      this.#sessions.delete(id);
      return { session, complete: Buffer.concat(session.received) };
    }
    return { session, complete: undefined };
  }
}
