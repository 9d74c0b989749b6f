// The GCP side of the direct-call fixtures (the shared ones come from @k8or/provider-testkit).
import { generateKeyPairSync } from 'node:crypto';
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import type { ConnectionContext } from '@k8or/core';
import { callOptions, connectionContext as recordingContext } from '@k8or/provider-testkit';

export { bucket, ownerTagsOf, startCannedProxy, table } from '@k8or/provider-testkit';

export const PROJECT = 'k8or-test-project';
export const INSTANCE = 'k8or-instance';

/** A service-account key as the Cloud console hands it out (a fresh RSA pair), and its public half for the GCS fake. */
export function serviceAccountKey(email: string, project = PROJECT): { key: Record<string, string>; json: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = { type: 'service_account', project_id: project, client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  return { key, json: JSON.stringify(key), publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

export function gcpProviderConfig(endpoints: { bucket?: string; table?: string }, spec: Partial<ProviderConfig['spec']> = {}): ProviderConfig {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'default' },
    spec: { provider: 'gcp', project: PROJECT, bigtableInstance: INSTANCE, endpoints, ...spec },
  };
}

/** A recording ConnectionContext; GCP tests pass credentials only where a test needs a key. */
export const connectionContext = (providerConfig: ProviderConfig, resource: Bucket | Table, secret: Record<string, string> | undefined = undefined): ConnectionContext & { calls: string[] } =>
  recordingContext(providerConfig, resource, secret);

/** A fresh call's options, as the engine passes them. */
export const call = callOptions;
