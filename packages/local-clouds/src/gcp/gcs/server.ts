import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveHttp, type ServingHttp, type ServingTls } from '../../http/serve.js';
import { AccessTokens, exchangeAssertion, principalOf, type GcsServiceAccount, type Principal } from './auth.js';
import { bucketResource, checkMetageneration, insertBucket, patchBucket, storageLayout } from './buckets.js';
import { GcsError, GcsErrors } from './errors.js';
import { deleteObject, getObject, insertObject, listObjects, objectResource } from './objects.js';
import { selectFields } from './partial-response.js';
import { loadState, StateWriter, type Json, type StoredBucket } from './state.js';
import { parseMultipart, ResumableSessions } from './uploads.js';

export type { GcsServiceAccount } from './auth.js';

export interface GcsFakeOptions {
  host?: string;
  port?: number;
  /** Keep buckets and objects in `DIR/gcs-state.json`, so a restart keeps them. */
  dataDir?: string;
  /**
   * Service accounts by email. A request with a bearer JWT (self-signed, as google-auth-library makes
   * them from a service-account key) acts as its `iss`, in that account's project: another project's
   * buckets are 403, and their names are taken (409). An access token from `tokenUri`, which an
   * account's key gets there, acts as that account too. A request without credentials is anonymous
   * and may do anything, as an emulator allows.
   */
  serviceAccounts?: Record<string, GcsServiceAccount>;
  /** The most buckets one buckets.list page holds: GCS's 1,000 by default; lower, to test paging. */
  bucketsPageSize?: number;
  /**
   * Serve HTTPS too, with this certificate (signed by a CA the clients trust), on a port of its own
   * (`httpsPort`, default a free one): `gsutil` speaks the JSON API over HTTPS only.
   */
  tls?: ServingTls;
  httpsPort?: number;
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
  /** `https://127.0.0.1:PORT` when started with `tls`: the same fake over HTTPS. */
  httpsEndpoint: string | undefined;
  /**
   * `http://127.0.0.1:PORT/token`: an OAuth token endpoint for the service accounts' keys. As a key
   * file's `token_uri`, it lets gcloud and gsutil log in with the key (`gcloud auth activate-service-account`).
   */
  tokenUri: string;
  readonly requests: GcsRequestRecord[];
  /** Every request of `principal` (a service-account email, or `anonymous`) answers 403 until allowed again. */
  deny(principal: string): void;
  allow(principal: string): void;
  /** The next `count` requests (of `method` only, when given) answer `status` (429 rateLimitExceeded or 503 backendError). */
  failNext(count: number, status: 429 | 503, method?: string): void;
  stop(): Promise<void>;
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
 * objects insert (multipart, media, resumable)/get/list/delete with generations; `fields=` partial
 * responses), for the real `@google-cloud/storage` with `apiEndpoint` set to `endpoint`, and for the
 * Google Cloud SDK (gcloud storage; gsutil over `httpsEndpoint`). Errors have GCS's JSON shape. The
 * README's table lists every call served and what is answered differently from GCS.
 */
export async function startGcsFake(options: GcsFakeOptions = {}): Promise<GcsFake> {
  const state = loadState(options.dataDir);
  const writer = new StateWriter(options.dataDir, state);
  const accounts = options.serviceAccounts ?? {};
  const denied = new Set<string>();
  const sessions = new ResumableSessions();
  const tokens = new AccessTokens();
  const requests: GcsRequestRecord[] = [];
  let failures: { remaining: number; status: 429 | 503; method?: string | undefined } = { remaining: 0, status: 503 };
  const bucketsPageSize = options.bucketsPageSize ?? 1000;

  function bucketFor(name: string, principal: Principal, permission: string): StoredBucket {
    const bucket = state.buckets.get(name);
    if (bucket && principal.project !== undefined && bucket.project !== principal.project) throw GcsErrors.forbidden(principal.name, permission, name);
    if (!bucket) throw GcsErrors.bucketNotFound();
    return bucket;
  }

  function bucketRoutes(method: string, segments: string[], query: URLSearchParams, body: Buffer, principal: Principal, origin: string): Answer {
    const [bucketName, objects, ...objectPath] = segments;
    if (bucketName === undefined) {
      if (method === 'POST') {
        const project = query.get('project');
        if (!project) throw GcsErrors.required('Project');
        if (principal.project !== undefined && principal.project !== project) throw GcsErrors.forbidden(principal.name, 'storage.buckets.create', undefined);
        const { name, bucket } = insertBucket(state, project, parseJson(body));
        writer.changed();
        return { status: 200, json: bucketResource(name, bucket, origin) };
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
            items: page.map(([name, b]) => bucketResource(name, b, origin)),
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
      if (method === 'GET') return { status: 200, json: bucketResource(bucketName, bucket, origin) };
      if (method === 'PATCH') {
        patchBucket(bucketName, bucket, parseJson(body));
        writer.changed();
        return { status: 200, json: bucketResource(bucketName, bucket, origin) };
      }
      if (method === 'DELETE') {
        if (bucket.objects.length > 0) throw GcsErrors.notEmpty();
        state.buckets.delete(bucketName);
        writer.changed();
        return { status: 204 };
      }
      throw GcsErrors.notImplemented(`${method} /b/{bucket}`);
    }
    if (objects === 'storageLayout' && method === 'GET') return { status: 200, json: storageLayout(bucketName, bucketFor(bucketName, principal, 'storage.buckets.get')) };
    // managedFolders.list: the fake keeps no managed folders (gcloud storage rm -r asks for them).
    if (objects === 'managedFolders' && objectPath.length === 0 && method === 'GET') {
      bucketFor(bucketName, principal, 'storage.managedFolders.list');
      return { status: 200, json: { kind: 'storage#managedFolders' } };
    }
    if (objects !== 'o') throw GcsErrors.notImplemented(`/b/{bucket}/${objects}`);
    const objectName = objectPath.join('/');
    const bucket = bucketFor(bucketName, principal, method === 'DELETE' ? 'storage.objects.delete' : 'storage.objects.get');
    if (!objectName) {
      if (method === 'GET') return { status: 200, json: listObjects(bucketName, bucket, query, origin) };
      throw GcsErrors.notImplemented(`${method} /b/{bucket}/o`);
    }
    if (method === 'GET') {
      const object = getObject(bucketName, bucket, objectName, query);
      if (query.get('alt') === 'media') {
        return { status: 200, raw: Buffer.from(object.data, 'base64'), headers: { 'content-type': object.contentType, 'x-goog-generation': object.generation, 'x-goog-hash': `crc32c=${object.crc32c},md5=${object.md5Hash}` } };
      }
      return { status: 200, json: objectResource(bucketName, object, origin) };
    }
    if (method === 'DELETE') {
      deleteObject(bucketName, bucket, objectName, query);
      writer.changed();
      return { status: 204 };
    }
    throw GcsErrors.notImplemented(`${method} /b/{bucket}/o/{object}`);
  }

  function uploadRoutes(method: string, segments: string[], query: URLSearchParams, headers: IncomingMessage['headers'], body: Buffer, principal: Principal, origin: string): Answer {
    const [bucketName, objects] = segments;
    if (bucketName === undefined || objects !== 'o') throw GcsErrors.notImplemented('this upload path');
    const bucket = bucketFor(bucketName, principal, 'storage.objects.create');
    const created = (name: string, data: Buffer, metadata: Json, objectQuery: URLSearchParams): Answer => {
      const object = insertObject(state, bucket, name, data, metadata, objectQuery);
      writer.changed();
      return { status: 200, json: objectResource(bucketName, object, origin) };
    };
    const uploadType = query.get('uploadType');
    const uploadId = query.get('upload_id');
    if (uploadType === 'resumable' && uploadId) {
      if (method === 'DELETE') {
        // A cancelled session: GCS answers 499 Client Closed Request.
        if (!sessions.cancel(uploadId)) throw GcsErrors.objectNotFound(bucketName, 'upload session');
        return { status: 499 };
      }
      if (method !== 'PUT' && method !== 'POST') throw GcsErrors.notImplemented(`${method} of an upload session`);
      const contentRange = headers['content-range'];
      const put = sessions.put(uploadId, typeof contentRange === 'string' ? contentRange : undefined, body);
      if (put.kind === 'completed-before') return { status: 200, json: objectResource(bucketName, getObject(bucketName, bucket, put.session.name, new URLSearchParams({ generation: put.generation })), origin) };
      if (put.kind === 'complete') {
        const done = created(put.session.name, put.content, put.session.metadata, put.session.query);
        sessions.completed(put.session, String(done.json?.['generation']));
        return done;
      }
      // 308 Resume Incomplete, with the bytes held (none: no Range header).
      return { status: 308, headers: put.session.size > 0 ? { range: `bytes=0-${put.session.size - 1}` } : {} };
    }
    if (method !== 'POST') throw GcsErrors.notImplemented(`${method} upload with uploadType=${uploadType ?? ''}`);
    if (uploadType === 'multipart') {
      const { metadata, media, mediaType } = parseMultipart(String(headers['content-type'] ?? ''), body);
      const name = query.get('name') ?? (typeof metadata['name'] === 'string' ? metadata['name'] : '');
      return created(name, media, { ...(mediaType ? { contentType: mediaType } : {}), ...metadata }, query);
    }
    if (uploadType === 'media') {
      return created(query.get('name') ?? '', body, { contentType: headers['content-type'] ?? 'application/octet-stream' }, query);
    }
    if (uploadType === 'resumable') {
      const metadata = parseJson(body);
      const name = query.get('name') ?? (typeof metadata['name'] === 'string' ? metadata['name'] : '');
      if (!name) throw GcsErrors.required('Object name');
      const contentType = headers['x-upload-content-type'];
      const id = sessions.start(bucketName, name, { ...(typeof contentType === 'string' ? { contentType } : {}), ...metadata }, query);
      // The session URI: the client PUTs every chunk there, whichever path started the session.
      const session = new URLSearchParams({ uploadType: 'resumable', name, upload_id: id });
      return { status: 200, headers: { location: `${origin}/upload/storage/v1/b/${encodeURIComponent(bucketName)}/o?${session.toString()}`, 'x-guploader-uploadid': id } };
    }
    throw GcsErrors.invalid(`Invalid upload type: ${uploadType ?? '(none)'}`);
  }

  function answer(request: IncomingMessage, url: URL, body: Buffer, origin: string): Answer {
    if (failures.remaining > 0 && (failures.method === undefined || failures.method === request.method)) {
      failures.remaining -= 1;
      throw failures.status === 429 ? GcsErrors.rateLimited() : GcsErrors.backendError();
    }
    if (url.pathname === '/token' && request.method === 'POST') return exchangeAssertion(body, accounts, tokens);
    const principal = principalOf(request, accounts, tokens);
    if (denied.has(principal.name)) throw GcsErrors.forbidden(principal.name, 'storage.buckets.get', url.pathname.split('/')[4]);
    const method = request.method ?? 'GET';
    const segments = url.pathname.split('/').filter(Boolean).map((segment) => decodeURIComponent(segment));
    // /storage/v1/b/..., /upload/storage/v1/b/..., /resumable/upload/storage/v1/b/... (gsutil's), /download/storage/v1/b/...
    const root = segments[0] === 'storage' ? 'storage' : segments[0] === 'resumable' && segments[1] === 'upload' ? 'upload' : segments[0];
    const [service, version, b, ...rest] = root === 'storage' ? segments : segments.slice(segments[0] === 'resumable' ? 2 : 1);
    if (service !== 'storage' || version !== 'v1' || b !== 'b') throw GcsErrors.notImplemented(url.pathname);
    if (root === 'storage') return bucketRoutes(method, rest, url.searchParams, body, principal, origin);
    if (root === 'upload') return uploadRoutes(method, rest, url.searchParams, request.headers, body, principal, origin);
    if (root === 'download' && method === 'GET') {
      url.searchParams.set('alt', 'media');
      return bucketRoutes(method, rest, url.searchParams, body, principal, origin);
    }
    throw GcsErrors.notImplemented(url.pathname);
  }

  /** Answers a request that came in over `scheme`; links in the answer (selfLink, session URIs) point where it came in. */
  const handlerFor =
    (scheme: 'http' | 'https') =>
    async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
      const origin = `${scheme}://${request.headers.host ?? '127.0.0.1'}`;
      const url = new URL(request.url ?? '/', origin);
      const body = await readBody(request);
      let result: Answer;
      let reason: string | undefined;
      let principal = 'anonymous';
      try {
        principal = principalOf(request, accounts, tokens).name;
      } catch {
        principal = 'invalid';
      }
      try {
        result = answer(request, url, body, origin);
        if (result.json) result = { ...result, json: selectFields(result.json, url.searchParams.get('fields')) };
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
    };

  const servers: ServingHttp[] = [await serveHttp(handlerFor('http'), { ...(options.host ? { host: options.host } : {}), ...(options.port !== undefined ? { port: options.port } : {}) })];
  if (options.tls) {
    try {
      servers.push(await serveHttp(handlerFor('https'), { ...(options.host ? { host: options.host } : {}), ...(options.httpsPort !== undefined ? { port: options.httpsPort } : {}), tls: options.tls }));
    } catch (error) {
      await servers[0]?.close();
      throw error;
    }
  }
  return {
    endpoint: servers[0]?.endpoint ?? '',
    httpsEndpoint: servers[1]?.endpoint,
    tokenUri: `${servers[0]?.endpoint ?? ''}/token`,
    requests,
    deny: (principal) => void denied.add(principal),
    allow: (principal) => void denied.delete(principal),
    failNext: (count, status, method) => {
      failures = { remaining: count, status, method };
    },
    stop: async () => {
      writer.flush();
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}
