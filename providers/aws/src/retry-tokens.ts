import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { beforeCloudAttempt } from '@k8or/core';

/**
 * Makes every HTTP attempt of the client's calls after the first (the SDK's
 * standard retries) wait for a token of the call's rate-limit bucket, as AWS
 * counts every attempt. The middleware sits right below the SDK's retry
 * middleware, so it runs once per attempt, after the SDK's backoff.
 */
export function takeTokenPerAttempt<C extends S3Client | DynamoDBClient>(client: C): C {
  const stack = client.middlewareStack as S3Client['middlewareStack'];
  const middleware =
    <Args, Result>(next: (args: Args) => Promise<Result>) =>
    async (args: Args): Promise<Result> => {
      await beforeCloudAttempt();
      return await next(args);
    };
  stack.addRelativeTo(middleware, { relation: 'after', toMiddleware: 'retryMiddleware', name: 'k8orRetryTokenMiddleware', override: true },
  );
  return client;
}
