/** DELETE of one object and of a collection. */
import type { KubeObject } from '../types.js';
import { isObject, metadataOf } from '../util.js';
import { commitDeletion, planDeletion } from '../registry/lifecycle.js';
import { admissionRequest } from './admit.js';
import { decodeBody, readBody } from './body.js';
import { selectorFor } from './read.js';
import { present, sendObject, type RequestScope, type Scope } from './scope.js';
import { sendJson } from './respond.js';
import { conflict, forbidden, methodNotAllowed, notFound, successStatus } from '../status.js';

/** The real server's NamespaceLifecycle admission refuses to delete these. */
const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

async function deleteOptions(scope: Scope): Promise<Record<string, unknown>> {
  const raw = await readBody(scope.req);
  if (raw.length === 0 || raw.toString('utf8').trim() === '') return {};
  const decoded = decodeBody(raw, scope.req.headers['content-type']);
  return isObject(decoded) ? decoded : {};
}

/** Delete one stored object through admission; returns what the client is told and whether it is gone. */
export async function deleteOne(scope: RequestScope, current: KubeObject, options: Record<string, unknown>): Promise<{ object: KubeObject; deleted: boolean }> {
  const { ctx, type } = scope;
  const meta = metadataOf(current);
  const name = String(meta['name'] ?? '');
  const preconditions = isObject(options['preconditions']) ? options['preconditions'] : {};
  if (typeof preconditions['uid'] === 'string' && preconditions['uid'] !== meta['uid']) {
    throw conflict(type.group, type.plural, name, `Precondition failed: UID in precondition: ${preconditions['uid']}, UID in object meta: ${String(meta['uid'])}`);
  }
  if (typeof preconditions['resourceVersion'] === 'string' && preconditions['resourceVersion'] !== meta['resourceVersion']) {
    throw conflict(type.group, type.plural, name, `Precondition failed: ResourceVersion in precondition: ${preconditions['resourceVersion']}, ResourceVersion in object meta: ${String(meta['resourceVersion'])}`);
  }
  const request = admissionRequest(scope, 'DELETE', name, undefined, present(scope, current), '');
  scope.warnings.push(...(await ctx.admission.mutate(request)).warnings);
  scope.warnings.push(...(await ctx.admission.validate(request)));
  const latest = ctx.store.get(type.key, String(meta['namespace'] ?? ''), name);
  if (!latest) throw notFound(type.group, type.plural, name);
  const plan = planDeletion(type, latest);
  if (scope.dryRun) return plan;
  const propagation = options['propagationPolicy'] ?? scope.query.get('propagationPolicy') ?? (options['orphanDependents'] === true ? 'Orphan' : undefined);
  if (propagation === 'Orphan') ctx.garbageCollector.orphanDependents(String(meta['uid'] ?? ''), type.namespaced ? String(meta['namespace'] ?? '') : '');
  return { object: commitDeletion(ctx.store, type, latest, plan), deleted: plan.deleted };
}

export async function handleDelete(scope: Scope): Promise<void> {
  if (scope.info.subresource) throw methodNotAllowed();
  const { ctx, type, info } = scope;
  const options = await deleteOptions(scope);
  const current = ctx.store.get(type.key, info.namespace, info.name);
  if (!current) throw notFound(type.group, type.plural, info.name);
  if (type.key === '/namespaces' && IMMORTAL_NAMESPACES.has(info.name)) {
    throw forbidden('', 'namespaces', info.name, 'this namespace may not be deleted');
  }
  const result = await deleteOne(scope, current, options);
  // 202 while finalizers hold the object; CRs answer with the object, built-ins with a Status once gone
  if (!result.deleted) {
    sendObject(scope, 202, result.object);
  } else if (type.builtin && type.key !== '/namespaces') {
    const meta = metadataOf(result.object);
    sendJson(scope.res, 200, successStatus({ name: info.name, group: type.group, kind: type.plural, uid: String(meta['uid'] ?? '') }), scope.warnings);
  } else {
    sendObject(scope, 200, result.object);
  }
}

export async function handleDeleteCollection(scope: Scope): Promise<void> {
  const { ctx, type, info } = scope;
  if (!type.verbs.includes('deletecollection')) throw methodNotAllowed();
  const options = await deleteOptions(scope);
  const matches = selectorFor(scope);
  const deleted: KubeObject[] = [];
  for (const obj of ctx.store.list(type.key, info.namespace || undefined)) {
    if (!matches(obj)) continue;
    const result = await deleteOne(scope, obj, options);
    deleted.push(present(scope, result.object));
  }
  if (type.builtin) {
    sendJson(scope.res, 200, successStatus(), scope.warnings);
    return;
  }
  sendJson(scope.res, 200, { apiVersion: scope.apiVersion, kind: type.listKind, metadata: { resourceVersion: String(ctx.store.resourceVersion) }, items: deleted }, scope.warnings);
}
