import { createHash, randomBytes } from 'node:crypto';
import type { ObjectBodies } from './bodies.js';
import type { ParsedXml } from './xml.js';

/** One version of one key: an object, or a delete marker. Unversioned writes use the version id "null". */
export interface ObjectVersion {
  key: string;
  versionId: string;
  deleteMarker: boolean;
  size: number;
  etag: string;
  lastModified: Date;
  /** Where the object's bytes are kept (see ObjectBodies); absent for delete markers. */
  bodyId?: string;
  /**
   * The headers S3 keeps with an object and answers on GetObject and HeadObject: Content-Type,
   * Cache-Control, Content-Disposition, Content-Encoding, Content-Language, Expires, x-amz-meta-*,
   * x-amz-checksum-*, x-amz-server-side-encryption. Lower-case names.
   */
  headers?: Record<string, string>;
}

/** One part of a multipart upload. */
export interface UploadedPart {
  etag: string;
  md5: Buffer;
  size: number;
  bodyId: string;
  lastModified: Date;
}

/** A multipart upload in progress: where it goes, the headers given when it began, its parts so far. */
export interface MultipartUpload {
  id: string;
  bucket: string;
  key: string;
  initiated: Date;
  headers: Record<string, string>;
  parts: Map<number, UploadedPart>;
}

export interface BucketTag {
  Key: string;
  Value: string;
}

export type VersioningStatus = 'Enabled' | 'Suspended';

export interface PublicAccessBlock {
  BlockPublicAcls: boolean;
  IgnorePublicAcls: boolean;
  BlockPublicPolicy: boolean;
  RestrictPublicBuckets: boolean;
}

/** One bucket and its control-plane configuration. Configurations are kept as parsed XML to round-trip exactly. */
export interface BucketState {
  name: string;
  /** Account that owns the bucket (see S3FakeOptions.accounts). */
  owner: string;
  region: string;
  created: Date;
  /** Undefined until versioning was first configured (GetBucketVersioning then has no Status). */
  versioning: VersioningStatus | undefined;
  /** Undefined when the bucket has no tag set (GetBucketTagging answers NoSuchTagSet). */
  tags: BucketTag[] | undefined;
  encryption: ParsedXml | undefined;
  publicAccessBlock: PublicAccessBlock | undefined;
  lifecycle: ParsedXml | undefined;
  /** Versions per key, newest first. */
  objects: Map<string, ObjectVersion[]>;
}

const SSE_S3_DEFAULT: ParsedXml = {
  Rule: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' }, BucketKeyEnabled: 'false' }],
};

/** The S3 defaults for new buckets since 2023: SSE-S3 encryption and all four Block Public Access settings on. */
export function newBucket(name: string, owner: string, region: string, defaultEncryption: boolean, tags?: BucketTag[]): BucketState {
  return {
    name,
    owner,
    region,
    created: new Date(),
    versioning: undefined,
    tags,
    encryption: defaultEncryption ? structuredClone(SSE_S3_DEFAULT) : undefined,
    publicAccessBlock: { BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true, RestrictPublicBuckets: true },
    lifecycle: undefined,
    objects: new Map(),
  };
}

function newVersionId(): string {
  return randomBytes(24).toString('base64url');
}

/** The id a new write gets: a fresh one with versioning enabled, else "null" (unversioned or suspended). */
function writeVersionId(bucket: BucketState): string {
  return bucket.versioning === 'Enabled' ? newVersionId() : 'null';
}

/**
 * Stores an object as S3 does: a new version when versioning is enabled, else replacing the "null"
 * version (whose bytes go). The ETag is the body's MD5 unless given (a multipart upload's).
 */
export function putObject(bodies: ObjectBodies, bucket: BucketState, key: string, body: Buffer, headers: Record<string, string> = {}, etag?: string): ObjectVersion {
  const version: ObjectVersion = {
    key,
    versionId: writeVersionId(bucket),
    deleteMarker: false,
    size: body.length,
    etag: etag ?? `"${createHash('md5').update(body).digest('hex')}"`,
    lastModified: new Date(),
    bodyId: bodies.write(body),
    headers,
  };
  addVersion(bodies, bucket, version);
  return version;
}

function addVersion(bodies: ObjectBodies, bucket: BucketState, version: ObjectVersion): void {
  const versions = bucket.objects.get(version.key) ?? [];
  for (const replaced of versions.filter((v) => v.versionId === version.versionId)) release(bodies, replaced);
  bucket.objects.set(version.key, [version, ...versions.filter((v) => v.versionId !== version.versionId)]);
}

function release(bodies: ObjectBodies, version: ObjectVersion): void {
  if (version.bodyId !== undefined) bodies.remove(version.bodyId);
}

export interface DeleteOutcome {
  /** Version id of the delete marker made, or of the version removed. */
  versionId: string | undefined;
  deleteMarker: boolean;
}

/**
 * DeleteObject semantics: with a version id, remove that version (or marker) for good; without one,
 * remove the object of an unversioned bucket, or add a delete marker once versioning was ever enabled.
 * Deleting what is not there succeeds, as on S3.
 */
export function deleteObject(bodies: ObjectBodies, bucket: BucketState, key: string, versionId: string | undefined): DeleteOutcome {
  const versions = bucket.objects.get(key) ?? [];
  if (versionId !== undefined) {
    const removed = versions.find((v) => v.versionId === versionId);
    if (removed) release(bodies, removed);
    const rest = versions.filter((v) => v.versionId !== versionId);
    if (rest.length === 0) bucket.objects.delete(key);
    else bucket.objects.set(key, rest);
    return { versionId, deleteMarker: removed?.deleteMarker ?? false };
  }
  if (bucket.versioning === undefined) {
    for (const version of versions) release(bodies, version);
    bucket.objects.delete(key);
    return { versionId: undefined, deleteMarker: false };
  }
  const marker: ObjectVersion = { key, versionId: writeVersionId(bucket), deleteMarker: true, size: 0, etag: '', lastModified: new Date() };
  addVersion(bodies, bucket, marker);
  return { versionId: marker.versionId, deleteMarker: true };
}

/** Current objects (latest version not a delete marker), sorted by key. */
export function currentObjects(bucket: BucketState): ObjectVersion[] {
  return [...bucket.objects.keys()]
    .sort()
    .map((key) => bucket.objects.get(key)?.[0])
    .filter((v): v is ObjectVersion => v !== undefined && !v.deleteMarker);
}

/** Every version and delete marker: keys ascending, newest version first within a key. */
export function allVersions(bucket: BucketState): ObjectVersion[] {
  return [...bucket.objects.keys()].sort().flatMap((key) => bucket.objects.get(key) ?? []);
}

export function isEmpty(bucket: BucketState): boolean {
  return bucket.objects.size === 0;
}
