export { startLocalStack, localStackLogger, type LocalStack, type LocalStackEndpoints, type LocalStackOptions } from './local-stack.js';
