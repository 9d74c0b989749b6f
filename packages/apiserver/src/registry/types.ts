/** What the server knows about a served resource (built-in or from a CRD). */

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ResourceVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** openAPIV3Schema, for CRDs. */
  schema?: unknown;
  printerColumns: PrinterColumn[];
  hasStatus: boolean;
  /** Set for a deprecated CRD version: the warning every request to it gets. */
  deprecationWarning?: string;
}

/** Converts between the shape a resource is served in and the shape it is stored in (when they differ). */
export interface StorageConversion {
  toStorage(obj: Record<string, unknown>): Record<string, unknown>;
  fromStorage(obj: Record<string, unknown>): Record<string, unknown>;
}

export interface ResourceType {
  /** Storage key shared by every version (`group/plural`; events.k8s.io Events share core's `/events`). */
  key: string;
  /** Set when the served shape differs from the stored one. */
  conversion?: StorageConversion;
  group: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  versions: ResourceVersion[];
  builtin: boolean;
  /** Whether metadata.generation is kept (CRs, CRDs, webhook configurations). */
  hasGeneration: boolean;
  /** Name of the CRD serving this resource. */
  crdName?: string;
  verbs: string[];
  /** Create-only review kinds (SelfSubjectAccessReview, TokenReview, ...): answered, never stored. */
  review?: boolean;
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}
