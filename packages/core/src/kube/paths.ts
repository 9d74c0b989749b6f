import { GROUP, KINDS, VERSION, type KindName } from '@k8or/api';

const seg = (value: string): string => encodeURIComponent(value);

/** REST path of a k8or object (or its collection when name is omitted), optionally a subresource. */
export function k8orPath(kind: KindName, namespace: string | undefined, name?: string, subresource?: string): string {
  const names = KINDS[kind];
  let path = `/apis/${GROUP}/${VERSION}`;
  if (names.namespaced && namespace) path += `/namespaces/${seg(namespace)}`;
  path += `/${names.plural}`;
  if (name !== undefined) path += `/${seg(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}

/** REST path of a core/v1 object (`secrets`, `configmaps`, `events`), or of a Namespace when resource is `namespaces`. */
export function corePath(resource: string, namespace: string | undefined, name?: string): string {
  if (resource === 'namespaces') return `/api/v1/namespaces${name !== undefined ? `/${seg(name)}` : ''}`;
  let path = '/api/v1';
  if (namespace) path += `/namespaces/${seg(namespace)}`;
  path += `/${resource}`;
  if (name !== undefined) path += `/${seg(name)}`;
  return path;
}
