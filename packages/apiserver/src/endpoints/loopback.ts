/**
 * The API as the server's own controllers reach it, as kube-controller-manager's reach kube-apiserver
 * through a client: a controller's delete takes the DELETE path a user's takes (mutating and
 * validating admission, preconditions, finalizers), sent as the controller's own user. It is served
 * in process, so it is neither recorded in the request log nor given injected faults.
 */
import type { UserInfo } from '../auth/user.js';
import type { DeleteThroughApi } from '../controllers/api.js';
import { apiVersionOf } from '../registry/types.js';
import { ApiError } from '../status.js';
import type { ServerContext } from './context.js';
import { deleteOne } from './delete.js';
import type { RequestScope } from './scope.js';


/** The controller identities kube-controller-manager uses (`--use-service-account-credentials`). */
export function controllerUser(controller: string): UserInfo {
  return {
    username: `system:serviceaccount:kube-system:${controller}`,
    uid: '',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
  };
}

/** Deletes through the API as `user`. Rejects with the ApiError a client would get (a webhook's denial: 403). */
export function loopbackDeleter(ctx: ServerContext, user: UserInfo): DeleteThroughApi {
  return async (type, namespace, name, uid) => {
    const current = ctx.store.get(type.key, namespace, name);
    if (!current) return;
    const version = type.versions.find((v) => v.storage) ?? type.versions[0];
    if (!version) return;
    const scope: RequestScope = {
      ctx,
      user,
      info: { namespace, subresource: '' },
      query: new URLSearchParams(),
      type,
      version,
      apiVersion: apiVersionOf(type.group, version.name),
      dryRun: false,
      warnings: [],
    };
    try {
      await deleteOne(scope, current, { preconditions: { uid } });
    } catch (err) {
      // gone while it was admitted: what the delete asked for
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
  };
}
