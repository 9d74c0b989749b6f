/** Upload bodies: multipart/related (metadata + media), and resumable sessions (chunks with Content-Range). */
import { randomBytes } from 'node:crypto';
import { MIMEType } from 'whatwg-mimetype';
import { GcsErrors } from './errors.js';
import type { Json } from './state.js';

/**
 * The boundary of a multipart upload's Content-Type. The header is parsed as the WHATWG MIME type
 * standard does (the `content-type` package refuses the header the Google Cloud SDK sends: its
 * `boundary='====...=='` is not an RFC 7231 token). The SDK's HTTP layer writes the boundary with
 * Python's `%r`, in single quotes, and GCS takes them off; so does this.
 */
export function multipartBoundary(contentType: string): string {
  const parsed = MIMEType.parse(contentType);
  if (!parsed || parsed.type !== 'multipart') throw GcsErrors.invalid(`Invalid multipart upload Content-Type: ${contentType}`);
  const raw = parsed.parameters.get('boundary');
  const boundary = raw && raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'") ? raw.slice(1, -1) : raw;
  if (!boundary) throw GcsErrors.invalid('Multipart upload without a boundary.');
  return boundary;
}

const LF = 0x0a;
const CR = 0x0d;

/** Where the line that starts at `from` ends, past its CRLF or LF; -1 when no line end follows. */
function afterLineEnd(body: Buffer, from: number): number {
  const newline = body.indexOf(LF, from);
  return newline < 0 ? -1 : newline + 1;
}

/**
 * The parts of a multipart body (RFC 2046), each as its header text and its content. Lines may end
 * in CRLF, as the RFC says, or in a bare LF, as the Google Cloud SDK's HTTP layer (apitools, through
 * Python's email generator) writes them and GCS accepts. The npm multipart parsers (busboy,
 * @hapi/pez, @remix-run/multipart-parser) all require CRLF, so the split is done here.
 */
function splitMultipart(body: Buffer, boundary: string): { headers: string; content: Buffer }[] {
  const dashBoundary = Buffer.from(`--${boundary}`);
  // The first delimiter opens the body or a line of its own (anything before it is preamble).
  let at = body.subarray(0, dashBoundary.length).equals(dashBoundary) ? 0 : body.indexOf(Buffer.concat([Buffer.from('\n'), dashBoundary]));
  if (at > 0) at += 1;
  const parts: { headers: string; content: Buffer }[] = [];
  while (at >= 0) {
    const afterDelimiter = at + dashBoundary.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString('latin1') === '--') return parts;
    const partStart = afterLineEnd(body, afterDelimiter);
    if (partStart < 0) break;
    const next = body.indexOf(Buffer.concat([Buffer.from('\n'), dashBoundary]), partStart - 1);
    if (next < 0) break;
    // The line end before the next delimiter belongs to the delimiter, not to the content.
    const partEnd = next > partStart && body[next - 1] === CR ? next - 1 : next;
    const part = body.subarray(partStart, Math.max(partStart, partEnd));
    const blank = /\r?\n\r?\n/.exec(part.toString('latin1'));
    const headerEnd = part[0] === LF ? 0 : part[0] === CR && part[1] === LF ? 0 : blank?.index;
    if (headerEnd === undefined) throw GcsErrors.invalid('A multipart upload part has no blank line after its headers.');
    const contentStart = headerEnd === 0 ? (part[0] === CR ? 2 : 1) : headerEnd + (blank?.[0].length ?? 0);
    parts.push({ headers: part.subarray(0, headerEnd).toString('utf8'), content: part.subarray(contentStart) });
    at = next + 1;
  }
  throw GcsErrors.invalid('A multipart upload body does not end with its closing delimiter.');
}

/** Splits a multipart/related upload into its JSON metadata part and its media part. */
export function parseMultipart(contentType: string, body: Buffer): { metadata: Json; media: Buffer; mediaType: string | undefined } {
  const [metadataPart, mediaPart] = splitMultipart(body, multipartBoundary(contentType));
  if (!metadataPart || !mediaPart) throw GcsErrors.invalid('A multipart upload needs a metadata part and a media part.');
  let metadata: unknown = {};
  try {
    metadata = metadataPart.content.length ? JSON.parse(metadataPart.content.toString('utf8')) : {};
  } catch {
    throw GcsErrors.invalid('Invalid JSON payload received in the metadata part of a multipart upload.');
  }
  const mediaType = /^content-type:[ \t]*([^\r\n]+)/im.exec(mediaPart.headers)?.[1]?.trim();
  return { metadata: typeof metadata === 'object' && metadata !== null ? (metadata as Json) : {}, media: mediaPart.content, mediaType };
}

/** One resumable upload: where it goes, the bytes received so far, and the object once it is complete. */
export interface ResumableSession {
  bucket: string;
  name: string;
  metadata: Json;
  query: URLSearchParams;
  received: Buffer[];
  size: number;
  /** The object's generation once the upload completed; a later status check answers with it. */
  completedGeneration?: string;
}

/** What one PUT to a session URI leads to. */
export type ResumablePut =
  | { kind: 'incomplete'; session: ResumableSession }
  | { kind: 'complete'; session: ResumableSession; content: Buffer }
  | { kind: 'completed-before'; session: ResumableSession; generation: string };

/** `bytes FIRST-LAST/TOTAL`, `bytes FIRST-LAST/*`, `bytes * /TOTAL` (a status check), `bytes * /*`. */
const CONTENT_RANGE = /^bytes (?:\*|(\d+)-(\d+|\*))\/(\*|\d+)$/;

/**
 * Resumable upload sessions, as the JSON API documents them (cloud.google.com/storage/docs/performing-resumable-uploads):
 * the session URI takes PUTs of consecutive chunks, each with its Content-Range; an incomplete
 * upload answers 308 with the Range held, and the last chunk (the one that reaches the declared
 * total) creates the object. A PUT with no body and `Content-Range: bytes * /TOTAL` asks for the status.
 */
export class ResumableSessions {
  readonly #sessions = new Map<string, ResumableSession>();

  start(bucket: string, name: string, metadata: Json, query: URLSearchParams): string {
    const id = randomBytes(16).toString('hex');
    this.#sessions.set(id, { bucket, name, metadata, query, received: [], size: 0 });
    return id;
  }

  /** Ends a session (DELETE of its URI): GCS answers 499 to it, and 404 to anything after. */
  cancel(id: string): boolean {
    return this.#sessions.delete(id);
  }

  /** Records the object an upload created, so a later status check of the session answers with it. */
  completed(session: ResumableSession, generation: string): void {
    session.completedGeneration = generation;
    session.received = [];
  }

  /** Adds one PUT's bytes to the session. */
  put(id: string, contentRange: string | undefined, chunk: Buffer): ResumablePut {
    const session = this.#sessions.get(id);
    if (!session) throw GcsErrors.objectNotFound(id, 'upload session');
    if (session.completedGeneration !== undefined) return { kind: 'completed-before', session, generation: session.completedGeneration };
    let total: number | undefined;
    if (contentRange === undefined) {
      // No Content-Range: the body is the whole object.
      session.received = [chunk];
      session.size = chunk.length;
      total = chunk.length;
    } else {
      const match = CONTENT_RANGE.exec(contentRange.trim());
      if (!match) throw GcsErrors.invalid(`Invalid Content-Range: ${contentRange}`);
      const [, firstText, lastText, totalText] = match;
      total = totalText === '*' ? undefined : Number(totalText);
      if (firstText !== undefined) {
        const first = Number(firstText);
        // `bytes N-*/*`: a single-request upload streams the rest of the object in this body.
        if (lastText === '*' && total === undefined) total = first + chunk.length;
        if (lastText !== '*' && Number(lastText) - first + 1 !== chunk.length) {
          throw GcsErrors.invalid(`Content-Range ${contentRange} does not match the ${chunk.length} bytes sent`);
        }
        if (first > session.size) throw GcsErrors.invalid(`Content-Range starts at ${first}, but ${session.size} bytes were received`);
        // A repeated chunk (the client did not see our answer) is taken only past what we hold.
        const fresh = chunk.subarray(Math.min(session.size - first, chunk.length));
        session.received.push(fresh);
        session.size += fresh.length;
      } else if (chunk.length > 0) {
        throw GcsErrors.invalid(`Content-Range ${contentRange} names no bytes, but ${chunk.length} were sent`);
      }
    }
    if (total !== undefined && session.size >= total) return { kind: 'complete', session, content: Buffer.concat(session.received).subarray(0, total) };
    return { kind: 'incomplete', session };
  }
}
