import { eventsV1Conversion } from './event-conversion.js';
import { ALL_VERBS, resourceKey, type PrinterColumn, type ResourceType } from './types.js';

const AGE: PrinterColumn = { name: 'Age', type: 'string', jsonPath: '.metadata.creationTimestamp', format: 'age' };

function builtin(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  extra: Partial<Pick<ResourceType, 'shortNames' | 'categories' | 'hasGeneration' | 'verbs'>> & { hasStatus?: boolean; columns?: PrinterColumn[] } = {},
): ResourceType {
  return {
    key: resourceKey(group, plural),
    group,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: extra.shortNames ?? [],
    categories: extra.categories ?? [],
    versions: [{ name: version, served: true, storage: true, printerColumns: extra.columns ?? [AGE], hasStatus: extra.hasStatus ?? false }],
    builtin: true,
    hasGeneration: extra.hasGeneration ?? false,
    verbs: extra.verbs ?? ALL_VERBS,
  };
}

function withVersions(type: ResourceType, names: string[]): ResourceType {
  const first = type.versions[0];
  if (!first) return type;
  return { ...type, versions: names.map((name, i) => ({ ...first, name, storage: i === 0 })) };
}

function review(group: string, kind: string, plural: string): ResourceType {
  return { ...builtin(group, 'v1', kind, plural, false, { verbs: ['create'], columns: [] }), review: true };
}

/** The built-in kinds the sandbox serves, with the columns `kubectl get` shows for them. */
export function builtinResources(): ResourceType[] {
  return [
    builtin('', 'v1', 'Service', 'services', true, {
      shortNames: ['svc'],
      categories: ['all'],
      hasStatus: true,
      columns: [
        { name: 'Type', type: 'string', jsonPath: '.spec.type' },
        { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
        { name: 'External-IP', type: 'string', jsonPath: '.status.loadBalancer', format: 'external-ip' },
        { name: 'Port(s)', type: 'string', jsonPath: '.spec.ports', format: 'ports' },
        AGE,
      ],
    }),
    review('authorization.k8s.io', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews'),
    review('authorization.k8s.io', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews'),
    review('authorization.k8s.io', 'SubjectAccessReview', 'subjectaccessreviews'),
    // kubectl 1.27 `auth whoami` asks for v1beta1 (v1 came with 1.28)
    withVersions(review('authentication.k8s.io', 'SelfSubjectReview', 'selfsubjectreviews'), ['v1', 'v1beta1']),
    review('authentication.k8s.io', 'TokenReview', 'tokenreviews'),
    builtin('', 'v1', 'Namespace', 'namespaces', false, {
      shortNames: ['ns'],
      hasStatus: true,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, AGE],
    }),
    builtin('', 'v1', 'Secret', 'secrets', true, {
      columns: [
        { name: 'Type', type: 'string', jsonPath: '.type' },
        { name: 'Data', type: 'integer', jsonPath: '.data', format: 'count' },
        AGE,
      ],
    }),
    builtin('', 'v1', 'ConfigMap', 'configmaps', true, {
      shortNames: ['cm'],
      columns: [{ name: 'Data', type: 'integer', jsonPath: '.data', format: 'data-count' }, AGE],
    }),
    builtin('', 'v1', 'Event', 'events', true, {
      shortNames: ['ev'],
      columns: [
        { name: 'Last Seen', type: 'string', jsonPath: '.lastTimestamp', format: 'event-last-seen' },
        { name: 'Type', type: 'string', jsonPath: '.type' },
        { name: 'Reason', type: 'string', jsonPath: '.reason' },
        { name: 'Object', type: 'string', jsonPath: '.involvedObject', format: 'object-ref' },
        { name: 'Message', type: 'string', jsonPath: '.message' },
        // kubectl shows events without a leading NAME column: the name comes last, at priority 1
        { name: 'Name', type: 'string', jsonPath: '.metadata.name', format: 'name', priority: 1 },
      ],
    }),
    {
      ...builtin('events.k8s.io', 'v1', 'Event', 'events', true, {
      shortNames: ['ev'],
      columns: [
        { name: 'Last Seen', type: 'string', jsonPath: '.eventTime', format: 'event-last-seen' },
        { name: 'Type', type: 'string', jsonPath: '.type' },
        { name: 'Reason', type: 'string', jsonPath: '.reason' },
        { name: 'Object', type: 'string', jsonPath: '.regarding', format: 'object-ref' },
        { name: 'Message', type: 'string', jsonPath: '.note' },
        { name: 'Name', type: 'string', jsonPath: '.metadata.name', format: 'name', priority: 1 },
      ],
      }),
      // one storage with core/v1 Events, served in the events.k8s.io shape
      key: resourceKey('', 'events'),
      conversion: eventsV1Conversion,
    },
    builtin('', 'v1', 'ServiceAccount', 'serviceaccounts', true, { shortNames: ['sa'], columns: [{ name: 'Secrets', type: 'integer', jsonPath: '.secrets', format: 'count' }, AGE] }),
    builtin('apps', 'v1', 'Deployment', 'deployments', true, {
      shortNames: ['deploy'],
      categories: ['all'],
      hasStatus: true,
      hasGeneration: true,
      // no kubelet and no ReplicaSet controller: nothing becomes ready
      columns: [
        { name: 'Ready', type: 'string', jsonPath: '.status.readyReplicas', format: 'ready-of-replicas' },
        { name: 'Up-to-date', type: 'integer', jsonPath: '.status.updatedReplicas' },
        { name: 'Available', type: 'integer', jsonPath: '.status.availableReplicas' },
        AGE,
      ],
    }),
    builtin('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, {
      shortNames: ['pdb'],
      hasStatus: true,
      hasGeneration: true,
      columns: [
        { name: 'Min Available', type: 'string', jsonPath: '.spec.minAvailable', format: 'or-na' },
        { name: 'Max Unavailable', type: 'string', jsonPath: '.spec.maxUnavailable', format: 'or-na' },
        { name: 'Allowed Disruptions', type: 'integer', jsonPath: '.status.disruptionsAllowed' },
        AGE,
      ],
    }),
    builtin('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true, { columns: [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp', format: 'timestamp' }] }),
    builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false, { columns: [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp', format: 'timestamp' }] }),
    builtin('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true, { columns: [{ name: 'Role', type: 'string', jsonPath: '.roleRef', format: 'role-ref' }, AGE] }),
    builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false, { columns: [{ name: 'Role', type: 'string', jsonPath: '.roleRef', format: 'role-ref' }, AGE] }),
    builtin('coordination.k8s.io', 'v1', 'Lease', 'leases', true, {
      columns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }, AGE],
    }),
    builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, {
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      hasStatus: true,
      hasGeneration: true,
      columns: [{ name: 'Created At', type: 'date', jsonPath: '.metadata.creationTimestamp', format: 'timestamp' }],
    }),
    builtin('admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false, {
      categories: ['api-extensions'],
      hasGeneration: true,
      columns: [{ name: 'Webhooks', type: 'integer', jsonPath: '.webhooks', format: 'count' }, AGE],
    }),
    builtin('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false, {
      categories: ['api-extensions'],
      hasGeneration: true,
      columns: [{ name: 'Webhooks', type: 'integer', jsonPath: '.webhooks', format: 'count' }, AGE],
    }),
  ];
}
