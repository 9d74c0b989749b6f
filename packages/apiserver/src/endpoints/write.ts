/** POST, PUT and PATCH of resources (main resource and /status). */
import type { KubeObject } from '../types.js';
import { clone, isObject, metadataOf } from '../util.js';
import { applyJsonPatch } from './patch/json.js';
import { defaultFieldManager, serverSideApply } from './patch/managed-fields.js';
import { applyMergePatch } from './patch/merge.js';
import { applyStrategicMergePatch } from './patch/strategic.js';
import { checkBodyIdentity, conflictError, createObject, StaleWrite, trackOptions, updateObject, type WriteOptions } from './admit.js';
import { decodeBody, mediaType, readBody } from './body.js';
import { present, sendObject, type Scope } from './scope.js';
import { ApiError, badRequest, conflict, invalid, methodNotAllowed, notFound } from '../status.js';
import { queryFlag } from './query.js';

const MAX_RETRIES = 5;

function fieldManagerOf(scope: Scope): string {
  const manager = scope.query.get('fieldManager');
  if (manager !== null && manager.length > 128) throw badRequest('fieldManager: Too long: may not be longer than 128');
  return manager || defaultFieldManager(scope.req.headers['user-agent']);
}

async function body(scope: Scope): Promise<unknown> {
  return decodeBody(await readBody(scope.req), scope.req.headers['content-type']);
}

export async function handleCreate(scope: Scope): Promise<void> {
  if (scope.info.subresource || scope.info.name) throw methodNotAllowed();
  const obj = checkBodyIdentity(scope, await body(scope));
  const created = await createObject(scope, obj, { fieldManager: fieldManagerOf(scope) });
  sendObject(scope, 201, created);
}

function checkSubresource(scope: Scope): void {
  const sub = scope.info.subresource;
  if (sub === '') return;
  if (sub === 'status' && scope.version.hasStatus) return;
  if (sub === 'finalize' && scope.type.key === '/namespaces' && scope.info.verb === 'update') return;
  throw notFound(scope.type.group, `${scope.type.plural}/${sub}`, scope.info.name);
}

export async function handleUpdate(scope: Scope): Promise<void> {
  checkSubresource(scope);
  const { ctx, type, info } = scope;
  const obj = checkBodyIdentity(scope, await body(scope));
  const meta = metadataOf(obj);
  if (meta['name'] !== undefined && meta['name'] !== info.name) {
    throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${info.name})`);
  }
  meta['name'] = info.name;
  const wantedVersion = meta['resourceVersion'];
  if (!allowsUnconditionalUpdate(scope) && (typeof wantedVersion !== 'string' || wantedVersion === '')) {
    // custom resources and CRDs refuse a PUT that does not say which version it replaces
    throw invalid(type.kind, type.group, info.name, [{ field: 'metadata.resourceVersion', reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update' }]);
  }
  const fieldManager = fieldManagerOf(scope);
  for (let attempt = 0; ; attempt++) {
    const old = ctx.store.get(type.key, info.namespace, info.name);
    if (!old) throw notFound(type.group, type.plural, info.name);
    const wanted = meta['resourceVersion'];
    if (typeof wanted === 'string' && wanted !== '' && wanted !== metadataOf(old)['resourceVersion']) throw conflictError(scope, info.name);
    const uid = meta['uid'];
    if (typeof uid === 'string' && uid !== '' && uid !== metadataOf(old)['uid']) {
      throw conflict(type.group, type.plural, info.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${String(metadataOf(old)['uid'])}`);
    }
    try {
      const result = await updateObject(scope, old, obj, { fieldManager });
      sendObject(scope, 200, result.object);
      return;
    } catch (err) {
      if (!(err instanceof StaleWrite)) throw err;
      if ((typeof wanted === 'string' && wanted !== '') || attempt >= MAX_RETRIES) throw conflictError(scope, info.name);
    }
  }
}

/** kube-apiserver allows a PUT without metadata.resourceVersion for most built-in kinds, not for CRs and CRDs. */
function allowsUnconditionalUpdate(scope: Scope): boolean {
  return scope.type.builtin && scope.type.key !== 'apiextensions.k8s.io/customresourcedefinitions';
}

type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

function patchKind(scope: Scope): PatchKind {
  const type = mediaType(scope.req.headers['content-type']);
  const accepted = scope.type.builtin
    ? 'application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml'
    : 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';
  const unsupported = (): ApiError => new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted}`);
  switch (type) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      if (!scope.type.builtin) throw unsupported();
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      if (type.endsWith('cbor')) throw unsupported();
      return 'apply';
    default:
      throw unsupported();
  }
}

export async function handlePatch(scope: Scope): Promise<void> {
  checkSubresource(scope);
  const kind = patchKind(scope);
  const raw = await readBody(scope.req);
  const patch = decodeBody(raw, kind === 'apply' ? 'application/yaml' : 'application/json');
  if (kind === 'apply') {
    await applyServerSide(scope, patch);
    return;
  }
  if (kind !== 'json' && !isObject(patch)) throw badRequest('the patch must be a JSON object');
  const { ctx, type, info } = scope;
  const fieldManager = fieldManagerOf(scope);
  for (let attempt = 0; ; attempt++) {
    const old = ctx.store.get(type.key, info.namespace, info.name);
    if (!old) throw notFound(type.group, type.plural, info.name);
    // no copy: every patch kind builds a new object and leaves its target (the stored object) as it is
    const current = present(scope, old);
    let patched: KubeObject;
    if (kind === 'json') patched = applyJsonPatch(current, patch);
    else if (kind === 'merge') patched = applyMergePatch(current, patch) as KubeObject;
    else patched = applyStrategicMergePatch(current, patch);
    const wanted = metadataOf(patched)['resourceVersion'];
    if (typeof wanted === 'string' && wanted !== metadataOf(old)['resourceVersion']) throw conflictError(scope, info.name);
    const checked = checkBodyIdentity(scope, patched);
    if (metadataOf(checked)['name'] !== info.name) throw badRequest('metadata.name: Invalid value: the name of a patched object cannot change');
    try {
      const result = await updateObject(scope, old, checked, { fieldManager });
      sendObject(scope, 200, result.object);
      return;
    } catch (err) {
      if (!(err instanceof StaleWrite)) throw err;
      if (attempt >= MAX_RETRIES) throw conflictError(scope, info.name);
    }
  }
}

/** application/apply-patch+yaml: create or update from an applied configuration (server-side apply). */
async function applyServerSide(scope: Scope, patch: unknown): Promise<void> {
  const { ctx, type, info } = scope;
  const manager = scope.query.get('fieldManager');
  if (!manager) throw badRequest('PATCH, application/apply-patch+yaml requires fieldManager to be set');
  const force = queryFlag(scope.query, 'force');
  if (!isObject(patch)) throw badRequest('error decoding YAML: the applied configuration must be an object');
  const applied = checkBodyIdentity(scope, patch);
  if (patch['apiVersion'] === undefined || patch['kind'] === undefined) throw badRequest('apiVersion and kind must be set in an applied configuration');
  const meta = metadataOf(applied);
  if (meta['name'] !== undefined && meta['name'] !== info.name) throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${info.name})`);
  meta['name'] = info.name;
  const options: WriteOptions = { fieldManager: manager, applied, force };
  for (let attempt = 0; ; attempt++) {
    const old = ctx.store.get(type.key, info.namespace, info.name);
    if (!old) {
      if (info.subresource) throw notFound(type.group, type.plural, info.name);
      const created = await createObject(scope, applied, options);
      sendObject(scope, 201, created);
      return;
    }
    // merge and conflicts are computed against the live object; the pipeline then admits the result
    const trial = serverSideApply(present(scope, clone(old)), applied, manager, scope.apiVersion, force, trackOptions(scope));
    try {
      const result = await updateObject(scope, old, trial, { fieldManager: manager, managedFieldsComputed: true });
      sendObject(scope, 200, result.object);
      return;
    } catch (err) {
      if (!(err instanceof StaleWrite)) throw err;
      if (attempt >= MAX_RETRIES) throw conflictError(scope, info.name);
    }
  }
}
