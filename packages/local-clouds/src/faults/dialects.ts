import { randomUUID } from 'node:crypto';

/** A whole HTTP answer the proxy sends in the backend's place. */
export interface FaultAnswer {
  status: number;
  headers: Record<string, string>;
  /** Left out for HEAD requests, as the clouds do. */
  body: string;
}

/** What the proxy knows of a request when it picks the resource it is about. */
export interface ProxiedRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

/**
 * One cloud API's wire format: how it says "slow down" and "internal error", and which resource a
 * request is about (for per-resource call counts).
 */
export interface CloudDialect {
  name: CloudDialectName;
  /** Throttling answers, one picked per faulted call. */
  throttles: ReadonlyArray<() => FaultAnswer>;
  /** 5xx answers, one picked per faulted call. */
  serverErrors: ReadonlyArray<() => FaultAnswer>;
  /** The bucket, table or container the request is about; `''` for account-level calls (list). */
  resourceOf(request: ProxiedRequest): string;
  /** The API operation, for the call log (`PUT /b`, `CreateTable`, ...). */
  operationOf(request: ProxiedRequest): string;
}

export type CloudDialectName = 's3' | 'dynamodb' | 'gcs' | 'azure-blob' | 'azure-table';

const pathOf = (url: string): string => decodeURIComponent(url.split('?')[0] ?? '');
const segments = (url: string): string[] => pathOf(url).split('/').filter(Boolean);

function jsonBody(body: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

// --- S3: REST/XML, https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html ----------

function s3Error(status: number, code: string, message: string): () => FaultAnswer {
  return () => {
    const requestId = randomUUID().replace(/-/g, '').slice(0, 16).toUpperCase();
    return {
      status,
      headers: { 'content-type': 'application/xml', 'x-amz-request-id': requestId, 'x-amz-id-2': requestId },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${requestId}</RequestId><HostId>${requestId}</HostId></Error>`,
    };
  };
}

const s3: CloudDialect = {
  name: 's3',
  throttles: [s3Error(503, 'SlowDown', 'Please reduce your request rate.')],
  serverErrors: [
    s3Error(500, 'InternalError', 'We encountered an internal error. Please try again.'),
    s3Error(503, 'ServiceUnavailable', 'Service is unable to handle request.'),
  ],
  // Path-style addressing: the bucket is the first segment.
  resourceOf: (request) => segments(request.url)[0] ?? '',
  // `PUT /bucket` (CreateBucket), `PUT /bucket?versioning`, `PUT /bucket/object` (PutObject): the
  // SDK's own `x-id` parameter names no subresource
  operationOf: (request) => {
    const query = (request.url.split('?')[1] ?? '')
      .split('&')
      .map((parameter) => parameter.split('=')[0])
      .find((name) => name && name !== 'x-id');
    const depth = segments(request.url).length;
    return `${request.method} ${depth === 0 ? '/' : depth === 1 ? '/bucket' : '/bucket/object'}${query ? `?${query}` : ''}`;
  },
};

// --- DynamoDB: JSON 1.0 over POST, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html

function dynamoDbError(status: number, type: string, message: string): () => FaultAnswer {
  return () => ({
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
    body: JSON.stringify({ __type: type, message }),
  });
}

const dynamodb: CloudDialect = {
  name: 'dynamodb',
  throttles: [
    dynamoDbError(400, 'com.amazon.coral.availability#ThrottlingException', 'Rate of requests exceeds the allowed throughput.'),
    dynamoDbError(400, 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', 'The level of configured provisioned throughput for the table was exceeded.'),
  ],
  serverErrors: [
    dynamoDbError(500, 'com.amazonaws.dynamodb.v20120810#InternalServerError', 'Internal server error'),
    dynamoDbError(503, 'com.amazon.coral.availability#ServiceUnavailableException', 'Service unavailable'),
  ],
  resourceOf: (request) => {
    const body = jsonBody(request.body);
    if (typeof body['TableName'] === 'string') return body['TableName'];
    // TagResource, ListTagsOfResource, ...: arn:aws:dynamodb:REGION:ACCOUNT:table/NAME
    const arn = body['ResourceArn'] ?? body['ResourceArnList'];
    return typeof arn === 'string' ? (arn.split(':table/')[1]?.split('/')[0] ?? '') : '';
  },
  operationOf: (request) => {
    const target = request.headers['x-amz-target'];
    return (typeof target === 'string' ? target.split('.').pop() : undefined) ?? request.method;
  },
};

// --- GCS: JSON API, https://cloud.google.com/storage/docs/json_api/v1/status-codes ------------------

function gcsError(status: number, reason: string, domain: string, message: string): () => FaultAnswer {
  return () => ({
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    body: JSON.stringify({ error: { code: status, message, errors: [{ message, domain, reason }] } }),
  });
}

const gcs: CloudDialect = {
  name: 'gcs',
  throttles: [gcsError(429, 'rateLimitExceeded', 'usageLimits', 'The project exceeded the rate limit for creating and deleting buckets.')],
  serverErrors: [gcsError(503, 'backendError', 'global', 'Backend Error'), gcsError(500, 'internalError', 'global', 'Internal Error')],
  resourceOf: (request) => {
    // /storage/v1/b/NAME/..., /upload/storage/v1/b/NAME/o; buckets.insert names the bucket in its body
    const parts = segments(request.url);
    const at = parts.indexOf('b');
    if (at >= 0 && parts[at + 1]) return parts[at + 1] ?? '';
    const name = jsonBody(request.body)['name'];
    return request.method === 'POST' && typeof name === 'string' ? name : '';
  },
  operationOf: (request) => {
    const parts = segments(request.url);
    const at = parts.indexOf('b');
    const rest = at >= 0 ? parts.slice(at + 2) : [];
    return `${request.method} /b${at >= 0 && parts[at + 1] ? '/NAME' : ''}${rest.length > 0 ? `/${rest[0]}` : ''}`;
  },
};

// --- Azure Storage: https://learn.microsoft.com/rest/api/storageservices/common-rest-api-error-codes

function azureBlobError(status: number, code: string, message: string): () => FaultAnswer {
  return () => {
    const requestId = randomUUID();
    return {
      status,
      headers: { 'content-type': 'application/xml', 'x-ms-error-code': code, 'x-ms-request-id': requestId, 'x-ms-version': '2025-01-05' },
      body: `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${message}\nRequestId:${requestId}\nTime:${new Date().toISOString()}</Message></Error>`,
    };
  };
}

function azureTableError(status: number, code: string, message: string): () => FaultAnswer {
  return () => {
    const requestId = randomUUID();
    return {
      status,
      headers: { 'content-type': 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8', 'x-ms-error-code': code, 'x-ms-request-id': requestId },
      body: JSON.stringify({ 'odata.error': { code, message: { lang: 'en-US', value: `${message}\nRequestId:${requestId}\nTime:${new Date().toISOString()}` } } }),
    };
  };
}

const SERVER_BUSY = 'The server is currently unable to receive requests. Please retry your request.';
const AZURE_INTERNAL = 'The server encountered an internal error. Please retry the request.';

// Path-style (emulator) URLs: /ACCOUNT/CONTAINER/...
const azureBlob: CloudDialect = {
  name: 'azure-blob',
  throttles: [azureBlobError(503, 'ServerBusy', SERVER_BUSY)],
  serverErrors: [azureBlobError(500, 'InternalError', AZURE_INTERNAL), azureBlobError(500, 'OperationTimedOut', 'The operation could not be completed within the permitted time.')],
  resourceOf: (request) => segments(request.url)[1] ?? '',
  // `PUT /container` (Create Container), `PUT /container?comp=metadata`, `PUT /container/blob` (Put Blob)
  operationOf: (request) => {
    const comp = /[?&]comp=([^&]+)/.exec(request.url)?.[1];
    const depth = segments(request.url).length;
    return `${request.method} ${depth > 2 ? '/container/blob' : depth > 1 ? '/container' : '/'}${comp ? `?comp=${comp}` : ''}`;
  },
};

const azureTable: CloudDialect = {
  name: 'azure-table',
  throttles: [azureTableError(503, 'ServerBusy', SERVER_BUSY)],
  serverErrors: [azureTableError(500, 'InternalError', AZURE_INTERNAL), azureTableError(500, 'OperationTimedOut', 'The operation could not be completed within the permitted time.')],
  resourceOf: (request) => {
    // /ACCOUNT/Tables('NAME'), /ACCOUNT/Tables (create: TableName in the body), /ACCOUNT/NAME()?..., /ACCOUNT/NAME?comp=acl
    const target = segments(request.url)[1] ?? '';
    const quoted = /^Tables\('(.*)'\)$/.exec(target);
    if (quoted) return quoted[1] ?? '';
    if (target === 'Tables') {
      // queryTables names the table in its filter: $filter=TableName eq 'NAME'
      const filtered = /TableName eq '([^']*)'/.exec(decodeURIComponent(request.url.split('?')[1] ?? '').replace(/\+/g, ' '));
      const name = filtered?.[1] ?? jsonBody(request.body)['TableName'];
      return typeof name === 'string' ? name : '';
    }
    return target.replace(/\(.*\)$/, '');
  },
  operationOf: (request) => {
    const target = segments(request.url)[1] ?? '';
    return `${request.method} ${target.startsWith('Tables') ? target.replace(/\('.*'\)$/, '(NAME)') : '/table'}`;
  },
};

/** Every dialect, by the name `startFaultProxy` takes. */
export const CLOUD_DIALECTS: Readonly<Record<CloudDialectName, CloudDialect>> = {
  s3,
  dynamodb,
  gcs,
  'azure-blob': azureBlob,
  'azure-table': azureTable,
};
