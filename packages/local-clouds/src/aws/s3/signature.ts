import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { S3Error } from './errors.js';

/** RFC 3986 encoding as SigV4 wants it: everything but unreserved characters. */
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  return rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const decode = (text: string): string => decodeURIComponent(text.replace(/\+/g, '%20'));
      const [name, value] = eq < 0 ? [decode(pair), ''] : [decode(pair.slice(0, eq)), decode(pair.slice(eq + 1))];
      return [uriEncode(name), uriEncode(value)] as const;
    })
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();

const SIGNATURE_MISMATCH = 'The request signature we calculated does not match the signature you provided. Check your key and signing method.';

/**
 * Verifies an `Authorization: AWS4-HMAC-SHA256 ...` header (Signature Version 4, header auth) against
 * the secret of its access key, as S3 does: InvalidAccessKeyId for an unknown key,
 * SignatureDoesNotMatch for a wrong signature.
 */
export function verifySignatureV4(method: string, rawUrl: string, headers: IncomingHttpHeaders, secrets: Readonly<Record<string, string>>): void {
  const authorization = headers.authorization ?? '';
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request,\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) throw new S3Error('AccessDenied', 403, 'Access Denied');
  const [, accessKeyId = '', date = '', region = '', service = '', signedHeaders = '', signature = ''] = match;
  const secret = secrets[accessKeyId];
  if (secret === undefined) throw new S3Error('InvalidAccessKeyId', 403, 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: accessKeyId });
  const amzDate = String(headers['x-amz-date'] ?? '');
  const queryStart = rawUrl.indexOf('?');
  const path = queryStart < 0 ? rawUrl : rawUrl.slice(0, queryStart);
  const query = queryStart < 0 ? '' : rawUrl.slice(queryStart + 1);
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => {
      const value = headers[name];
      const text = Array.isArray(value) ? value.join(',') : (value ?? '');
      return `${name}:${text.trim().replace(/\s+/g, ' ')}\n`;
    })
    .join('');
  const payloadHash = String(headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD');
  const canonicalRequest = [method, path, canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonicalRequest, 'utf8').digest('hex')].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = hmac(signingKey, stringToSign);
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    throw new S3Error('SignatureDoesNotMatch', 403, SIGNATURE_MISMATCH, { AWSAccessKeyId: accessKeyId, StringToSign: stringToSign });
  }
}
