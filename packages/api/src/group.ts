/** API group of every k8or kind. */
export const GROUP = 'k8or.io';
/** The one served version. */
export const VERSION = 'v1alpha1';
/** `apiVersion` value of every k8or object. */
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** The kinds k8or serves, with their REST names. */
export const KINDS = {
  Bucket: { kind: 'Bucket', plural: 'buckets', singular: 'bucket', listKind: 'BucketList', namespaced: true, shortNames: ['bkt'] },
  Table: { kind: 'Table', plural: 'tables', singular: 'table', listKind: 'TableList', namespaced: true, shortNames: ['tbl'] },
  ProviderConfig: {
    kind: 'ProviderConfig',
    plural: 'providerconfigs',
    singular: 'providerconfig',
    listKind: 'ProviderConfigList',
    namespaced: false,
    shortNames: ['pc'],
  },
} as const;

export type KindName = keyof typeof KINDS;
/** The kinds that stand for a cloud resource (everything but ProviderConfig). */
export type ManagedKindName = 'Bucket' | 'Table';
export const MANAGED_KINDS: readonly ManagedKindName[] = ['Bucket', 'Table'];

/** The category every k8or CRD joins, so `kubectl get k8or` lists them all. */
export const CATEGORY = 'k8or';

/** Name of the cluster's default ProviderConfig. */
export const DEFAULT_PROVIDER_CONFIG_NAME = 'default';
