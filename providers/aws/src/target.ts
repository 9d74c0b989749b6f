import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import { DEFAULT_REGION, endpointFor } from './config.js';

/**
 * Where a client of this ProviderConfig points, for the engine's pinned target and its "one object
 * per cloud resource" key. A Table lives in one region (DynamoDB names are per account and region);
 * a Bucket's name is global to S3 and its region is the bucket's own (spec.location), so the region
 * is no part of a Bucket's target. The endpoint is the kind's override ('' for AWS itself). The
 * account is not known without a call (STS GetCallerIdentity), so it is left out: a bucket or table
 * met in another account shows as someone else's, or by another identity.
 */
export function awsTargetOf(kind: ManagedKindName, providerConfig: ProviderConfig): Record<string, string> {
  const endpoint = endpointFor(providerConfig, kind) ?? '';
  return kind === 'Table' ? { region: providerConfig.spec.region ?? DEFAULT_REGION, endpoint } : { endpoint };
}
