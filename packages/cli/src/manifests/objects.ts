import { GROUP } from '@k8or/api';

/** The kinds of k8or.io a command looks at. */
export const K8OR_KINDS = new Set(['Bucket', 'Table', 'ProviderConfig']);

export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string;
}

/** apiVersion, kind, namespace and name of a manifest object, as far as it has them. */
export function identityOf(object: unknown): ObjectIdentity {
  const o = (object ?? {}) as { apiVersion?: unknown; kind?: unknown; metadata?: { namespace?: unknown; name?: unknown } };
  return {
    apiVersion: typeof o.apiVersion === 'string' ? o.apiVersion : '',
    kind: typeof o.kind === 'string' ? o.kind : '',
    namespace: typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : undefined,
    name: typeof o.metadata?.name === 'string' ? o.metadata.name : '',
  };
}

export const isK8orObject = (id: ObjectIdentity): boolean => id.apiVersion.startsWith(`${GROUP}/`) && K8OR_KINDS.has(id.kind);

/** `Bucket default/photos`, `ProviderConfig default`. */
export function describeObject(id: ObjectIdentity): string {
  if (id.kind === 'ProviderConfig') return `${id.kind} ${id.name || '(no name)'}`;
  return `${id.kind} ${id.namespace ?? 'default'}/${id.name || '(no name)'}`;
}
