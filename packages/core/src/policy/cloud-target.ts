import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import type { CloudTarget, ProviderPlugin } from '../provider/contract.js';

/**
 * The target a provider without `targetOf` points at: the ProviderConfig's fields that move a
 * client (`region`, `project`, `storageAccount`, the Bigtable instance for Tables, and the
 * endpoint for the kind), each '' when unset. Credentials never enter it.
 */
export function defaultCloudTarget(kind: ManagedKindName, providerConfig: ProviderConfig): Record<string, string> {
  const spec = providerConfig.spec;
  const kindEndpoint = kind === 'Bucket' ? spec.endpoints?.bucket : spec.endpoints?.table;
  return {
    region: spec.region ?? '',
    project: spec.project ?? '',
    storageAccount: spec.storageAccount ?? '',
    ...(kind === 'Table' ? { instance: spec.bigtableInstance ?? '' } : {}),
    endpoint: normaliseEndpoint(kindEndpoint ?? spec.endpoint ?? ''),
  };
}

/**
 * Where a client for `kind` of this ProviderConfig points: the plugin's `targetOf` (or
 * `defaultCloudTarget`), with `provider` set from the ProviderConfig and any `endpoint` reduced
 * to scheme, host and path (no query string, user info or trailing slash, so no credential can
 * ride along). Pure: no cloud call, no clock.
 */
export function cloudTargetFor(
  plugin: Pick<ProviderPlugin, 'targetOf'> | undefined,
  kind: ManagedKindName,
  providerConfig: ProviderConfig,
  credentials?: Readonly<Record<string, string>>,
): CloudTarget {
  const own = plugin?.targetOf ? plugin.targetOf(kind, providerConfig, credentials) : defaultCloudTarget(kind, providerConfig);
  const target: Record<string, string> = {};
  for (const [key, value] of Object.entries(own)) target[key] = key === 'endpoint' ? normaliseEndpoint(value) : value;
  target.provider = providerConfig.spec.provider;
  return target;
}

/**
 * Same target: every key both records have holds the same value in both. A key only one has
 * (a provider that reports more parts than when the target was recorded) is no difference;
 * providers therefore emit every key always, '' for the cloud's default, so that a user's edit
 * (an endpoint removed, a region changed) shows as a changed value.
 */
export function sameCloudTarget(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  for (const key of Object.keys(a)) if (Object.hasOwn(b, key) && a[key] !== b[key]) return false;
  return true;
}

/**
 * One string per cloud resource: the target (its non-empty parts, sorted by key), the kind and
 * the external name. Two objects with the same key name one cloud resource: the webhook refuses
 * the second, and the engine lets only the older call the cloud.
 */
export function cloudResourceKey(target: Readonly<Record<string, string>>, kind: ManagedKindName, externalName: string): string {
  return resourceKeyIn(cloudTargetKey(target), kind, externalName);
}

/** The target's part of `cloudResourceKey`: its non-empty parts, sorted by key. */
export function cloudTargetKey(target: Readonly<Record<string, string>>): string {
  return Object.entries(target)
    .filter(([, value]) => value !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join(',');
}

/** `cloudResourceKey` from the target's part (`cloudTargetKey`), for a caller that keeps that part for many objects. */
export function resourceKeyIn(targetKey: string, kind: ManagedKindName, externalName: string): string {
  return `${targetKey}/${kind}/${encodeURIComponent(externalName)}`;
}

/** `https://Host:443/path/?x=y` -> `https://host:443/path`: what identifies an endpoint, nothing that may carry a secret. */
function normaliseEndpoint(endpoint: string): string {
  if (endpoint === '') return '';
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) {
    try {
      const url = new URL(endpoint);
      return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      // Not parseable: fall through to the plain cut below.
    }
  }
  // A bare host:port (or a broken URL): drop user info and anything after a query or fragment mark.
  return endpoint.replace(/[?#].*$/, '').replace(/^[^/@]*@/, '').replace(/\/+$/, '').toLowerCase();
}
