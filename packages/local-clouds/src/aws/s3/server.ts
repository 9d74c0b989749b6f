import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { serveHttp } from '../../http/serve.js';
import { parseSigV4, verifySigV4, type SignedHttpRequest } from '../sigv4.js';
import { s3AuthFailure } from './auth.js';
import { decodeAwsChunked, isAwsChunked } from './aws-chunked.js';
import { diskBodies, memoryBodies } from './bodies.js';
import { S3Error, S3Errors } from './errors.js';
import { checkIntegrity } from './integrity.js';
import { loadBuckets, saveBucket } from './persistence.js';
import type { S3FakeState, S3Request, S3Response } from './request.js';
import { isRegionless, route, subresourceOf } from './routes.js';
import { errorDocument } from './xml.js';

export interface S3FakeOptions {
  port?: number;
  host?: string;
  /**
   * Access key id -> account id. Accounts own buckets: another account's bucket name is
   * BucketAlreadyExists on create and AccessDenied otherwise. A key not listed is its own account.
   */
  accounts?: Record<string, string>;
  /** Access keys whose every request is AccessDenied (an IAM policy that allows nothing). */
  deniedAccessKeys?: string[];
  /** New buckets get SSE-S3 default encryption, as S3 does since 2023 (default true). */
  defaultEncryption?: boolean;
  /**
   * Access key id -> secret access key. When given, every request's Signature V4 (header or
   * presigned URL) is verified as S3 does (InvalidAccessKeyId, SignatureDoesNotMatch,
   * RequestTimeTooSkewed, an expired URL's AccessDenied); otherwise signatures are parsed, not checked.
   */
  credentials?: Record<string, string>;
  /**
   * Keep buckets, their configuration and object versions in this folder across restarts (default:
   * memory): each bucket's state in `buckets/<name>.json` (`s3BucketFile`), and each version's bytes in `objects/`.
   */
  dataDir?: string;
}

/** One request the fake answered, for tests to look at. */
export interface S3FakeRequestRecord {
  method: string;
  bucket?: string;
  key?: string;
  subresource: string;
  accessKeyId: string;
  status: number;
  code?: string;
  /** When the request arrived (`performance.now()` milliseconds), for rate checks at the backend. */
  receivedAt: number;
}

export interface S3Fake {
  /** Base URL for path-style clients: `http://127.0.0.1:PORT`. */
  endpoint: string;
  stop(): Promise<void>;
  /** Every request answered, in order. */
  readonly requests: S3FakeRequestRecord[];
  denyAccessKey(accessKeyId: string): void;
  allowAccessKey(accessKeyId: string): void;
  /** The next `count` requests (only those of `accessKeyId`, when given) answer 503 SlowDown. */
  slowDown(count: number, accessKeyId?: string): void;
}

async function readRawBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Splits a path-style URL path into bucket and key (both URL-decoded). */
function splitPath(pathname: string): { bucket?: string; key?: string } {
  const path = pathname.replace(/^\/+/, '');
  if (!path) return {};
  const slash = path.indexOf('/');
  if (slash < 0 || slash === path.length - 1) return { bucket: decodeURIComponent(slash < 0 ? path : path.slice(0, slash)) };
  return { bucket: decodeURIComponent(path.slice(0, slash)), key: decodeURIComponent(path.slice(slash + 1)) };
}

/**
 * Starts a wire-level fake of S3 (path-style REST/XML): the bucket control plane and objects
 * (PutObject, GetObject, HeadObject, DeleteObject(s), listings), for the real `@aws-sdk/client-s3`
 * with `forcePathStyle: true` and the AWS CLI. Signatures give the access key and region, and are
 * verified when `credentials` are given.
 */
export async function startS3Fake(options: S3FakeOptions = {}): Promise<S3Fake> {
  const state: S3FakeState = {
    buckets: options.dataDir ? loadBuckets(options.dataDir) : new Map(),
    bodies: options.dataDir ? diskBodies(join(options.dataDir, 'objects')) : memoryBodies(),
    uploads: new Map(),
    defaultEncryption: options.defaultEncryption ?? true,
  };
  const denied = new Set(options.deniedAccessKeys ?? []);
  const accounts = options.accounts ?? {};
  const requests: S3FakeRequestRecord[] = [];
  let slowDowns: { remaining: number; accessKeyId?: string } = { remaining: 0 };

  async function answer(s3Request: S3Request, signed: SignedHttpRequest): Promise<S3Response> {
    if (slowDowns.remaining > 0 && (slowDowns.accessKeyId === undefined || slowDowns.accessKeyId === s3Request.accessKeyId)) {
      slowDowns.remaining -= 1;
      throw S3Errors.slowDown();
    }
    if (options.credentials) {
      const failure = s3AuthFailure(await verifySigV4(signed, options.credentials, { uriEscapePath: false }), signed.headers.authorization !== undefined);
      if (failure) throw failure;
    } else if (!s3Request.accessKeyId) throw S3Errors.accessDenied();
    if (denied.has(s3Request.accessKeyId)) throw S3Errors.accessDenied();
    const handler = route(s3Request);
    // A bucket answers only in its own region; elsewhere S3 redirects (the SDK follows with followRegionRedirects).
    const bucket = s3Request.bucket === undefined ? undefined : state.buckets.get(s3Request.bucket);
    if (bucket && bucket.region !== s3Request.signingRegion && !isRegionless(handler)) throw S3Errors.permanentRedirect(bucket.name, bucket.region);
    checkIntegrity(s3Request, subresourceOf(s3Request.query));
    return handler(state, s3Request);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const receivedAt = performance.now();
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    const rawUrl = request.url ?? '/';
    const url = new URL(rawUrl, 'http://s3.local');
    const auth = parseSigV4(rawUrl, request.headers);
    const accessKeyId = 'accessKeyId' in auth ? auth.accessKeyId : '';
    const region = 'region' in auth ? auth.region : 'us-east-1';
    const method = request.method ?? 'GET';
    const raw = await readRawBody(request);
    const { payload, trailers } = isAwsChunked(request.headers) ? decodeAwsChunked(raw) : { payload: raw, trailers: {} };
    const s3Request: S3Request = {
      method,
      ...splitPath(url.pathname),
      query: url.searchParams,
      headers: request.headers,
      body: payload,
      trailers,
      accessKeyId,
      account: accounts[accessKeyId] ?? accessKeyId,
      signingRegion: region,
    };
    let result: S3Response;
    let code: string | undefined;
    try {
      result = await answer(s3Request, { method, rawUrl, headers: request.headers, body: raw });
    } catch (error) {
      const s3Error = error instanceof S3Error ? error : new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.');
      code = s3Error.code;
      // HEAD responses carry no body: the SDK names the error after the status (NotFound, Forbidden).
      const body = method === 'HEAD' ? undefined : errorDocument(s3Error.code, s3Error.message, s3Error.details, requestId);
      result = { status: s3Error.status, body, headers: s3Error.headers };
    }
    // Every change S3 answers is to the one bucket its request names: only that bucket is written again.
    if (options.dataDir && method !== 'GET' && method !== 'HEAD' && result.status < 300 && s3Request.bucket !== undefined) saveBucket(options.dataDir, s3Request.bucket, state.buckets.get(s3Request.bucket));
    requests.push({ method, bucket: s3Request.bucket, key: s3Request.key, subresource: subresourceOf(url.searchParams), accessKeyId, status: result.status, code, receivedAt });
    const xml = result.body === undefined ? undefined : Buffer.from(result.body, 'utf8');
    response.writeHead(result.status, {
      'x-amz-request-id': requestId,
      'x-amz-id-2': requestId,
      server: 'AmazonS3',
      ...(xml ? { 'content-type': 'application/xml', 'content-length': String(xml.length) } : { 'content-length': String(result.payload?.length ?? 0) }),
      ...result.headers,
    });
    response.end(method === 'HEAD' ? undefined : (xml ?? result.payload));
  }

  const server = await serveHttp(handle, options);
  return {
    endpoint: server.endpoint,
    requests,
    denyAccessKey: (id) => void denied.add(id),
    allowAccessKey: (id) => void denied.delete(id),
    slowDown: (count, accessKeyId) => {
      slowDowns = { remaining: count, accessKeyId };
    },
    stop: () => server.close(),
  };
}
