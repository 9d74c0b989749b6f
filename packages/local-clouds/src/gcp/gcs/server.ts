import { verify } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveHttp } from '../../http/serve.js';
import { bucketResource, checkMetageneration, insertBucket, patchBucket } from './buckets.js';
import { GcsError, GcsErrors } from './errors.js';
import { deleteObject, getObject, insertObject, listObjects, objectResource } from './objects.js';
import { loadState, StateWriter, type Json, type StoredBucket } from './state.js';
import { parseMultipart, ResumableSessions } from './uploads.js';

/** A service account the fake knows: the project it acts in, and the public key its self-signed JWTs are checked with. */
export interface GcsServiceAccount {
  project: string;
  /** PEM public key; when given, every bearer JWT of this account must be signed with its private key (RS256). */
  publicKeyPem?: string;
}

export interface GcsFakeOptions {
  host?: string;
  port?: number;
  /** Keep buckets and objects in `DIR/gcs-state.json`, so a restart keeps them. */
  dataDir?: string;
  /**
   * Service accounts by email. A request with a bearer JWT (self-signed, as google-auth-library makes
   * them from a service-account key) acts as its `iss`, in that account's project: another project's
   * buckets are 403, and their names are taken (409). A request without credentials is anonymous and
   * may do anything, as an emulator allows.
   */
  serviceAccounts?: Record<string, GcsServiceAccount>;
  /** The most buckets one buckets.list page holds: GCS's 1,000 by default; lower, to test paging. */
  bucketsPageSize?: number;
}

/** One request the fake answered, for tests to look at. */
export interface GcsRequestRecord {
  method: string;
  path: string;
  query: string;
  principal: string;
  status: number;
  reason?: string;
}

export interface GcsFake {
  /** Base URL for `new Storage({ apiEndpoint })`: `http://127.0.0.1:PORT`. */
  endpoint: string;
  readonly requests: GcsRequestRecord[];
  /** Every request of `principal` (a service-account email, or `anonymous`) answers 403 until allowed again. */
  deny(principal: string): void;
  allow(principal: string): void;
  /** The next `count` requests (of `method` only, when given) answer `status` (429 rateLimitExceeded or 503 backendError). */
  failNext(count: number, status: 429 | 503, method?: string): void;
  stop(): Promise<void>;
}

interface Principal {
  name: string;
  /** Undefined for anonymous callers, who may act in every project. */
  project: string | undefined;
}

const ANONYMOUS: Principal = { name: 'anonymous', project: undefined };

function decodeJwt(token: string): { signed: string; signature: Buffer; payload: Json } | undefined {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || signature === undefined) return undefined;
  try {
    return { signed: `${header}.${payload}`, signature: Buffer.from(signature, 'base64url'), payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json };
  } catch {
    return undefined;
  }
}

function principalOf(request: IncomingMessage, accounts: Record<string, GcsServiceAccount>): Principal {
  const authorization = request.headers.authorization;
  if (!authorization) return ANONYMOUS;
  const token = /^Bearer (.+)$/i.exec(authorization)?.[1] ?? '';
  const jwt = decodeJwt(token);
  const email = typeof jwt?.payload['iss'] === 'string' ? jwt.payload['iss'] : undefined;
  const account = email ? accounts[email] : undefined;
  if (!jwt || !email || !account) throw new GcsError(401, 'authError', 'Invalid Credentials', { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' });
  if (account.publicKeyPem && !verify('RSA-SHA256', Buffer.from(jwt.signed), account.publicKeyPem, jwt.signature)) {
    throw new GcsError(401, 'authError', 'Invalid Credentials');
  }
  return { name: email, project: account.project };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): Json {
  if (body.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Json;
  } catch {
    // answered below
  }
  throw GcsErrors.invalid('Invalid JSON payload received.');
}

interface Answer {
  status: number;
  json?: Json;
  raw?: Buffer;
  headers?: Record<string, string>;
}

/**
 * Starts a wire-level fake of the Cloud Storage JSON API (buckets insert/get/list/patch/delete with
 * metageneration preconditions, labels, versioning, lifecycle, IAM configuration and default KMS key;
 * objects insert (multipart, media, resumable)/get/list/delete with generations), for the real
 * `@google-cloud/storage` with `apiEndpoint` set to `endpoint`. Errors have GCS's JSON shape.
 */
export async function startGcsFake(options: GcsFakeOptions = {}): Promise<GcsFake> {
  const state = loadState(options.dataDir);
  const writer = new StateWriter(options.dataDir, state);
  const accounts = options.serviceAccounts ?? {};
  const denied = new Set<string>();
  const sessions = new ResumableSessions();
  const requests: GcsRequestRecord[] = [];
  let failures: { remaining: number; status: 429 | 503; method?: string | undefined } = { remaining: 0, status: 503 };
  let endpoint = '';
  const bucketsPageSize = options.bucketsPageSize ?? 1000;

  function bucketFor(name: string, principal: Principal, permission: string): StoredBucket {
    const bucket = state.buckets.get(name);
    if (bucket && principal.project !== undefined && bucket.project !== principal.project) throw GcsErrors.forbidden(principal.name, permission, name);
    if (!bucket) throw GcsErrors.bucketNotFound();
    return bucket;
  }

  function bucketRoutes(method: string, segments: string[], query: URLSearchParams, body: Buffer, principal: Principal): Answer {
    const [bucketName, objects, ...objectPath] = segments;
    if (bucketName === undefined) {
      if (method === 'POST') {
        const project = query.get('project');
        if (!project) throw GcsErrors.required('Project');
        if (principal.project !== undefined && principal.project !== project) throw GcsErrors.forbidden(principal.name, 'storage.buckets.create', undefined);
        const { name, bucket } = insertBucket(state, project, parseJson(body));
        writer.changed();
        return { status: 200, json: bucketResource(name, bucket, endpoint) };
      }
      if (method === 'GET') {
        // Pages of maxResults (at most the page size), by name; the page token is the last name given.
        const project = query.get('project');
        const pageSize = Math.min(Number(query.get('maxResults') ?? bucketsPageSize) || bucketsPageSize, bucketsPageSize);
        const after = query.get('pageToken') ? Buffer.from(query.get('pageToken') ?? '', 'base64url').toString('utf8') : undefined;
        const items = [...state.buckets.entries()]
          .filter(([name, b]) => b.project === project && (after === undefined || name > after))
          .sort(([a], [b]) => (a < b ? -1 : 1));
        const page = items.slice(0, pageSize);
        const last = page.at(-1)?.[0];
        return {
          status: 200,
          json: {
            kind: 'storage#buckets',
            items: page.map(([name, b]) => bucketResource(name, b, endpoint)),
            ...(items.length > pageSize && last ? { nextPageToken: Buffer.from(last, 'utf8').toString('base64url') } : {}),
          },
        };
      }
      throw GcsErrors.notImplemented(`${method} /b`);
    }
    if (objects === undefined) {
      const permission = { GET: 'storage.buckets.get', PATCH: 'storage.buckets.update', PUT: 'storage.buckets.update', DELETE: 'storage.buckets.delete' }[method] ?? 'storage.buckets.get';
      const bucket = bucketFor(bucketName, principal, permission);
      checkMetageneration(bucket, query);
      if (method === 'GET') return { status: 200, json: bucketResource(bucketName, bucket, endpoint) };
      if (method === 'PATCH') {
        patchBucket(bucketName, bucket, parseJson(body));
        writer.changed();
        return { status: 200, json: bucketResource(bucketName, bucket, endpoint) };
      }
      if (method === 'DELETE') {
        if (bucket.objects.length > 0) throw GcsErrors.notEmpty();
        state.buckets.delete(bucketName);
        writer.changed();
        return { status: 204 };
      }
      throw GcsErrors.notImplemented(`${method} /b/{bucket}`);
    }
    if (objects !== 'o') throw GcsErrors.notImplemented(`/b/{bucket}/${objects}`);
    const objectName = objectPath.join('/');
    const bucket = bucketFor(bucketName, principal, method === 'DELETE' ? 'storage.objects.delete' : 'storage.objects.get');
    if (!objectName) {
      if (method === 'GET') return { status: 200, json: listObjects(bucketName, bucket, query, endpoint) };
      throw GcsErrors.notImplemented(`${method} /b/{bucket}/o`);
    }
    if (method === 'GET') {
      const object = getObject(bucketName, bucket, objectName, query);
      if (query.get('alt') === 'media') {
        return { status: 200, raw: Buffer.from(object.data, 'base64'), headers: { 'content-type': object.contentType, 'x-goog-generation': object.generation, 'x-goog-hash': `crc32c=${object.crc32c},md5=${object.md5Hash}` } };
      }
      return { status: 200, json: objectResource(bucketName, object, endpoint) };
    }
    if (method === 'DELETE') {
      deleteObject(bucketName, bucket, objectName, query);
      writer.changed();
      return { status: 204 };
    }
    throw GcsErrors.notImplemented(`${method} /b/{bucket}/o/{object}`);
  }

  function uploadRoutes(method: string, segments: string[], query: URLSearchParams, headers: IncomingMessage['headers'], body: Buffer, principal: Principal): Answer {
    const [bucketName, objects] = segments;
    if (bucketName === undefined || objects !== 'o') throw GcsErrors.notImplemented('this upload path');
    const bucket = bucketFor(bucketName, principal, 'storage.objects.create');
    const created = (name: string, data: Buffer, metadata: Json, objectQuery: URLSearchParams): Answer => {
      const object = insertObject(state, bucket, name, data, metadata, objectQuery);
      writer.changed();
      return { status: 200, json: objectResource(bucketName, object, endpoint) };
    };
    const uploadType = query.get('uploadType');
    if (method === 'POST' && uploadType === 'multipart') {
      const { metadata, media, mediaType } = parseMultipart(String(headers['content-type'] ?? ''), body);
      const name = query.get('name') ?? (typeof metadata['name'] === 'string' ? metadata['name'] : '');
      return created(name, media, { ...(mediaType ? { contentType: mediaType } : {}), ...metadata }, query);
    }
    if (method === 'POST' && uploadType === 'media') {
      return created(query.get('name') ?? '', body, { contentType: headers['content-type'] ?? 'application/octet-stream' }, query);
    }
    if (method === 'POST' && uploadType === 'resumable') {
      const metadata = parseJson(body);
      const name = query.get('name') ?? (typeof metadata['name'] === 'string' ? metadata['name'] : '');
      if (!name) throw GcsErrors.required('Object name');
      const contentType = headers['x-upload-content-type'];
      const id = sessions.start(bucketName, name, { ...(typeof contentType === 'string' ? { contentType } : {}), ...metadata }, query);
      const location = `${endpoint}/upload/storage/v1/b/${encodeURIComponent(bucketName)}/o?uploadType=resumable&name=${encodeURIComponent(name)}&upload_id=${id}`;
      return { status: 200, headers: { location, 'x-guploader-uploadid': id } };
    }
    const uploadId = query.get('upload_id');
    if ((method === 'PUT' || method === 'POST') && uploadType === 'resumable' && uploadId) {
      const contentRange = headers['content-range'];
      const { session, complete } = sessions.put(uploadId, typeof contentRange === 'string' ? contentRange : undefined, body);
      if (complete) return created(session.name, complete, session.metadata, session.query);
      return { status: 308, headers: session.size > 0 ? { range: `bytes=0-${session.size - 1}` } : {} };
    }
    throw GcsErrors.notImplemented(`${method} upload with uploadType=${uploadType ?? ''}`);
  }

  function answer(request: IncomingMessage, url: URL, body: Buffer): Answer {
    if (failures.remaining > 0 && (failures.method === undefined || failures.method === request.method)) {
      failures.remaining -= 1;
      throw failures.status === 429 ? GcsErrors.rateLimited() : GcsErrors.backendError();
    }
    const principal = principalOf(request, accounts);
    if (denied.has(principal.name)) throw GcsErrors.forbidden(principal.name, 'storage.buckets.get', url.pathname.split('/')[4]);
    const method = request.method ?? 'GET';
    const segments = url.pathname.split('/').filter(Boolean).map((segment) => decodeURIComponent(segment));
    // /storage/v1/b/..., /upload/storage/v1/b/..., /download/storage/v1/b/...
    const root = segments[0] === 'storage' ? 'storage' : segments[0];
    const [service, version, b, ...rest] = root === 'storage' ? segments : segments.slice(1);
    if (service !== 'storage' || version !== 'v1' || b !== 'b') throw GcsErrors.notImplemented(url.pathname);
    if (root === 'storage') return bucketRoutes(method, rest, url.searchParams, body, principal);
    if (root === 'upload') return uploadRoutes(method, rest, url.searchParams, request.headers, body, principal);
    if (root === 'download' && method === 'GET') {
      url.searchParams.set('alt', 'media');
      return bucketRoutes(method, rest, url.searchParams, body, principal);
    }
    throw GcsErrors.notImplemented(url.pathname);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://gcs.local');
    const body = await readBody(request);
    let result: Answer;
    let reason: string | undefined;
    let principal = 'anonymous';
    try {
      principal = principalOf(request, accounts).name;
    } catch {
      principal = 'invalid';
    }
    try {
      result = answer(request, url, body);
    } catch (error) {
      const gcsError = error instanceof GcsError ? error : new GcsError(500, 'backendError', `Internal error: ${String(error)}`);
      reason = gcsError.reason;
      result = { status: gcsError.status, raw: Buffer.from(gcsError.body()), headers: { 'content-type': 'application/json; charset=UTF-8', ...gcsError.headers } };
    }
    requests.push({ method: request.method ?? 'GET', path: url.pathname, query: url.search, principal, status: result.status, ...(reason ? { reason } : {}) });
    const payload = result.json ? Buffer.from(JSON.stringify(result.json)) : result.raw;
    response.writeHead(result.status, {
      ...(result.json ? { 'content-type': 'application/json; charset=UTF-8' } : {}),
      'content-length': String(payload?.length ?? 0),
      ...result.headers,
    });
    response.end(payload);
  }

  const server = await serveHttp(handle, options);
  endpoint = server.endpoint;
  return {
    endpoint,
    requests,
    deny: (principal) => void denied.add(principal),
    allow: (principal) => void denied.delete(principal),
    failNext: (count, status, method) => {
      failures = { remaining: count, status, method };
    },
    stop: async () => {
      writer.flush();
      await server.close();
    },
  };
}
