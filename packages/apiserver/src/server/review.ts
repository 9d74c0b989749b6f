/**
 * Review kinds (authorization.k8s.io and authentication.k8s.io): answered from the request, never
 * stored. The sandbox has one all-powerful user, so every access review is allowed.
 */
import type { KubeObject } from '../types.js';
import { isObject, stringField } from '../util.js';
import { decodeBody, readBody } from './body.js';
import { checkBodyIdentity } from './admit.js';
import { sendJson } from './respond.js';
import { methodNotAllowed } from '../status.js';
import type { Scope } from './scope.js';

const EVERYTHING = 'the k8or sandbox authorizes every request of its authenticated user';

export async function handleReview(scope: Scope): Promise<void> {
  if (scope.info.verb !== 'create' || scope.info.name) {
    scope.req.resume();
    throw methodNotAllowed();
  }
  const review = checkBodyIdentity(scope, decodeBody(await readBody(scope.req), scope.req.headers['content-type']));
  const spec = isObject(review['spec']) ? review['spec'] : {};
  const user = scope.ctx.user;
  let status: KubeObject;
  switch (scope.type.plural) {
    case 'selfsubjectaccessreviews':
    case 'subjectaccessreviews':
      status = { allowed: true, reason: EVERYTHING };
      break;
    case 'selfsubjectrulesreviews':
      status = {
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        incomplete: false,
      };
      break;
    case 'selfsubjectreviews':
      status = { userInfo: user };
      break;
    default: {
      const authenticated = stringField(spec, 'token') === scope.ctx.token;
      status = authenticated ? { authenticated: true, user, audiences: [] } : { authenticated: false, error: 'invalid bearer token' };
    }
  }
  const { status: _ignored, ...rest } = review;
  sendJson(scope.res, 201, { ...rest, metadata: isObject(review['metadata']) ? review['metadata'] : {}, status }, scope.warnings);
}
