/**
 * Who makes a request, as k8s.io/apiserver's authentication/user.Info: a leaf every layer imports,
 * importing nothing itself.
 */
export interface UserInfo {
  username: string;
  uid: string;
  groups: string[];
  /** Extra attributes (user.Info's GetExtra), e.g. from Impersonate-Extra-* headers. */
  extra?: Record<string, string[]>;
}
