import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import { emulatorHostOf } from './settings.js';

/**
 * Where a client of this ProviderConfig points, for the engine's pinned target and its "one object
 * per cloud resource" key. A Table lives in one project's Bigtable instance; a Bucket's name is
 * global to Cloud Storage (another project's bucket of that name answers 403, and is someone
 * else's), so the project is no part of a Bucket's target: its identity (projectNumber) tells a
 * bucket of another project. The endpoint is the kind's override ('' for Google itself).
 * Credentials never enter it.
 */
export function gcpTargetOf(kind: ManagedKindName, providerConfig: ProviderConfig): Record<string, string> {
  const { spec } = providerConfig;
  if (kind === 'Table') return { project: spec.project ?? '', instance: spec.bigtableInstance ?? '', endpoint: emulatorHostOf(spec.endpoints?.table) ?? '' };
  return { endpoint: spec.endpoints?.bucket ?? spec.endpoint ?? '' };
}
