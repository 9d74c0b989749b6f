import type { DeletionPolicy, ManagedKindName, ProviderConfig, Violation } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';

/** admission.k8s.io/v1 AdmissionReview, as kube-apiserver sends and expects it. */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  /** The object as it would be stored; null on DELETE. */
  object?: unknown;
  /** The stored object on UPDATE and DELETE. */
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface AdmissionStatus {
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; kind?: string; group?: string; causes: StatusCause[] };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** Base64 of a JSON array of RFC 6902 operations. */
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** A Namespace as far as admission reads it: its annotations. */
export interface NamespaceInfo {
  metadata: { name?: string; annotations?: Record<string, string> };
}

/** A managed resource that names (or defaults to) a ProviderConfig. */
export interface ResourceRef {
  kind: string;
  namespace: string;
  name: string;
}

/**
 * Everything admission needs to know about the world, answered synchronously
 * (from informer caches in the server, from files or fixed values offline).
 * Rules never call the API server.
 */
export interface AdmissionContext {
  /** Installed provider plugins keyed by `ProviderConfig.spec.provider`. */
  providers: ReadonlyMap<string, ProviderPlugin>;
  getProviderConfig(name: string): ProviderConfig | undefined;
  /** undefined when the namespace is unknown (offline, or not yet in the cache). */
  getNamespace(name: string): NamespaceInfo | undefined;
  /** The operator's default deletion policy (its `--default-deletion-policy` flag). */
  defaultDeletionPolicy: DeletionPolicy;
  /** Namespaces whose Secrets the operator can read; `'*'` for every namespace. */
  secretNamespaces: readonly string[] | '*';
  /**
   * The engine's cluster id, folded into default external names (unique per
   * cluster). Without it the webhook leaves `spec.name` for the engine to decide.
   */
  clusterId?: string;
  /** The engine's shortest resync period (its `--resync-floor`); default 10 s. */
  resyncFloorMs?: number;
  /**
   * Managed resources that use the named ProviderConfig (explicitly or by default).
   * Omitted offline, where the orphan check is skipped.
   */
  resourcesUsingProviderConfig?(name: string): ResourceRef[];
  /**
   * Buckets or Tables of `kind` that may name the cloud resource `externalName`:
   * those whose `spec.name` (else `k8or.io/external-name` annotation) is
   * `externalName`, and those that name none yet (their default name decides).
   * Each carries at least its metadata (name, namespace, creationTimestamp,
   * deletionTimestamp, annotations), `spec.name` and `spec.providerConfigRef`.
   * Omitted offline, where the one-object check is skipped.
   */
  resourcesNaming?(kind: ManagedKindName, externalName: string): readonly unknown[];
  /** A Bucket or Table in the cluster (as `resourcesNaming` gives it), or undefined. */
  getResource?(kind: ManagedKindName, namespace: string, name: string): unknown;
}

/** What validation found: everything at once, never only the first problem. */
export interface ValidationOutcome {
  violations: Violation[];
  warnings: string[];
}

/** One RFC 6902 operation (the webhook only adds). */
export interface JsonPatchOperation {
  op: 'add' | 'replace' | 'remove' | 'test';
  path: string;
  value?: unknown;
}

/** What defaulting decided: the operations, the object they produce, and warnings about what it could not decide. */
export interface DefaultingOutcome {
  patch: JsonPatchOperation[];
  object: unknown;
  warnings: string[];
}
