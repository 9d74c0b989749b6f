/**
 * The least an object needs for the informer and its cache: client-node's
 * `KubernetesObject` and @k8or/api's types (string timestamps) both fit.
 */
export interface ObjectWithMetadata {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
}

/**
 * `parts` joined by '/', as one flat string: a key a cache keeps for each of its objects. A
 * template literal or `+` makes a two-part string instead, which V8 flattens into a copy when
 * the key is hashed and keeps both: 48 bytes more per key (docs/benchmarks.md).
 */
export function joinedKey(...parts: string[]): string {
  return parts.join('/');
}

/**
 * A compact record that keeps its own cache key (made by `objectKey` of the object it records):
 * `objectKey` returns that very string, so a cache's map and the record share one copy.
 */
export interface KeptKey {
  readonly cacheKey: string;
}

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc); a record's own `cacheKey` when it keeps one. */
export function objectKey(obj: ObjectWithMetadata): string {
  const kept = (obj as Partial<KeptKey>).cacheKey;
  if (kept !== undefined) return kept;
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace;
  return namespace ? joinedKey(namespace, name) : name;
}

/** Splits a key made by {@link objectKey} back into namespace (undefined when cluster-scoped) and name. */
export function splitObjectKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
