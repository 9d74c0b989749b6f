// The clouds as the suite reads them: the real SDKs, configured from the ProviderConfig and Secret a
// run applies, through the providers' own reading of them (region, endpoint per kind, credentials),
// so the suite looks where the operator writes. Credentials from the environment are this machine's.
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Storage } from '@google-cloud/storage';
import type { ProviderConfig } from '@k8or/api';
import { clientSettings } from '@k8or/provider-aws';
import { gcpSettings } from '@k8or/provider-gcp';
import { credentialsSecretData, type ProviderSettings } from './provider-settings.ts';

function expectProvider(config: ProviderConfig, provider: string): void {
  if (config.spec.provider !== provider) throw new Error(`ProviderConfig ${config.metadata.name ?? ''} is for ${config.spec.provider}, not ${provider}`);
}

/** S3 and DynamoDB clients for an AWS ProviderConfig. */
export function awsClients(settings: ProviderSettings, config: ProviderConfig): { s3: S3Client; dynamodb: DynamoDBClient } {
  expectProvider(config, 'aws');
  const secret = credentialsSecretData(settings, config);
  return { s3: new S3Client(clientSettings(config, secret, 'Bucket')), dynamodb: new DynamoDBClient(clientSettings(config, secret, 'Table')) };
}

/** A Cloud Storage client for a GCP ProviderConfig. */
export function gcsClient(settings: ProviderSettings, config: ProviderConfig): Storage {
  expectProvider(config, 'gcp');
  const gcp = gcpSettings(config, credentialsSecretData(settings, config), 'Bucket');
  return new Storage({
    projectId: gcp.project,
    ...(gcp.storageEndpoint ? { apiEndpoint: gcp.storageEndpoint.replace(/\/+$/, '') } : {}),
    ...(gcp.serviceAccountKey ? { credentials: gcp.serviceAccountKey, useAuthWithCustomEndpoint: true } : {}),
  });
}
