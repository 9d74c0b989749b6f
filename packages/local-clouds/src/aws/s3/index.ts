export { startS3Fake, type S3Fake, type S3FakeOptions, type S3FakeRequestRecord } from './server.js';
export { s3BucketFile } from './persistence.js';
