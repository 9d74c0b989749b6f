import type { TableServiceClientOptions } from '@azure/data-tables';
import { beforeCloudAttempt } from '@k8or/core';

/** A core-rest-pipeline policy, as both SDKs take it. */
export type PipelinePolicy = NonNullable<TableServiceClientOptions['additionalPolicies']>[number]['policy'];
/** What the Blob SDK's core (`@azure/core-rest-pipeline`) pipeline offers to add a policy. */
export interface PolicyPipeline {
  addPolicy(policy: PipelinePolicy, options: { afterPhase: 'Retry' }): void;
}

/**
 * A pipeline policy placed after the SDK's retry policy, so it runs once per
 * HTTP attempt: every attempt after a call's first (the SDK's retries) waits
 * for a token of the call's rate-limit bucket, as Azure counts every attempt.
 * The clients are shared across ProviderConfigs; the bucket comes with the
 * call (`beforeCloudAttempt`), not with the client.
 */
export const retryTokenPolicy: PipelinePolicy = {
  name: 'k8orRetryTokenPolicy',
  async sendRequest(request, next) {
    await beforeCloudAttempt();
    return await next(request);
  },
};
