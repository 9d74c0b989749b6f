import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { SigV4Verdict } from '../sigv4.js';

/** A DynamoDB error answer: HTTP status, the JSON 1.0 `__type` (namespace#Name) and its message. */
export class DynamoDbError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const API = 'com.amazonaws.dynamodb.v20120810';
const CORAL = 'com.amazon.coral.service';

export const DynamoDbErrors = {
  validation: (message: string) => new DynamoDbError('com.amazon.coral.validate#ValidationException', message),
  resourceNotFound: (arn: string) => new DynamoDbError(`${API}#ResourceNotFoundException`, `Requested resource not found: ResourcArn: ${arn} not found`),
  tableNotFound: (table: string) => new DynamoDbError(`${API}#TableNotFoundException`, `Table not found: ${table}`),
  internal: (message: string) => new DynamoDbError(`${API}#InternalServerError`, message, 500),
} as const;

/** A DynamoDB answer (JSON 1.0): what the fake's handlers return and errors become. */
export interface DynamoDbAnswer {
  status: number;
  body: Buffer;
  headers: Record<string, string>;
}

/** A JSON 1.0 answer with DynamoDB's headers (request id, CRC32 of the body). */
export function jsonAnswer(status: number, document: unknown): DynamoDbAnswer {
  const body = Buffer.from(JSON.stringify(document), 'utf8');
  return {
    status,
    body,
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(body.length),
      'x-amzn-requestid': randomBytes(26).toString('base64url').toUpperCase().slice(0, 52),
      'x-amz-crc32': String(crc32(body) >>> 0),
    },
  };
}

export function errorAnswer(error: DynamoDbError): DynamoDbAnswer {
  return jsonAnswer(error.status, { __type: error.type, message: error.message });
}

/** The error DynamoDB answers for a request whose signature does not prove its access key, or undefined when it does. */
export function dynamoDbAuthFailure(verdict: SigV4Verdict): DynamoDbError | undefined {
  switch (verdict.outcome) {
    case 'valid':
      return undefined;
    case 'anonymous':
      return new DynamoDbError(`${CORAL}#MissingAuthenticationTokenException`, 'Request is missing Authentication Token');
    case 'malformed':
      return new DynamoDbError(`${CORAL}#IncompleteSignatureException`, verdict.message);
    case 'unsupported':
      return new DynamoDbError(`${CORAL}#IncompleteSignatureException`, 'Authorization header requires the AWS4-HMAC-SHA256 algorithm.');
    case 'unknown-key':
    case 'invalid-token':
      return new DynamoDbError(`${CORAL}#UnrecognizedClientException`, 'The security token included in the request is invalid.');
    case 'expired':
      return new DynamoDbError(`${CORAL}#InvalidSignatureException`, `Signature expired: ${verdict.auth.amzDate} is now earlier than the request's expiry.`);
    case 'skewed': {
      const amz = (date: Date): string => date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
      const now = new Date();
      const early = verdict.requestTime < now;
      const limit = new Date(now.getTime() + (early ? -1 : 1) * 15 * 60 * 1000);
      return new DynamoDbError(
        `${CORAL}#InvalidSignatureException`,
        `Signature ${early ? 'expired' : 'not yet current'}: ${verdict.auth.amzDate} is now ${early ? 'earlier' : 'later'} than ${amz(limit)} (${amz(now)} ${early ? '-' : '+'} 15 min.)`,
      );
    }
    case 'mismatch':
      return new DynamoDbError(
        `${CORAL}#InvalidSignatureException`,
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      );
  }
}
