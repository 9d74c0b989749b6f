import * as buckets from './buckets.js';
import * as config from './bucket-config.js';
import { S3Errors } from './errors.js';
import * as multipart from './multipart.js';
import * as objects from './objects.js';
import { getObjectHandler, headObjectHandler } from './object-reads.js';
import type { S3FakeState, S3Request, S3Response } from './request.js';

type Handler = (state: S3FakeState, request: S3Request) => S3Response;

/** Query parameters that select a bucket subresource (`?versioning`, `?tagging`...). */
const SUBRESOURCES = ['location', 'versioning', 'tagging', 'encryption', 'publicAccessBlock', 'lifecycle', 'versions', 'delete', 'list-type', 'uploads', 'uploadId'] as const;
type Subresource = (typeof SUBRESOURCES)[number] | '';

/**
 * Subresources S3 has and this fake does not serve (ACLs, policies, object tagging, ...):
 * NotImplemented, never taken for the plain operation on the same path.
 */
const UNSERVED = [
  'accelerate', 'acl', 'analytics', 'attributes', 'cors', 'intelligent-tiering', 'inventory', 'legal-hold', 'logging', 'metadataTable',
  'metrics', 'notification', 'object-lock', 'ownershipControls', 'policy', 'policyStatus', 'replication', 'requestPayment',
  'restore', 'retention', 'select', 'torrent', 'website',
];

/** Bucket-level operations by method and subresource. */
const BUCKET_ROUTES: Record<string, Partial<Record<Subresource, Handler>>> = {
  PUT: {
    '': buckets.createBucket,
    versioning: config.putVersioning,
    tagging: config.putTagging,
    encryption: config.putEncryption,
    publicAccessBlock: config.putPublicAccessBlock,
    lifecycle: config.putLifecycle,
  },
  GET: {
    location: buckets.getBucketLocation,
    versioning: config.getVersioning,
    tagging: config.getTagging,
    encryption: config.getEncryption,
    publicAccessBlock: config.getPublicAccessBlock,
    lifecycle: config.getLifecycle,
    versions: objects.listObjectVersions,
    'list-type': objects.listObjectsV2,
    '': objects.listObjectsV1,
  },
  HEAD: { '': buckets.headBucket },
  DELETE: {
    '': buckets.deleteBucket,
    tagging: config.deleteTagging,
    encryption: config.deleteEncryption,
    publicAccessBlock: config.deletePublicAccessBlock,
    lifecycle: config.deleteLifecycle,
  },
  POST: { delete: objects.deleteObjectsHandler },
};

const OBJECT_ROUTES: Record<string, Partial<Record<Subresource, Handler>>> = {
  GET: { '': getObjectHandler, uploadId: multipart.listParts },
  HEAD: { '': headObjectHandler },
  PUT: { '': objects.putObjectHandler, uploadId: multipart.uploadPart },
  POST: { uploads: multipart.createMultipartUpload, uploadId: multipart.completeMultipartUpload },
  DELETE: { '': objects.deleteObjectHandler, uploadId: multipart.abortMultipartUpload },
};

export function subresourceOf(query: URLSearchParams): Subresource {
  return SUBRESOURCES.find((name) => query.has(name)) ?? '';
}

/** The S3 operation a request stands for; unsupported combinations answer NotImplemented. */
export function route(request: S3Request): Handler {
  if (request.bucket === undefined) {
    if (request.method === 'GET') return buckets.listBuckets;
    throw S3Errors.methodNotAllowed();
  }
  // partNumber without an upload id reads one part of an object (GetObject, HeadObject): not served.
  if (UNSERVED.some((name) => request.query.has(name)) || (request.query.has('partNumber') && !request.query.has('uploadId'))) throw S3Errors.notImplemented();
  const routes = request.key === undefined ? BUCKET_ROUTES : OBJECT_ROUTES;
  const byMethod = routes[request.method];
  if (!byMethod) throw S3Errors.methodNotAllowed();
  const handler = byMethod[subresourceOf(request.query)];
  if (!handler) throw S3Errors.notImplemented();
  return handler;
}

/** Operations S3 serves for a bucket from any region: CreateBucket has its own rules, GetBucketLocation tells the region. */
export function isRegionless(handler: Handler): boolean {
  return handler === buckets.createBucket || handler === buckets.getBucketLocation;
}
