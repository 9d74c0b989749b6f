import { S3Errors } from './errors.js';
import { maxKeys, noContent, ok, ownedBucket, type S3FakeState, type S3Request, type S3Response } from './request.js';
import { allVersions, currentObjects, deleteObject, putObject, type BucketState, type ObjectVersion } from './store.js';
import { children, isParsedXml, parseXmlBody, text, xmlDocument, type XmlElement } from './xml.js';

const STANDARD = 'STANDARD';

/** Request headers S3 keeps with an object and answers with it. */
const KEPT_HEADERS = ['content-type', 'cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires'];
const CHECKSUM_HEADERS = ['x-amz-checksum-crc32', 'x-amz-checksum-crc32c', 'x-amz-checksum-crc64nvme', 'x-amz-checksum-sha1', 'x-amz-checksum-sha256'];

/** The bucket's default encryption algorithm (AES256, aws:kms), which S3 applies to every new object. */
function defaultEncryptionOf(bucket: BucketState): string | undefined {
  const rules = bucket.encryption?.['Rule'];
  const rule = Array.isArray(rules) ? rules[0] : rules;
  const byDefault = isParsedXml(rule) ? rule['ApplyServerSideEncryptionByDefault'] : undefined;
  const algorithm = isParsedXml(byDefault) ? byDefault['SSEAlgorithm'] : undefined;
  return typeof algorithm === 'string' ? algorithm : undefined;
}

/** What S3 keeps of a PutObject's (or CreateMultipartUpload's) headers: content headers, user metadata, checksums, encryption. */
export function keptHeaders(request: S3Request, bucket: BucketState): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, raw] of Object.entries(request.headers)) {
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    if (value === undefined) continue;
    if (KEPT_HEADERS.includes(name) || name.startsWith('x-amz-meta-')) kept[name] = value;
  }
  // aws-chunked is how the body travelled, not how it is stored.
  const encoding = (kept['content-encoding'] ?? '').split(',').map((e) => e.trim()).filter((e) => e && e !== 'aws-chunked');
  if (encoding.length > 0) kept['content-encoding'] = encoding.join(',');
  else delete kept['content-encoding'];
  for (const name of CHECKSUM_HEADERS) {
    const raw = request.headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw) ?? request.trailers[name];
    if (value !== undefined) kept[name] = value;
  }
  const encryption = defaultEncryptionOf(bucket);
  if (encryption) kept['x-amz-server-side-encryption'] = encryption;
  return kept;
}

/** PutObject: the bytes and the headers S3 keeps; CopyObject (x-amz-copy-source) is not served. */
export function putObjectHandler(state: S3FakeState, request: S3Request): S3Response {
  if (request.headers['x-amz-copy-source'] !== undefined) throw S3Errors.notImplemented();
  const bucket = ownedBucket(state, request);
  const kept = keptHeaders(request, bucket);
  const version = putObject(state.bodies, bucket, request.key ?? '', request.body, kept);
  const headers: Record<string, string> = { etag: version.etag };
  if (bucket.versioning) headers['x-amz-version-id'] = version.versionId;
  for (const [name, value] of Object.entries(kept)) if (name.startsWith('x-amz-checksum-') || name === 'x-amz-server-side-encryption') headers[name] = value;
  return ok(undefined, headers);
}

export function deleteObjectHandler(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const outcome = deleteObject(state.bodies, bucket, request.key ?? '', request.query.get('versionId') ?? undefined);
  const headers: Record<string, string> = {};
  if (outcome.versionId !== undefined) headers['x-amz-version-id'] = outcome.versionId;
  if (outcome.deleteMarker) headers['x-amz-delete-marker'] = 'true';
  return noContent(headers);
}

/** DeleteObjects (POST ?delete): up to 1,000 keys, each deleted as DeleteObject would; Quiet omits successes. */
export function deleteObjectsHandler(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const document = parseXmlBody(request.body.toString('utf8'), 'Delete');
  const objects = children(document, 'Object');
  if (objects.length === 0 || objects.length > 1000) throw S3Errors.malformedXml();
  const quiet = text(document, 'Quiet') === 'true';
  const results: XmlElement[] = [];
  for (const object of objects) {
    const key = text(object, 'Key');
    if (key === undefined) throw S3Errors.malformedXml();
    const requestedVersion = text(object, 'VersionId');
    const outcome = deleteObject(state.bodies, bucket, key, requestedVersion);
    if (quiet) continue;
    const deleted: XmlElement[] = [['Key', key]];
    if (requestedVersion !== undefined) deleted.push(['VersionId', requestedVersion]);
    if (outcome.deleteMarker) deleted.push(['DeleteMarker', true]);
    if (outcome.deleteMarker && outcome.versionId !== undefined) deleted.push(['DeleteMarkerVersionId', outcome.versionId]);
    results.push(['Deleted', deleted]);
  }
  return ok(xmlDocument('DeleteResult', results));
}

function objectEntry(version: ObjectVersion, encode: (text: string) => string): XmlElement[] {
  return [
    ['Key', encode(version.key)],
    ['LastModified', version.lastModified.toISOString()],
    ['ETag', version.etag],
    ['Size', version.size],
    ['StorageClass', STANDARD],
  ];
}

/** `encoding-type=url` asks for keys and prefixes URL-encoded (the AWS CLI always asks). */
function encoderOf(query: URLSearchParams): (text: string) => string {
  const encodingType = query.get('encoding-type');
  if (encodingType !== null && encodingType !== 'url') throw S3Errors.invalidArgument('Invalid Encoding Method specified in Request', 'encoding-type', encodingType);
  return encodingType === 'url' ? encodeURIComponent : (text) => text;
}

interface ListingPage {
  contents: ObjectVersion[];
  prefixes: string[];
  truncated: boolean;
  /** The last key or common prefix on the page. */
  last: string;
}

/** Current objects after `after`, under `prefix`, rolled up at `delimiter`, at most `limit` entries. */
function listCurrent(bucket: BucketState, prefix: string, delimiter: string, after: string, limit: number): ListingPage {
  const contents: ObjectVersion[] = [];
  const prefixes: string[] = [];
  let last = '';
  let truncated = false;
  for (const object of currentObjects(bucket)) {
    if (!object.key.startsWith(prefix) || object.key <= after) continue;
    // A continuation token or marker that names a common prefix skips the keys under it.
    if (after.endsWith(delimiter) && delimiter && object.key.startsWith(after)) continue;
    const cut = delimiter ? object.key.indexOf(delimiter, prefix.length) : -1;
    const commonPrefix = cut >= 0 ? object.key.slice(0, cut + delimiter.length) : undefined;
    if (commonPrefix !== undefined && prefixes.includes(commonPrefix)) continue;
    if (contents.length + prefixes.length >= limit) {
      truncated = true;
      break;
    }
    if (commonPrefix !== undefined) prefixes.push(commonPrefix);
    else contents.push(object);
    last = commonPrefix ?? object.key;
  }
  return { contents, prefixes, truncated, last };
}

/** ListObjectsV2 (GET ?list-type=2): prefix, delimiter, start-after, continuation tokens, encoding-type. */
export function listObjectsV2(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const { query } = request;
  const encode = encoderOf(query);
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const limit = maxKeys(query);
  const token = query.get('continuation-token');
  const after = token !== null ? Buffer.from(token, 'base64url').toString('utf8') : (query.get('start-after') ?? '');
  const page = listCurrent(bucket, prefix, delimiter, after, limit);
  const startAfter = query.get('start-after');
  return ok(
    xmlDocument('ListBucketResult', [
      ['Name', bucket.name],
      ['Prefix', encode(prefix)],
      ['Delimiter', delimiter ? encode(delimiter) : undefined],
      ['MaxKeys', limit],
      ['EncodingType', query.get('encoding-type') ?? undefined],
      ['KeyCount', page.contents.length + page.prefixes.length],
      ['IsTruncated', page.truncated],
      ['ContinuationToken', token ?? undefined],
      ['NextContinuationToken', page.truncated ? Buffer.from(page.last, 'utf8').toString('base64url') : undefined],
      ['StartAfter', startAfter === null ? undefined : encode(startAfter)],
      ...page.contents.map((object): XmlElement => ['Contents', objectEntry(object, encode)]),
      ...page.prefixes.map((p): XmlElement => ['CommonPrefixes', [['Prefix', encode(p)]]]),
    ]),
  );
}

/** ListObjects, version 1 (GET on the bucket): marker, prefix, delimiter, encoding-type. */
export function listObjectsV1(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const { query } = request;
  const encode = encoderOf(query);
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const marker = query.get('marker') ?? '';
  const limit = maxKeys(query);
  const page = listCurrent(bucket, prefix, delimiter, marker, limit);
  return ok(
    xmlDocument('ListBucketResult', [
      ['Name', bucket.name],
      ['Prefix', encode(prefix)],
      ['Marker', encode(marker)],
      // S3 gives NextMarker only with a delimiter; without one the client goes on from the last key.
      ['NextMarker', page.truncated && delimiter ? encode(page.last) : undefined],
      ['MaxKeys', limit],
      ['Delimiter', delimiter ? encode(delimiter) : undefined],
      ['EncodingType', query.get('encoding-type') ?? undefined],
      ['IsTruncated', page.truncated],
      ...page.contents.map((object): XmlElement => ['Contents', objectEntry(object, encode)]),
      ...page.prefixes.map((p): XmlElement => ['CommonPrefixes', [['Prefix', encode(p)]]]),
    ]),
  );
}

/**
 * ListObjectVersions (GET ?versions): every version and delete marker, keys ascending and newest
 * first within a key, paginated by key-marker and version-id-marker.
 */
export function listObjectVersions(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const { query } = request;
  const encode = encoderOf(query);
  const prefix = query.get('prefix') ?? '';
  const keyMarker = query.get('key-marker') ?? '';
  const versionIdMarker = query.get('version-id-marker') ?? '';
  const limit = maxKeys(query);
  let versions = allVersions(bucket).filter((v) => v.key.startsWith(prefix));
  if (keyMarker) {
    const markerIndex = versionIdMarker ? versions.findIndex((v) => v.key === keyMarker && v.versionId === versionIdMarker) : -1;
    versions = markerIndex >= 0 ? versions.slice(markerIndex + 1) : versions.filter((v) => v.key > keyMarker);
  }
  const page = versions.slice(0, limit);
  const truncated = versions.length > page.length;
  const lastEntry = page.at(-1);
  const entries: XmlElement[] = page.map((v) => {
    const isLatest = bucket.objects.get(v.key)?.[0] === v;
    const common: XmlElement[] = [
      ['Key', encode(v.key)],
      ['VersionId', v.versionId],
      ['IsLatest', isLatest],
      ['LastModified', v.lastModified.toISOString()],
    ];
    if (v.deleteMarker) return ['DeleteMarker', common];
    return ['Version', [...common, ['ETag', v.etag], ['Size', v.size], ['StorageClass', STANDARD]]];
  });
  return ok(
    xmlDocument('ListVersionsResult', [
      ['Name', bucket.name],
      ['Prefix', encode(prefix)],
      ['KeyMarker', encode(keyMarker)],
      ['VersionIdMarker', versionIdMarker],
      ['MaxKeys', limit],
      ['EncodingType', query.get('encoding-type') ?? undefined],
      ['IsTruncated', truncated],
      ['NextKeyMarker', truncated && lastEntry ? encode(lastEntry.key) : undefined],
      ['NextVersionIdMarker', truncated ? lastEntry?.versionId : undefined],
      ...entries,
    ]),
  );
}
