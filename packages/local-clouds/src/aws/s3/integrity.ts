import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { S3Error } from './errors.js';
import type { S3Request } from './request.js';

/**
 * Operations whose body S3 accepts only with an integrity check (Content-MD5 or a flexible
 * x-amz-checksum-* header): `httpChecksumRequired` in the S3 API model. Keyed `METHOD subresource`.
 */
const CHECKSUM_REQUIRED = new Set(['POST delete', 'PUT tagging', 'PUT versioning', 'PUT lifecycle', 'PUT encryption', 'PUT publicAccessBlock']);

const digestOf = (algorithm: 'md5' | 'sha256', body: Buffer, encoding: 'base64' | 'hex'): string => createHash(algorithm).update(body).digest(encoding);

function crc32Base64(body: Buffer): string {
  const value = Buffer.alloc(4);
  value.writeUInt32BE(crc32(body) >>> 0);
  return value.toString('base64');
}

const header = (request: S3Request, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** A flexible checksum the client sent, as a header or as a trailer of an aws-chunked body. */
const checksum = (request: S3Request, name: string): string | undefined => header(request, name) ?? request.trailers[name];

/**
 * Checks the body against the digests the client sent, as S3 does: x-amz-content-sha256 (a hex
 * payload hash, unless UNSIGNED-PAYLOAD or streaming), Content-MD5 and x-amz-checksum-crc32/sha256
 * (a header, or a trailer of an aws-chunked body; other algorithms are kept, not checked).
 * Operations that require an integrity check are refused without one.
 */
export function checkIntegrity(request: S3Request, subresource: string): void {
  const { body } = request;
  const payloadHash = header(request, 'x-amz-content-sha256');
  if (payloadHash && /^[0-9a-f]{64}$/.test(payloadHash) && payloadHash !== digestOf('sha256', body, 'hex')) {
    throw new S3Error('XAmzContentSHA256Mismatch', 400, "The provided 'x-amz-content-sha256' header does not match what was computed.");
  }
  const md5 = header(request, 'content-md5');
  if (md5 !== undefined) {
    if (Buffer.from(md5, 'base64').length !== 16) throw new S3Error('InvalidDigest', 400, 'The Content-MD5 you specified was invalid.');
    if (md5 !== digestOf('md5', body, 'base64')) throw new S3Error('BadDigest', 400, 'The Content-MD5 you specified did not match what we received.');
  }
  const crc = checksum(request, 'x-amz-checksum-crc32');
  if (crc !== undefined && crc !== crc32Base64(body)) throw new S3Error('BadDigest', 400, 'The CRC32 you specified did not match the calculated checksum.');
  const sha256 = checksum(request, 'x-amz-checksum-sha256');
  if (sha256 !== undefined && sha256 !== digestOf('sha256', body, 'base64')) {
    throw new S3Error('BadDigest', 400, 'The SHA256 you specified did not match the calculated checksum.');
  }
  const hasChecksum = md5 !== undefined || Object.keys(request.headers).some((name) => name.startsWith('x-amz-checksum-'));
  if (!hasChecksum && request.key === undefined && CHECKSUM_REQUIRED.has(`${request.method} ${subresource}`)) {
    throw new S3Error('InvalidRequest', 400, 'Missing required header for this request: Content-MD5');
  }
}
