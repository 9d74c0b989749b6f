import { S3Errors } from './errors.js';
import { maxKeys, noContent, ok, ownedBucket, type S3FakeState, type S3Request, type S3Response } from './request.js';
import { allVersions, currentObjects, deleteObject, putObject, type ObjectVersion } from './store.js';
import { children, parseXmlBody, text, xmlDocument, type XmlElement } from './xml.js';

const STANDARD = 'STANDARD';

export function putObjectHandler(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const version = putObject(bucket, request.key ?? '', request.body);
  const headers: Record<string, string> = { etag: version.etag };
  if (bucket.versioning) headers['x-amz-version-id'] = version.versionId;
  return ok(undefined, headers);
}

export function deleteObjectHandler(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const outcome = deleteObject(bucket, request.key ?? '', request.query.get('versionId') ?? undefined);
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
    const outcome = deleteObject(bucket, key, requestedVersion);
    if (quiet) continue;
    const deleted: XmlElement[] = [['Key', key]];
    if (requestedVersion !== undefined) deleted.push(['VersionId', requestedVersion]);
    if (outcome.deleteMarker) deleted.push(['DeleteMarker', true]);
    if (outcome.deleteMarker && outcome.versionId !== undefined) deleted.push(['DeleteMarkerVersionId', outcome.versionId]);
    results.push(['Deleted', deleted]);
  }
  return ok(xmlDocument('DeleteResult', results));
}

function objectEntry(version: ObjectVersion): XmlElement[] {
  return [
    ['Key', version.key],
    ['LastModified', version.lastModified.toISOString()],
    ['ETag', version.etag],
    ['Size', version.size],
    ['StorageClass', STANDARD],
  ];
}

/** ListObjectsV2 (GET ?list-type=2): prefix, delimiter, start-after and continuation tokens. */
export function listObjectsV2(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const { query } = request;
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const limit = maxKeys(query);
  const token = query.get('continuation-token');
  const after = token !== null ? Buffer.from(token, 'base64url').toString('utf8') : (query.get('start-after') ?? '');
  const contents: XmlElement[] = [];
  const prefixes: string[] = [];
  let last = '';
  let truncated = false;
  for (const object of currentObjects(bucket)) {
    if (!object.key.startsWith(prefix) || object.key <= after) continue;
    // A continuation token that names a common prefix skips the keys under it.
    if (after.endsWith(delimiter) && delimiter && object.key.startsWith(after)) continue;
    const cut = delimiter ? object.key.indexOf(delimiter, prefix.length) : -1;
    const commonPrefix = cut >= 0 ? object.key.slice(0, cut + delimiter.length) : undefined;
    if (commonPrefix !== undefined && prefixes.includes(commonPrefix)) continue;
    if (contents.length + prefixes.length >= limit) {
      truncated = true;
      break;
    }
    if (commonPrefix !== undefined) prefixes.push(commonPrefix);
    else contents.push(['Contents', objectEntry(object)]);
    last = commonPrefix ?? object.key;
  }
  return ok(
    xmlDocument('ListBucketResult', [
      ['Name', bucket.name],
      ['Prefix', prefix],
      ['Delimiter', delimiter || undefined],
      ['MaxKeys', limit],
      ['KeyCount', contents.length + prefixes.length],
      ['IsTruncated', truncated],
      ['ContinuationToken', token ?? undefined],
      ['NextContinuationToken', truncated ? Buffer.from(last, 'utf8').toString('base64url') : undefined],
      ['StartAfter', query.get('start-after') ?? undefined],
      ...contents,
      ...prefixes.map((p): XmlElement => ['CommonPrefixes', [['Prefix', p]]]),
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
      ['Key', v.key],
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
      ['Prefix', prefix],
      ['KeyMarker', keyMarker],
      ['VersionIdMarker', versionIdMarker],
      ['MaxKeys', limit],
      ['IsTruncated', truncated],
      ['NextKeyMarker', truncated ? lastEntry?.key : undefined],
      ['NextVersionIdMarker', truncated ? lastEntry?.versionId : undefined],
      ...entries,
    ]),
  );
}
