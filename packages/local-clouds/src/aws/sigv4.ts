import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';

// Signature Version 4 for the AWS fakes: the request is signed again with the secret the backend
// knows for its access key, by @smithy/signature-v4 (the AWS SDK's own signer), and the two
// signatures compared. Header auth (`Authorization: AWS4-HMAC-SHA256 ...`) and query auth
// (presigned URLs, `X-Amz-Signature=...`) both. Each service answers a verdict in its own error format.

/** The credential scope and signing details a request carries. */
export interface SigV4Auth {
  kind: 'header' | 'query';
  accessKeyId: string;
  /** The scope's date, YYYYMMDD. */
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  /** `X-Amz-Date` (YYYYMMDDTHHMMSSZ; verifySigV4 refuses a request without one). */
  amzDate: string;
  /** Query auth: `X-Amz-Expires`, in seconds. */
  expiresSeconds?: number;
  sessionToken?: string;
}

/** What a request's signature proves. */
export type SigV4Verdict =
  | { outcome: 'valid'; auth: SigV4Auth }
  /** No Authorization header and no query auth: an anonymous request. */
  | { outcome: 'anonymous' }
  | { outcome: 'malformed'; message: string }
  /** Signature Version 2 (`Authorization: AWS key:signature`, `?AWSAccessKeyId=...&Signature=...`). */
  | { outcome: 'unsupported' }
  | { outcome: 'unknown-key'; auth: SigV4Auth }
  /** A session token this backend never issued. */
  | { outcome: 'invalid-token'; auth: SigV4Auth }
  | { outcome: 'mismatch'; auth: SigV4Auth; canonicalRequest: string; stringToSign: string }
  /** A presigned URL past its expiry. */
  | { outcome: 'expired'; auth: SigV4Auth; expiredAt: Date }
  /** Header auth dated more than 15 minutes from the server's clock (AWS refuses it, the SDKs correct their clock). */
  | { outcome: 'skewed'; auth: SigV4Auth; requestTime: Date };

/** The parts of an HTTP request a signature covers. */
export interface SignedHttpRequest {
  method: string;
  /** The request target as received: path and query, still encoded. */
  rawUrl: string;
  headers: IncomingHttpHeaders;
  body: Uint8Array;
}

export interface SigV4Options {
  /**
   * Whether the canonical path is the path encoded once more (every service but S3), or the path as
   * sent (S3).
   */
  uriEscapePath: boolean;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const SHA256_HEADER = 'x-amz-content-sha256';
/** Query auth parameters the signer adds itself. */
const QUERY_AUTH_PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature', 'X-Amz-Security-Token'];
const MAX_PRESIGNED_SECONDS = 7 * 24 * 60 * 60;
/** How far a signed request's date may be from the clock, as AWS allows. */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;

const firstHeader = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function parseScope(credential: string): { accessKeyId: string; date: string; region: string; service: string } | undefined {
  const match = /^([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request$/.exec(credential);
  if (!match) return undefined;
  const [, accessKeyId = '', date = '', region = '', service = ''] = match;
  return { accessKeyId, date, region, service };
}

/**
 * The signing details of a request, without checking them: header auth or query auth; `anonymous`
 * when it carries neither; `malformed` with S3's wording when it carries one that cannot be read;
 * `unsupported` for Signature Version 2.
 */
export function parseSigV4(rawUrl: string, headers: IncomingHttpHeaders): SigV4Auth | { anonymous: true } | { malformed: string } | { unsupported: true } {
  const authorization = firstHeader(headers, 'authorization');
  const query = new URL(rawUrl, 'http://sigv4.local').searchParams;
  if (authorization?.startsWith('AWS ') || (authorization === undefined && query.has('AWSAccessKeyId'))) return { unsupported: true };
  if (authorization !== undefined) {
    if (!authorization.startsWith(`${ALGORITHM} `)) return { malformed: `Unsupported Authorization Type (expected ${ALGORITHM})` };
    const fields = new Map(
      authorization
        .slice(ALGORITHM.length + 1)
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
        .map((part): [string, string] => {
          const eq = part.indexOf('=');
          return eq < 0 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)];
        }),
    );
    const scope = parseScope(fields.get('Credential') ?? '');
    const signedHeaders = fields.get('SignedHeaders');
    const signature = fields.get('Signature');
    if (!scope) return { malformed: "Authorization header requires 'Credential' parameter of the form KEY/YYYYMMDD/REGION/SERVICE/aws4_request." };
    if (!signedHeaders) return { malformed: "Authorization header requires 'SignedHeaders' parameter." };
    if (!signature) return { malformed: "Authorization header requires 'Signature' parameter." };
    const amzDate = firstHeader(headers, 'x-amz-date') ?? '';
    const sessionToken = firstHeader(headers, 'x-amz-security-token');
    return { kind: 'header', ...scope, signedHeaders: signedHeaders.split(';'), signature, amzDate, ...(sessionToken ? { sessionToken } : {}) };
  }
  if (!query.has('X-Amz-Signature') && !query.has('X-Amz-Credential')) return { anonymous: true };
  if (query.get('X-Amz-Algorithm') !== ALGORITHM) return { malformed: `X-Amz-Algorithm only supports "${ALGORITHM}"` };
  const scope = parseScope(query.get('X-Amz-Credential') ?? '');
  const amzDate = query.get('X-Amz-Date') ?? '';
  const expires = Number(query.get('X-Amz-Expires') ?? 'NaN');
  const signedHeaders = query.get('X-Amz-SignedHeaders');
  const signature = query.get('X-Amz-Signature');
  if (!scope || !/^\d{8}T\d{6}Z$/.test(amzDate) || !signedHeaders || !signature || !Number.isInteger(expires) || expires < 0) {
    return { malformed: 'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.' };
  }
  if (expires > MAX_PRESIGNED_SECONDS) return { malformed: `X-Amz-Expires must be less than a week (in seconds) that is ${MAX_PRESIGNED_SECONDS}` };
  const sessionToken = query.get('X-Amz-Security-Token');
  return { kind: 'query', ...scope, signedHeaders: signedHeaders.split(';'), signature, amzDate, expiresSeconds: expires, ...(sessionToken ? { sessionToken } : {}) };
}

/** `20240102T030405Z` as a Date. */
export function parseAmzDate(amzDate: string): Date {
  const [, y, mo, d, h, mi, s] = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate) ?? [];
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
}

/** The signer of the AWS SDK, keeping the canonical request and string to sign it made, for error answers. */
class ExplainingSigner extends SignatureV4 {
  canonicalRequest = '';
  stringToSign = '';

  protected override createCanonicalRequest(...args: Parameters<SignatureV4['createCanonicalRequest']>): string {
    this.canonicalRequest = super.createCanonicalRequest(...args);
    return this.canonicalRequest;
  }

  protected override async createStringToSign(...args: Parameters<SignatureV4['createStringToSign']>): Promise<string> {
    this.stringToSign = await super.createStringToSign(...args);
    return this.stringToSign;
  }
}

function sameSignature(expected: string, provided: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(provided, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function queryOf(rawUrl: string, drop: readonly string[]): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of new URL(rawUrl, 'http://sigv4.local').searchParams) {
    if (drop.includes(name)) continue;
    const existing = query[name];
    query[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return query;
}

/**
 * Checks a request's Signature Version 4 against `secrets` (access key id -> secret access key),
 * by signing it again with @smithy/signature-v4. `now` decides presigned URL expiry and clock skew.
 */
export async function verifySigV4(request: SignedHttpRequest, secrets: Readonly<Record<string, string>>, options: SigV4Options, now = new Date()): Promise<SigV4Verdict> {
  const parsed = parseSigV4(request.rawUrl, request.headers);
  if ('anonymous' in parsed) return { outcome: 'anonymous' };
  if ('malformed' in parsed) return { outcome: 'malformed', message: parsed.malformed };
  if ('unsupported' in parsed) return { outcome: 'unsupported' };
  const auth = parsed;
  if (!/^\d{8}T\d{6}Z$/.test(auth.amzDate)) return { outcome: 'malformed', message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header." };
  const secretAccessKey = Object.hasOwn(secrets, auth.accessKeyId) ? secrets[auth.accessKeyId] : undefined;
  if (secretAccessKey === undefined) return { outcome: 'unknown-key', auth };
  if (auth.sessionToken !== undefined) return { outcome: 'invalid-token', auth };

  const signingDate = parseAmzDate(auth.amzDate);
  const signed = new Set(auth.signedHeaders);
  const headers: Record<string, string> = {};
  for (const name of auth.signedHeaders) {
    const value = request.headers[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const path = request.rawUrl.split('?')[0] ?? '/';
  const signer = new ExplainingSigner({ credentials: { accessKeyId: auth.accessKeyId, secretAccessKey }, region: auth.region, service: auth.service, sha256: Sha256, uriEscapePath: options.uriEscapePath, applyChecksum: false });
  const base = { method: request.method, protocol: 'http:', hostname: headers['host'] ?? '', path };
  let expected: string;
  if (auth.kind === 'header') {
    if (Math.abs(now.getTime() - signingDate.getTime()) > MAX_CLOCK_SKEW_MS) return { outcome: 'skewed', auth, requestTime: signingDate };
    const signedRequest = await signer.sign(
      { ...base, query: queryOf(request.rawUrl, []), headers, body: request.body },
      { signingDate, signingRegion: auth.region, signingService: auth.service, signableHeaders: signed },
    );
    expected = /Signature=([0-9a-f]+)/.exec(String(signedRequest.headers['authorization']))?.[1] ?? '';
  } else {
    const expiredAt = new Date(signingDate.getTime() + (auth.expiresSeconds ?? 0) * 1000);
    if (now > expiredAt) return { outcome: 'expired', auth, expiredAt };
    // A presigned URL signs no payload (UNSIGNED-PAYLOAD), whatever the body.
    const presigned = await signer.presign(
      { ...base, query: queryOf(request.rawUrl, QUERY_AUTH_PARAMS), headers: { ...headers, ...(signed.has(SHA256_HEADER) ? {} : { [SHA256_HEADER]: UNSIGNED_PAYLOAD }) } },
      {
        signingDate,
        expiresIn: auth.expiresSeconds ?? 0,
        signingRegion: auth.region,
        signingService: auth.service,
        signableHeaders: signed,
        unsignableHeaders: signed.has(SHA256_HEADER) ? new Set() : new Set([SHA256_HEADER]),
        unhoistableHeaders: new Set([...signed, SHA256_HEADER]),
      },
    );
    const signature = presigned.query?.['X-Amz-Signature'];
    expected = typeof signature === 'string' ? signature : '';
  }
  if (!sameSignature(expected, auth.signature)) return { outcome: 'mismatch', auth, canonicalRequest: signer.canonicalRequest, stringToSign: signer.stringToSign };
  return { outcome: 'valid', auth };
}
