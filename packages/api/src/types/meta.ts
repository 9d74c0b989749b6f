/** The parts of Kubernetes ObjectMeta that k8or reads or writes. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** The condition types every managed resource carries. */
export const ConditionTypes = {
  /** The cloud resource exists and is usable. */
  Ready: 'Ready',
  /** The last reconcile brought the cloud in line with the spec (or reported why not). */
  Synced: 'Synced',
  /**
   * kstatus (sigs.k8s.io/cli-utils): the operator is working toward the spec (creating, applying a
   * change, deleting, retrying, waiting for a ProviderConfig or Secret). Present only while True.
   */
  Reconciling: 'Reconciling',
  /** kstatus: the operator cannot go on until a user acts (reason and message say what). Present only while True. */
  Stalled: 'Stalled',
} as const;
