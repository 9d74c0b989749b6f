import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveHttp } from '../../http/serve.js';
import { S3Error, S3Errors } from './errors.js';
import { checkIntegrity } from './integrity.js';
import { loadBuckets, saveBuckets } from './persistence.js';
import { verifySignatureV4 } from './signature.js';
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
   * Access key id -> secret access key. When given, every request's Signature V4 is verified as S3
   * does (InvalidAccessKeyId, SignatureDoesNotMatch); otherwise signatures are parsed, not checked.
   */
  credentials?: Record<string, string>;
  /** Keep buckets, their configuration and object versions in this folder across restarts (default: memory). */
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

const CREDENTIAL = /Credential=([^/,\s]+)\/\d{8}\/([^/]+)\/s3\/aws4_request/;

function credentialScope(request: IncomingMessage, query: URLSearchParams): { accessKeyId: string; region: string } {
  const fromHeader = CREDENTIAL.exec(request.headers.authorization ?? '');
  const fromQuery = /^([^/]+)\/\d{8}\/([^/]+)\//.exec(query.get('X-Amz-Credential') ?? '');
  const match = fromHeader ?? fromQuery;
  return { accessKeyId: match?.[1] ?? '', region: match?.[2] ?? 'us-east-1' };
}

/** Decodes an aws-chunked body (`size;chunk-signature=...\r\ndata\r\n ... 0\r\ntrailers`). */
function decodeAwsChunked(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset < raw.length) {
    const lineEnd = raw.indexOf('\r\n', offset);
    if (lineEnd < 0) break;
    const size = parseInt(raw.subarray(offset, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const chunked = (request.headers['content-encoding'] ?? '').includes('aws-chunked') || String(request.headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-');
  return chunked ? decodeAwsChunked(raw) : raw;
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
 * Starts a wire-level fake of the S3 bucket control plane (path-style REST/XML), for the real
 * `@aws-sdk/client-s3` with `forcePathStyle: true`. Signatures give the access key and region, and
 * are verified when `credentials` are given.
 */
export async function startS3Fake(options: S3FakeOptions = {}): Promise<S3Fake> {
  const state: S3FakeState = { buckets: options.dataDir ? loadBuckets(options.dataDir) : new Map(), defaultEncryption: options.defaultEncryption ?? true };
  const denied = new Set(options.deniedAccessKeys ?? []);
  const accounts = options.accounts ?? {};
  const requests: S3FakeRequestRecord[] = [];
  let slowDowns: { remaining: number; accessKeyId?: string } = { remaining: 0 };

  function answer(s3Request: S3Request, rawUrl: string): S3Response {
    if (slowDowns.remaining > 0 && (slowDowns.accessKeyId === undefined || slowDowns.accessKeyId === s3Request.accessKeyId)) {
      slowDowns.remaining -= 1;
      throw S3Errors.slowDown();
    }
    if (!s3Request.accessKeyId) throw S3Errors.accessDenied();
    if (options.credentials) verifySignatureV4(s3Request.method, rawUrl, s3Request.headers, options.credentials);
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
    const url = new URL(request.url ?? '/', 'http://s3.local');
    const { accessKeyId, region } = credentialScope(request, url.searchParams);
    const method = request.method ?? 'GET';
    const s3Request: S3Request = {
      method,
      ...splitPath(url.pathname),
      query: url.searchParams,
      headers: request.headers,
      body: await readBody(request),
      accessKeyId,
      account: accounts[accessKeyId] ?? accessKeyId,
      signingRegion: region,
    };
    let result: S3Response;
    let code: string | undefined;
    try {
      result = answer(s3Request, request.url ?? '/');
    } catch (error) {
      const s3Error = error instanceof S3Error ? error : new S3Error('InternalError', 500, 'We encountered an internal error. Please try again.');
      code = s3Error.code;
      // HEAD responses carry no body: the SDK names the error after the status (NotFound, Forbidden).
      const body = method === 'HEAD' ? undefined : errorDocument(s3Error.code, s3Error.message, s3Error.details, requestId);
      result = { status: s3Error.status, body, headers: s3Error.headers };
    }
    if (options.dataDir && method !== 'GET' && method !== 'HEAD' && result.status < 300) saveBuckets(options.dataDir, state.buckets);
    requests.push({ method, bucket: s3Request.bucket, key: s3Request.key, subresource: subresourceOf(url.searchParams), accessKeyId, status: result.status, code, receivedAt });
    const body = result.body === undefined ? undefined : Buffer.from(result.body, 'utf8');
    response.writeHead(result.status, {
      'x-amz-request-id': requestId,
      'x-amz-id-2': requestId,
      server: 'AmazonS3',
      ...(body ? { 'content-type': 'application/xml', 'content-length': String(body.length) } : { 'content-length': '0' }),
      ...result.headers,
    });
    response.end(body);
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
