export { NAMESPACE, SECRETS_NAMESPACE, base64, conditionOf, isReady, waitFor, type KubeEvent } from './resources.js';
export { ProviderWorld, type WorldEngineOptions } from './world.js';
export { TEST_CLUSTER, bucket, callOptions, connectionContext, ownerTagsOf, table } from './fixtures.js';
export { crdSandboxForSuite, loadExample, startCrdSandbox, type CrdSandbox } from './examples.js';
export { startCannedProxy, type CannedAnswer } from './canned-proxy.js';
export { retryableFailureOf } from './failures.js';
