/**
 * Annotations and labels k8or reads or writes. Users set the first group;
 * the engine owns the markers.
 */
export const Annotations = {
  /** External (cloud) name; mirrors `spec.name` for tools that expect the Crossplane convention. */
  externalName: 'k8or.io/external-name',
  /** `Delete` or `Retain`; on a resource, or on a namespace as the default for it. */
  deletionPolicy: 'k8or.io/deletion-policy',
  /** Go-style duration (`30m`, `1h`) between drift checks for one resource. */
  resyncPeriod: 'k8or.io/resync-period',
  /** `"true"` lets k8or take over a cloud resource it did not create. */
  adopt: 'k8or.io/adopt',
  /** `"true"` stops all reconciling of one resource. */
  paused: 'k8or.io/paused',
  /** `"true"` makes the webhook deny DELETE of the resource. */
  protect: 'k8or.io/protect',
  /** On a namespace: ProviderConfig used when a resource names none. */
  providerConfig: 'k8or.io/provider-config',
  /** Engine marker: set (RFC 3339 time) just before the first create call. */
  createPending: 'k8or.io/create-pending',
  /** Engine marker: set (RFC 3339 time) once the create call returned success. */
  createSucceeded: 'k8or.io/create-succeeded',
  /**
   * Engine marker: set (RFC 3339 time) when the cloud definitely refused the last create call
   * (a throttle before any effect, a 4xx, a name taken by someone else): nothing of this
   * object's is in the cloud from that attempt. Removed when the next create is sent; it
   * replaces create-pending, so "pending without failed" means the outcome is unknown.
   */
  createFailed: 'k8or.io/create-failed',
} as const;

/** The finalizer the engine puts on every managed resource before any cloud call. */
export const FINALIZER = 'k8or.io/finalizer';

/** Owner tags written on every cloud resource k8or creates, where the cloud has tags. */
export const OwnerTags = {
  managedBy: 'k8or.io/managed-by',
  cluster: 'k8or.io/cluster',
  namespace: 'k8or.io/namespace',
  name: 'k8or.io/name',
  kind: 'k8or.io/kind',
} as const;

/** Value of the `managed-by` owner tag. */
export const MANAGED_BY = 'k8or';
