/**
 * S3 error responses, with the codes, HTTP statuses and messages of the S3 API reference
 * (docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html).
 */
export class S3Error extends Error {
  readonly code: string;
  readonly status: number;
  /** Extra elements of the `<Error>` document, such as `BucketName`. */
  readonly details: Record<string, string>;
  /** Extra response headers, such as `x-amz-bucket-region` on a redirect. */
  readonly headers: Record<string, string>;

  constructor(code: string, status: number, message: string, details: Record<string, string> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.details = details;
    this.headers = headers;
  }
}

export const S3Errors = {
  accessDenied: () => new S3Error('AccessDenied', 403, 'Access Denied'),
  noSuchBucket: (bucket: string) => new S3Error('NoSuchBucket', 404, 'The specified bucket does not exist', { BucketName: bucket }),
  noSuchKey: (key: string) => new S3Error('NoSuchKey', 404, 'The specified key does not exist.', { Key: key }),
  noSuchVersion: (key: string, versionId: string) =>
    new S3Error('NoSuchVersion', 404, 'The specified version does not exist.', { Key: key, VersionId: versionId }),
  bucketAlreadyExists: (bucket: string) =>
    new S3Error(
      'BucketAlreadyExists',
      409,
      'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.',
      { BucketName: bucket },
    ),
  bucketAlreadyOwnedByYou: (bucket: string) =>
    new S3Error('BucketAlreadyOwnedByYou', 409, 'Your previous request to create the named bucket succeeded and you already own it.', { BucketName: bucket }),
  bucketNotEmpty: (bucket: string) => new S3Error('BucketNotEmpty', 409, 'The bucket you tried to delete is not empty', { BucketName: bucket }),
  invalidBucketName: (bucket: string) => new S3Error('InvalidBucketName', 400, 'The specified bucket is not valid.', { BucketName: bucket }),
  invalidLocationConstraint: (constraint: string) =>
    new S3Error('InvalidLocationConstraint', 400, 'The specified location-constraint is not valid', { LocationConstraint: constraint }),
  illegalLocationConstraint: (message: string) => new S3Error('IllegalLocationConstraintException', 400, message),
  malformedXml: () =>
    new S3Error('MalformedXML', 400, 'The XML you provided was not well-formed or did not validate against our published schema'),
  invalidArgument: (message: string, name?: string, value?: string) =>
    new S3Error('InvalidArgument', 400, message, name === undefined ? {} : { ArgumentName: name, ArgumentValue: value ?? '' }),
  invalidTag: (message: string) => new S3Error('InvalidTag', 400, message),
  invalidRequest: (message: string) => new S3Error('InvalidRequest', 400, message),
  noSuchTagSet: (bucket: string) => new S3Error('NoSuchTagSet', 404, 'The TagSet does not exist', { BucketName: bucket }),
  noSuchEncryption: (bucket: string) =>
    new S3Error('ServerSideEncryptionConfigurationNotFoundError', 404, 'The server side encryption configuration was not found', { BucketName: bucket }),
  noSuchPublicAccessBlock: (bucket: string) =>
    new S3Error('NoSuchPublicAccessBlockConfiguration', 404, 'The public access block configuration was not found', { BucketName: bucket }),
  noSuchLifecycle: (bucket: string) =>
    new S3Error('NoSuchLifecycleConfiguration', 404, 'The lifecycle configuration does not exist', { BucketName: bucket }),
  permanentRedirect: (bucket: string, region: string) =>
    new S3Error(
      'PermanentRedirect',
      301,
      'The bucket you are attempting to access must be addressed using the specified endpoint. Please send all future requests to this endpoint.',
      { Endpoint: `s3.${region}.amazonaws.com`, Bucket: bucket },
      { 'x-amz-bucket-region': region },
    ),
  slowDown: () => new S3Error('SlowDown', 503, 'Please reduce your request rate.'),
  notImplemented: () => new S3Error('NotImplemented', 501, 'A header you provided implies functionality that is not implemented'),
  methodNotAllowed: () => new S3Error('MethodNotAllowed', 405, 'The specified method is not allowed against this resource.'),
} as const;
