/** One atomic permission a bound RBAC rule gives: one verb on one group/resource (or one URL). A leaf. */
export interface Grant {
  /** `ClusterRoleBinding NAME` or `RoleBinding NAMESPACE/NAME`. */
  binding: string;
  /** `ClusterRole NAME` or `Role NAMESPACE/NAME`. */
  role: string;
  rule: number;
  verb: string;
  apiGroup?: string;
  resource?: string;
  resourceName?: string;
  nonResourceURL?: string;
}
