/** The objects resource: insert (a new generation), get, list (with versions), delete (one generation or the live one). */
import { createHash } from 'node:crypto';
import { crc32cBase64 } from './crc32c.js';
import { GcsErrors } from './errors.js';
import { booleanParam } from './params.js';
import { nextGeneration, type GcsState, type Json, type StoredBucket, type StoredObject } from './state.js';

const DEFAULT_PAGE_SIZE = 1000;

const isLive = (object: StoredObject): boolean => object.timeDeleted === undefined;
const versioningEnabled = (bucket: StoredBucket): boolean => (bucket.resource['versioning'] as { enabled?: boolean } | undefined)?.enabled === true;

/** The object resource as GCS answers it. */
export function objectResource(bucketName: string, object: StoredObject, endpoint: string): Json {
  const path = `b/${encodeURIComponent(bucketName)}/o/${encodeURIComponent(object.name)}`;
  return {
    kind: 'storage#object',
    id: `${bucketName}/${object.name}/${object.generation}`,
    selfLink: `${endpoint}/storage/v1/${path}`,
    mediaLink: `${endpoint}/download/storage/v1/${path}?generation=${object.generation}&alt=media`,
    name: object.name,
    bucket: bucketName,
    generation: object.generation,
    metageneration: '1',
    contentType: object.contentType,
    storageClass: object.storageClass,
    size: String(Buffer.from(object.data, 'base64').length),
    md5Hash: object.md5Hash,
    crc32c: object.crc32c,
    etag: Buffer.from(`${object.name}:${object.generation}`).toString('base64'),
    timeCreated: object.timeCreated,
    updated: object.timeCreated,
    timeStorageClassUpdated: object.timeCreated,
    ...(object.timeDeleted ? { timeDeleted: object.timeDeleted } : {}),
    ...(object.metadata ? { metadata: object.metadata } : {}),
  };
}

function liveObject(bucket: StoredBucket, name: string): StoredObject | undefined {
  return bucket.objects.find((object) => object.name === name && isLive(object));
}

/** ifGenerationMatch (0: must not exist) and ifGenerationNotMatch against the live generation. */
function checkGeneration(live: StoredObject | undefined, query: URLSearchParams): void {
  const match = query.get('ifGenerationMatch');
  const notMatch = query.get('ifGenerationNotMatch');
  const current = live?.generation ?? '0';
  if (match !== null && match !== current) throw GcsErrors.preconditionFailed();
  if (notMatch !== null && notMatch === current) throw GcsErrors.preconditionFailed();
}

/**
 * objects.insert: a new live generation. The previous live generation becomes noncurrent when
 * versioning is on, and is gone otherwise.
 */
export function insertObject(state: GcsState, bucket: StoredBucket, name: string, data: Buffer, metadata: Json, query: URLSearchParams): StoredObject {
  if (!name) throw GcsErrors.required('Object name');
  const live = liveObject(bucket, name);
  checkGeneration(live, query);
  const now = new Date().toISOString();
  if (live) {
    if (versioningEnabled(bucket)) live.timeDeleted = now;
    else bucket.objects.splice(bucket.objects.indexOf(live), 1);
  }
  const object: StoredObject = {
    name,
    generation: nextGeneration(state),
    contentType: typeof metadata['contentType'] === 'string' ? metadata['contentType'] : 'application/octet-stream',
    storageClass: String(bucket.resource['storageClass'] ?? 'STANDARD'),
    data: data.toString('base64'),
    md5Hash: createHash('md5').update(data).digest('base64'),
    crc32c: crc32cBase64(data),
    timeCreated: now,
    ...(typeof metadata['metadata'] === 'object' && metadata['metadata'] !== null ? { metadata: metadata['metadata'] as Record<string, string> } : {}),
  };
  bucket.objects.push(object);
  return object;
}

/** objects.get: the live generation, or the one named by `generation`. */
export function getObject(bucketName: string, bucket: StoredBucket, name: string, query: URLSearchParams): StoredObject {
  const generation = query.get('generation');
  const object = generation ? bucket.objects.find((o) => o.name === name && o.generation === generation) : liveObject(bucket, name);
  if (!object) throw GcsErrors.objectNotFound(bucketName, name);
  return object;
}

/**
 * objects.delete: with `generation`, that generation for good; without, the live one (which becomes
 * noncurrent when versioning is on).
 */
export function deleteObject(bucketName: string, bucket: StoredBucket, name: string, query: URLSearchParams): void {
  const object = getObject(bucketName, bucket, name, query);
  checkGeneration(liveObject(bucket, name), query);
  if (query.get('generation') === null && versioningEnabled(bucket)) object.timeDeleted = new Date().toISOString();
  else bucket.objects.splice(bucket.objects.indexOf(object), 1);
}

/** objects.list: by name then generation; `versions=true` (any case) includes noncurrent generations; pages of `maxResults`. */
export function listObjects(bucketName: string, bucket: StoredBucket, query: URLSearchParams, endpoint: string): Json {
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const withVersions = booleanParam(query, 'versions');
  const pageSize = Math.min(Number(query.get('maxResults') ?? DEFAULT_PAGE_SIZE) || DEFAULT_PAGE_SIZE, DEFAULT_PAGE_SIZE);
  const after = query.get('pageToken') ? Buffer.from(query.get('pageToken') ?? '', 'base64url').toString('utf8') : undefined;
  const sortKey = (object: StoredObject): string => `${object.name}\u0000${object.generation.padStart(20, '0')}`;
  const prefixes = new Set<string>();
  const matching = bucket.objects
    .filter((object) => (withVersions || isLive(object)) && object.name.startsWith(prefix))
    .filter((object) => {
      if (!delimiter) return true;
      const rest = object.name.slice(prefix.length);
      const cut = rest.indexOf(delimiter);
      if (cut < 0) return true;
      prefixes.add(prefix + rest.slice(0, cut + delimiter.length));
      return false;
    })
    .sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1))
    .filter((object) => after === undefined || sortKey(object) > after);
  const page = matching.slice(0, pageSize);
  const last = page.at(-1);
  return {
    kind: 'storage#objects',
    ...(page.length ? { items: page.map((object) => objectResource(bucketName, object, endpoint)) } : {}),
    ...(prefixes.size && after === undefined ? { prefixes: [...prefixes].sort() } : {}),
    ...(matching.length > pageSize && last ? { nextPageToken: Buffer.from(sortKey(last), 'utf8').toString('base64url') } : {}),
  };
}
