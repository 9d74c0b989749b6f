/** The TokenRequest subresource (`POST .../serviceaccounts/NAME/token`, what `kubectl create token` calls). */
import { isObject } from '../util.js';
import { DEFAULT_TOKEN_SECONDS, MIN_TOKEN_SECONDS } from '../auth/authenticate.js';
import { decodeBody, readBody } from './body.js';
import { sendJson } from './respond.js';
import { invalid, methodNotAllowed, notFound } from '../status.js';
import type { Scope } from './scope.js';

const MAX_TOKEN_SECONDS = 48 * 3600;

export async function handleTokenRequest(scope: Scope): Promise<void> {
  const { info } = scope;
  if (info.verb !== 'create') {
    scope.req.resume();
    throw methodNotAllowed();
  }
  const body = decodeBody(await readBody(scope.req), scope.req.headers['content-type']);
  const request = isObject(body) ? body : {};
  const serviceAccount = scope.ctx.store.get('/serviceaccounts', info.namespace, info.name);
  if (!serviceAccount) throw notFound('', 'serviceaccounts', info.name);
  const spec = isObject(request['spec']) ? request['spec'] : {};
  const seconds = typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : DEFAULT_TOKEN_SECONDS;
  if (seconds < MIN_TOKEN_SECONDS) {
    throw invalid('TokenRequest', 'authentication.k8s.io', info.name, [
      { field: 'spec.expirationSeconds', reason: 'FieldValueInvalid', message: `Invalid value: ${seconds}: may not specify a duration less than ${MIN_TOKEN_SECONDS} seconds` },
    ]);
  }
  const audiences = Array.isArray(spec['audiences']) ? spec['audiences'].filter((a): a is string => typeof a === 'string') : [];
  const expirationSeconds = Math.min(seconds, MAX_TOKEN_SECONDS);
  const issued = scope.ctx.authenticator.issue(serviceAccount, expirationSeconds, audiences);
  const metadata = isObject(request['metadata']) ? request['metadata'] : {};
  sendJson(scope.res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { ...metadata, name: info.name, namespace: info.namespace, creationTimestamp: null },
    spec: { ...spec, audiences: audiences.length > 0 ? audiences : ['https://kubernetes.default.svc.cluster.local'], expirationSeconds },
    status: issued,
  });
}
