export { s3BucketFile, startS3Fake, type S3Fake, type S3FakeOptions, type S3FakeRequestRecord } from './s3/index.js';
export { startDynamoDbLocal, type DynamoDbLocal, type DynamoDbLocalOptions } from './dynamodb-local.js';
export { startDynamoDbProxy, type DynamoDbProxy, type DynamoDbProxyOptions } from './dynamodb-proxy/index.js';
