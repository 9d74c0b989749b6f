import type { Condition } from './meta.js';

/** Names the ProviderConfig (cluster-scoped) a resource uses. */
export interface ProviderConfigReference {
  name: string;
}

/** What happens to the cloud resource when the Kubernetes object is deleted. */
export type DeletionPolicy = 'Delete' | 'Retain';
export const DELETION_POLICIES: readonly DeletionPolicy[] = ['Delete', 'Retain'];

/** `Manage` reads and writes the cloud; `ObserveOnly` only reads and reports. */
export type ManagementPolicy = 'Manage' | 'ObserveOnly';
export const MANAGEMENT_POLICIES: readonly ManagementPolicy[] = ['Manage', 'ObserveOnly'];

/** Names a ConfigMap, in the resource's namespace, that the engine keeps filled with outputs. */
export interface OutputsReference {
  name: string;
}

/**
 * What a resync does with a setting the cloud changed behind k8or's back: `Repair` writes the
 * spec's value back, `Report` shows the difference (status, Event) and never writes it, `Hold`
 * shows it and writes it back only once a user approves exactly that difference.
 */
export type DriftMode = 'Repair' | 'Report' | 'Hold';
export const DRIFT_MODES: readonly DriftMode[] = ['Repair', 'Report', 'Hold'];

/** The mode for settings under one spec path. */
export interface DriftFieldPolicy {
  /** Spec path, such as `spec.versioning` or `spec.labels`: the setting and everything under it. */
  path: string;
  mode: DriftMode;
}

/** How a resync treats drift: a default mode and per-path overrides (the longest matching path wins). */
export interface DriftPolicy {
  default?: DriftMode;
  fields?: DriftFieldPolicy[];
}

/** Spec fields shared by every managed kind. */
export interface ManagedSpec {
  providerConfigRef?: ProviderConfigReference;
  /** External (cloud) name. Defaulted when empty, immutable once set. */
  name?: string;
  labels?: Record<string, string>;
  deletionPolicy?: DeletionPolicy;
  managementPolicy?: ManagementPolicy;
  writeOutputsTo?: OutputsReference;
  driftPolicy?: DriftPolicy;
}

/** What the provider last observed in the cloud. */
export interface AtProvider {
  /** Cloud identifier: ARN, resource path or URL. */
  id?: string;
  url?: string;
  location?: string;
  createdTime?: string;
  /** Cloud-side lifecycle state, such as `ACTIVE` or `CREATING`. */
  state?: string;
  /** Approximate item count (tables). */
  itemCount?: number;
  /** The cloud's entity tag for the resource's current state (Azure containers). */
  etag?: string;
  /** When the resource or its settings last changed in the cloud (Azure containers). */
  lastModified?: string;
}

/** One setting where the cloud differs from the spec (ObserveOnly reports them in status.drift). */
export interface DriftEntry {
  /** Spec path, such as `spec.versioning`. */
  field: string;
  /** What the spec asks for; absent when the spec leaves it unset. */
  desired?: unknown;
  /** What the cloud has; absent when the cloud has it unset. */
  actual?: unknown;
  /**
   * What k8or does with it: a drift mode on a resync, `Protected` for a protection k8or does not
   * lower on its own, absent for a change on its way (a new generation, or being repaired).
   */
  mode?: DriftMode | 'Protected';
}

/** Status shared by every managed kind. */
export interface ManagedStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  /** The cloud (`aws`, `gcp`, `azure`) the resource lives in. */
  provider?: string;
  atProvider?: AtProvider;
  /**
   * Where the cloud differs from the spec, as last observed: under ObserveOnly, a protection k8or
   * holds (ProtectionHeld), or a change not in effect yet (ChangesPending). Absent when it matches.
   */
  drift?: DriftEntry[];
  /** How many settings differ (the length of `drift`): the DRIFT column of `kubectl get`. */
  driftCount?: number;
  /**
   * Digest of the drift held for approval (driftPolicy Hold): annotate the object with
   * `k8or.io/approve-drift: <digest>` to have exactly that difference repaired. Absent when
   * nothing is held.
   */
  heldDriftDigest?: string;
  /**
   * How often the cloud is checked for drift, as a Go duration (`1h`, `30s`): the
   * `k8or.io/resync-period` annotation, else the operator's default, never below its floor.
   */
  driftCheckInterval?: string;
  /**
   * Digest of the spec (without `driftPolicy`) the cloud was last brought in line with: a new
   * generation that changed only the drift policy is no request to apply the spec.
   */
  appliedSpecDigest?: string;
  /**
   * For each protection the cloud reports (`spec.deletionProtection`, say), a digest of the spec's
   * value at that field when the cloud was last brought in line. A protection set outside k8or is
   * lowered only when the spec's value there changed since: another edit of the spec asks nothing of it.
   */
  appliedProtection?: Record<string, string>;
  /** The value of the `k8or.io/reconcile-requested-at` annotation the last reconcile handled. */
  lastHandledReconcileAt?: string;
  /**
   * Where the cloud resource lives (provider, account, region, project, storage account,
   * instance, endpoint): recorded when k8or created the resource or proved it its own. An
   * object whose ProviderConfig now resolves elsewhere stops with a condition. Never holds
   * credentials.
   */
  target?: Record<string, string>;
  /**
   * The cloud's own identity of the resource (a DynamoDB TableId, a GCS bucket's timeCreated
   * and project number, an S3 bucket's creation date), recorded when k8or created the resource
   * or proved it its own. A resource found later under the name whose identity differs was
   * replaced by someone else: k8or stops and never writes to it.
   */
  identity?: Record<string, string>;
}
