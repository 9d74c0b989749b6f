// The AWS side of the direct-call fixtures (the shared ones come from @k8or/provider-testkit).
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import type { CallOptions, ConnectionContext } from '@k8or/core';
import { callOptions, connectionContext as recordingContext } from '@k8or/provider-testkit';

export { bucket, ownerTagsOf, table } from '@k8or/provider-testkit';

export const ACCESS_KEY = 'AKIAK8ORTEST0000001';
export const SECRET_KEY = 'k8or-test-secret';
export const credentials = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };

export function awsProviderConfig(endpoints: { bucket?: string; table?: string }, region = 'us-east-1'): ProviderConfig {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'default' },
    spec: { provider: 'aws', region, endpoints, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-creds' } } },
  };
}

/** A recording ConnectionContext with our access keys unless the test hands others. */
export const connectionContext = (providerConfig: ProviderConfig, resource: Bucket | Table, secret: Record<string, string> | undefined = credentials): ConnectionContext & { calls: string[] } =>
  recordingContext(providerConfig, resource, secret);

/** Call options for direct provider calls in tests: a signal that never aborts. */
export const call: CallOptions = callOptions();
