import type { IncomingHttpHeaders } from 'node:http';
import type { ObjectBodies } from './bodies.js';
import { S3Errors } from './errors.js';
import type { BucketState, MultipartUpload } from './store.js';

/** One parsed S3 REST request (path-style: /bucket/key). */
export interface S3Request {
  method: string;
  bucket?: string;
  key?: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The payload (an aws-chunked body decoded). */
  body: Buffer;
  /** Trailing headers of an aws-chunked body (flexible checksums), lower-case names. */
  trailers: Record<string, string>;
  /** Access key id from the SigV4 credential scope ('' for an anonymous request). */
  accessKeyId: string;
  /** The account the access key belongs to. */
  account: string;
  /** Region from the SigV4 credential scope (the region the client signed for). */
  signingRegion: string;
}

export interface S3Response {
  status: number;
  headers?: Record<string, string>;
  /** XML document; absent for empty responses. */
  body?: string;
  /** An object's bytes (GetObject), sent as they are with the handler's own Content-Type. */
  payload?: Buffer;
}

/** Everything the fake remembers, shared by the handlers. */
export interface S3FakeState {
  buckets: Map<string, BucketState>;
  /** Object bytes, by ObjectVersion.bodyId (and the parts of multipart uploads). */
  bodies: ObjectBodies;
  /** Multipart uploads in progress, by upload id (kept in memory only). */
  uploads: Map<string, MultipartUpload>;
  /** New buckets get SSE-S3 default encryption, as S3 does since January 2023. */
  defaultEncryption: boolean;
}

export const ok = (body?: string, headers?: Record<string, string>): S3Response => ({ status: 200, body, headers });
export const noContent = (headers?: Record<string, string>): S3Response => ({ status: 204, headers });

/** The bucket a request names, if the caller's account owns it: NoSuchBucket or AccessDenied otherwise. */
export function ownedBucket(state: S3FakeState, request: S3Request): BucketState {
  const name = request.bucket ?? '';
  const bucket = state.buckets.get(name);
  if (!bucket) throw S3Errors.noSuchBucket(name);
  if (bucket.owner !== request.account) throw S3Errors.accessDenied();
  return bucket;
}

/** Integer query parameter within bounds (S3 caps max-keys at 1000). */
export function maxKeys(query: URLSearchParams): number {
  const raw = query.get('max-keys');
  if (raw === null) return 1000;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw S3Errors.invalidArgument('Provided max-keys not an integer or within integer range', 'max-keys', raw);
  return Math.min(value, 1000);
}
