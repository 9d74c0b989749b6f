/**
 * Review kinds (authorization.k8s.io and authentication.k8s.io): answered from the request, never
 * stored. Access reviews ask the RBAC authorizer (without recording them as use of a grant).
 */
import type { KubeObject } from '../types.js';
import { isObject, stringField } from '../util.js';
import { decodeBody, readBody } from './body.js';
import { checkBodyIdentity } from './admit.js';
import { sendJson } from './respond.js';
import { methodNotAllowed } from '../status.js';
import type { Scope } from './scope.js';
import type { UserInfo } from '../auth/user.js';
import type { RequestAttributes } from '../auth/rbac.js';

function attributesOf(spec: Record<string, unknown>): RequestAttributes {
  const resource = isObject(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
  if (resource) {
    return {
      verb: stringField(resource, 'verb') ?? '',
      resourceRequest: true,
      apiGroup: stringField(resource, 'group') ?? '',
      resource: stringField(resource, 'resource') ?? '',
      subresource: stringField(resource, 'subresource') ?? '',
      namespace: stringField(resource, 'namespace') ?? '',
      name: stringField(resource, 'name') ?? '',
      path: '',
    };
  }
  const nonResource = isObject(spec['nonResourceAttributes']) ? spec['nonResourceAttributes'] : {};
  return { verb: stringField(nonResource, 'verb') ?? '', resourceRequest: false, apiGroup: '', resource: '', subresource: '', namespace: '', name: '', path: stringField(nonResource, 'path') ?? '' };
}

function accessStatus(scope: Scope, user: UserInfo, spec: Record<string, unknown>): KubeObject {
  const decision = scope.ctx.authorizer.authorize(user, attributesOf(spec));
  if (!decision.allowed) return { allowed: false };
  if (decision.grants.length === 0) return { allowed: true };
  const first = decision.grants[0]!;
  return { allowed: true, reason: `RBAC: allowed by ${first.binding} of ${first.role} to ${user.username}` };
}

function rulesStatus(scope: Scope, user: UserInfo, namespace: string): KubeObject {
  if (user.groups.includes('system:masters')) {
    return { resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false };
  }
  const grants = scope.ctx.authorizer.grantsOf(user).filter((g) => g.binding.startsWith('ClusterRoleBinding') || g.binding.startsWith(`RoleBinding ${namespace}/`));
  return {
    resourceRules: grants.filter((g) => g.resource !== undefined).map((g) => ({ verbs: [g.verb], apiGroups: [g.apiGroup], resources: [g.resource], ...(g.resourceName ? { resourceNames: [g.resourceName] } : {}) })),
    nonResourceRules: grants.filter((g) => g.nonResourceURL !== undefined).map((g) => ({ verbs: [g.verb], nonResourceURLs: [g.nonResourceURL] })),
    incomplete: false,
  };
}

export async function handleReview(scope: Scope): Promise<void> {
  if (scope.info.verb !== 'create' || scope.info.name) {
    scope.req.resume();
    throw methodNotAllowed();
  }
  const review = checkBodyIdentity(scope, decodeBody(await readBody(scope.req), scope.req.headers['content-type']));
  const spec = isObject(review['spec']) ? review['spec'] : {};
  const user = scope.user;
  let status: KubeObject;
  switch (scope.type.plural) {
    case 'selfsubjectaccessreviews':
      status = accessStatus(scope, user, spec);
      break;
    case 'subjectaccessreviews': {
      const groups = Array.isArray(spec['groups']) ? spec['groups'].filter((g): g is string => typeof g === 'string') : [];
      status = accessStatus(scope, { username: stringField(spec, 'user') ?? '', uid: stringField(spec, 'uid') ?? '', groups }, spec);
      break;
    }
    case 'selfsubjectrulesreviews':
      status = rulesStatus(scope, user, stringField(spec, 'namespace') ?? '');
      break;
    case 'selfsubjectreviews': {
      // authentication/v1 UserInfo: uid and extra are omitted when empty
      const { uid, extra, ...named } = user;
      status = { userInfo: { ...named, ...(uid ? { uid } : {}), ...(extra && Object.keys(extra).length > 0 ? { extra } : {}) } };
      break;
    }
    default: {
      const reviewed = scope.ctx.authenticator.userOfToken(stringField(spec, 'token') ?? '');
      status = reviewed ? { authenticated: true, user: reviewed, audiences: [] } : { authenticated: false, error: 'invalid bearer token' };
    }
  }
  const { status: _ignored, ...rest } = review;
  sendJson(scope.res, 201, { ...rest, metadata: isObject(review['metadata']) ? review['metadata'] : {}, status }, scope.warnings);
}
