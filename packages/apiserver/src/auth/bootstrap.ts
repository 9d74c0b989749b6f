/** The bootstrap RBAC policy every kube-apiserver creates at start (the part clients of the sandbox meet). */
import type { KubeObject } from '../types.js';

const RBAC = 'rbac.authorization.k8s.io';
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };

function clusterRole(name: string, rules: KubeObject[]): KubeObject {
  return { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name, labels: BOOTSTRAP_LABELS, annotations: AUTOUPDATE }, rules };
}

function clusterRoleBinding(name: string, groups: string[]): KubeObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: BOOTSTRAP_LABELS, annotations: AUTOUPDATE },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name },
    subjects: groups.map((group) => ({ apiGroup: RBAC, kind: 'Group', name: group })),
  };
}

/** ClusterRoles and ClusterRoleBindings, by kind. */
export function bootstrapPolicy(): { clusterRoles: KubeObject[]; clusterRoleBindings: KubeObject[] } {
  return {
    clusterRoles: [
      clusterRole('cluster-admin', [
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        { nonResourceURLs: ['*'], verbs: ['*'] },
      ]),
      clusterRole('system:discovery', [
        { nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'], verbs: ['get'] },
      ]),
      clusterRole('system:basic-user', [
        { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
        { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
      ]),
      clusterRole('system:public-info-viewer', [{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]),
    ],
    clusterRoleBindings: [
      clusterRoleBinding('cluster-admin', ['system:masters']),
      clusterRoleBinding('system:discovery', ['system:authenticated']),
      clusterRoleBinding('system:basic-user', ['system:authenticated']),
      clusterRoleBinding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
    ],
  };
}
