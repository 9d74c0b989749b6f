export { startLocalStack, localStackLogger, type AwsSandboxCredentials, type LocalStack, type LocalStackEndpoints, type LocalStackOptions } from './local-stack.js';
