import parseRange from 'range-parser';
import { S3Error, S3Errors } from './errors.js';
import { ownedBucket, type S3FakeState, type S3Request, type S3Response } from './request.js';
import type { BucketState, ObjectVersion } from './store.js';

// GetObject and HeadObject: a version's bytes and the headers S3 kept with it, with byte ranges,
// conditional requests, response-* overrides and (when asked for) the stored flexible checksum.

/** Query parameters of GetObject that override a response header. */
const RESPONSE_OVERRIDES: Record<string, string> = {
  'response-cache-control': 'cache-control',
  'response-content-disposition': 'content-disposition',
  'response-content-encoding': 'content-encoding',
  'response-content-language': 'content-language',
  'response-content-type': 'content-type',
  'response-expires': 'expires',
};

const header = (request: S3Request, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The version a read names: the latest (NoSuchKey when it is a delete marker) or `versionId`. */
function versionToRead(bucket: BucketState, request: S3Request): ObjectVersion {
  const key = request.key ?? '';
  const versions = bucket.objects.get(key) ?? [];
  const versionId = request.query.get('versionId');
  if (versionId !== null) {
    const version = versions.find((v) => v.versionId === versionId);
    if (!version) throw S3Errors.noSuchVersion(key, versionId);
    if (version.deleteMarker) {
      throw new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.', { Method: request.method, ResourceType: 'DeleteMarker' }, deleteMarkerHeaders(version));
    }
    return version;
  }
  const latest = versions[0];
  if (!latest) throw S3Errors.noSuchKey(key);
  if (latest.deleteMarker) throw new S3Error('NoSuchKey', 404, 'The specified key does not exist.', { Key: key }, deleteMarkerHeaders(latest));
  return latest;
}

function deleteMarkerHeaders(marker: ObjectVersion): Record<string, string> {
  return { 'x-amz-delete-marker': 'true', 'x-amz-version-id': marker.versionId, 'last-modified': marker.lastModified.toUTCString() };
}

/** HTTP dates have whole seconds. */
const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

function etagMatches(condition: string, etag: string): boolean {
  return condition.split(',').some((candidate) => {
    const value = candidate.trim();
    return value === '*' || value === etag || `"${value}"` === etag;
  });
}

/**
 * Conditional requests as S3 evaluates them (RFC 7232): If-Match / If-Unmodified-Since failing is 412
 * PreconditionFailed; If-None-Match / If-Modified-Since failing is 304 Not Modified.
 */
function notModified(request: S3Request, version: ObjectVersion): S3Response | undefined {
  const ifMatch = header(request, 'if-match');
  const ifUnmodifiedSince = header(request, 'if-unmodified-since');
  const ifNoneMatch = header(request, 'if-none-match');
  const ifModifiedSince = header(request, 'if-modified-since');
  const modified = seconds(version.lastModified);
  if (ifMatch !== undefined ? !etagMatches(ifMatch, version.etag) : ifUnmodifiedSince !== undefined && modified > seconds(new Date(ifUnmodifiedSince))) {
    throw new S3Error('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold', { Condition: ifMatch !== undefined ? 'If-Match' : 'If-Unmodified-Since' });
  }
  const unchanged = ifNoneMatch !== undefined ? etagMatches(ifNoneMatch, version.etag) : ifModifiedSince !== undefined && modified <= seconds(new Date(ifModifiedSince));
  if (unchanged) return { status: 304, headers: { etag: version.etag, 'last-modified': version.lastModified.toUTCString() } };
  return undefined;
}

function objectHeaders(bucket: BucketState, version: ObjectVersion, request: S3Request): Record<string, string> {
  const stored = version.headers ?? {};
  const headers: Record<string, string> = {
    'content-type': 'binary/octet-stream',
    'last-modified': version.lastModified.toUTCString(),
    etag: version.etag,
    'accept-ranges': 'bytes',
  };
  for (const [name, value] of Object.entries(stored)) {
    // Checksums only when asked for (x-amz-checksum-mode: ENABLED), as S3 answers.
    if (!name.startsWith('x-amz-checksum-')) headers[name] = value;
  }
  if (bucket.versioning !== undefined) headers['x-amz-version-id'] = version.versionId;
  if (header(request, 'x-amz-checksum-mode') === 'ENABLED') {
    for (const [name, value] of Object.entries(stored)) if (name.startsWith('x-amz-checksum-')) headers[name] = value;
  }
  for (const [parameter, name] of Object.entries(RESPONSE_OVERRIDES)) {
    const value = request.query.get(parameter);
    if (value !== null) headers[name] = value;
  }
  return headers;
}

/** The byte range asked for, or undefined for the whole object (no Range, a malformed one, or several). */
function rangeOf(request: S3Request, size: number): { start: number; end: number } | undefined {
  const range = header(request, 'range');
  if (range === undefined) return undefined;
  const ranges = parseRange(size, range);
  if (ranges === -1) throw new S3Error('InvalidRange', 416, 'The requested range is not satisfiable', { RangeRequested: range, ActualObjectSize: String(size) }, { 'content-range': `bytes */${size}` });
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  const [only] = ranges;
  return only ? { start: only.start, end: only.end } : undefined;
}

function readObject(state: S3FakeState, request: S3Request, withBody: boolean): S3Response {
  const bucket = ownedBucket(state, request);
  const version = versionToRead(bucket, request);
  const unchanged = notModified(request, version);
  if (unchanged) return unchanged;
  const headers = objectHeaders(bucket, version, request);
  const range = rangeOf(request, version.size);
  if (range) {
    for (const name of Object.keys(headers)) if (name.startsWith('x-amz-checksum-')) delete headers[name];
    headers['content-range'] = `bytes ${range.start}-${range.end}/${version.size}`;
  }
  const length = range ? range.end - range.start + 1 : version.size;
  headers['content-length'] = String(length);
  const status = range ? 206 : 200;
  if (!withBody) return { status, headers };
  const body = version.bodyId === undefined ? undefined : state.bodies.read(version.bodyId);
  if (body === undefined) throw new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.');
  return { status, headers, payload: range ? body.subarray(range.start, range.end + 1) : body };
}

/** GetObject: the bytes of the latest version, or of `versionId`, whole or one byte range. */
export function getObjectHandler(state: S3FakeState, request: S3Request): S3Response {
  return readObject(state, request, true);
}

/** HeadObject: GetObject's status and headers without the bytes (errors carry no body). */
export function headObjectHandler(state: S3FakeState, request: S3Request): S3Response {
  return readObject(state, request, false);
}
