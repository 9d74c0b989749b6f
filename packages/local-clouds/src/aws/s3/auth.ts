import { MAX_CLOCK_SKEW_MS, type SigV4Verdict } from '../sigv4.js';
import { S3Error, S3Errors } from './errors.js';

const SIGNATURE_MISMATCH = 'The request signature we calculated does not match the signature you provided. Check your key and signing method.';

/** Text as S3 shows it in `...Bytes` elements: each byte in hex, separated by spaces. */
const bytesOf = (text: string): string => [...Buffer.from(text, 'utf8')].map((b) => b.toString(16).padStart(2, '0')).join(' ');

/**
 * The error S3 answers for a request whose signature does not prove its access key, or undefined
 * when it does. `headerAuth`: the request carried an Authorization header (else query auth).
 */
export function s3AuthFailure(verdict: SigV4Verdict, headerAuth: boolean, now = new Date()): S3Error | undefined {
  switch (verdict.outcome) {
    case 'valid':
      return undefined;
    case 'anonymous':
      return S3Errors.accessDenied();
    case 'malformed':
      return headerAuth ? new S3Error('AuthorizationHeaderMalformed', 400, verdict.message) : new S3Error('AuthorizationQueryParametersError', 400, verdict.message);
    case 'unsupported':
      return S3Errors.invalidRequest('The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.');
    case 'unknown-key':
      return new S3Error('InvalidAccessKeyId', 403, 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: verdict.auth.accessKeyId });
    case 'invalid-token':
      return new S3Error('InvalidToken', 400, 'The provided token is malformed or otherwise invalid.');
    case 'expired':
      return new S3Error('AccessDenied', 403, 'Request has expired', {
        'X-Amz-Expires': String(verdict.auth.expiresSeconds ?? 0),
        Expires: verdict.expiredAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        ServerTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      });
    case 'skewed':
      return new S3Error('RequestTimeTooSkewed', 403, 'The difference between the request time and the current time is too large.', {
        RequestTime: verdict.auth.amzDate,
        ServerTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        MaxAllowedSkewMilliseconds: String(MAX_CLOCK_SKEW_MS),
      });
    case 'mismatch':
      return new S3Error('SignatureDoesNotMatch', 403, SIGNATURE_MISMATCH, {
        AWSAccessKeyId: verdict.auth.accessKeyId,
        StringToSign: verdict.stringToSign,
        SignatureProvided: verdict.auth.signature,
        StringToSignBytes: bytesOf(verdict.stringToSign),
        CanonicalRequest: verdict.canonicalRequest,
        CanonicalRequestBytes: bytesOf(verdict.canonicalRequest),
      });
  }
}
