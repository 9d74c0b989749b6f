export * from './cloud-rate-limits.js';
export { TokenBucket } from '../util/token-bucket.js';
export { beforeCloudAttempt } from './attempt-tokens.js';
