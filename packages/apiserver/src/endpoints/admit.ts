/**
 * The write pipeline every create and update goes through, in kube-apiserver's order:
 * defaults → mutating webhooks → kind rules and system metadata → schema (prune, default,
 * validate, CEL) → validating webhooks → store (skipped on dryRun).
 */
import type { KubeObject } from '../types.js';
import { clone, isObject, metadataOf, stringField } from '../util.js';
import type { AdmissionRequest } from '../admission/chain.js';
import { schemaProblems, type FieldValidation } from '../registry/schema-cache.js';
import {
  bumpGenerationIfSpecChanged,
  finalizersOf,
  generatedName,
  initCreateMetadata,
  isNoOpUpdate,
  isTerminating,
  keepSystemMetadata,
  validateCommonMetadata,
  validateObjectName,
} from '../registry/meta.js';
import { prepareForCreate, prepareForUpdate, validateBuiltin } from '../registry/strategies.js';
import { builtinListTypes, schemaListTypes } from './patch/list-types.js';
import { recordApplyCreate, recordUpdate, type TrackOptions } from './patch/managed-fields.js';
import { schemaFor, type RequestScope, type Scope } from './scope.js';
import type { ApiError} from '../status.js';
import { alreadyExists, badRequest, conflict, forbidden, invalid, notFound, type FieldCause } from '../status.js';

/** Thrown when the stored object changed while a write was being admitted; patches retry. */
export class StaleWrite extends Error {}

export interface WriteOptions {
  fieldManager: string;
  /** Set for server-side apply: the applied configuration. */
  applied?: KubeObject;
  force?: boolean;
  /** managedFields already worked out (server-side apply of an existing object). */
  managedFieldsComputed?: boolean;
}

function fieldValidation(scope: Scope): FieldValidation {
  const v = scope.query.get('fieldValidation');
  if (v === 'Strict' || v === 'Ignore' || v === 'Warn') return v;
  if (v) throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got "${v}"`);
  return 'Warn';
}

export function trackOptions(scope: Scope): TrackOptions {
  return {
    subresource: scope.info.subresource === 'status' ? 'status' : '',
    statusIsSubresource: scope.version.hasStatus,
    listTypeOf: scope.type.builtin ? builtinListTypes() : schemaListTypes(scope.version.schema),
  };
}

function optionsObject(kind: string, scope: RequestScope, fieldManager: string): KubeObject {
  const options: KubeObject = { kind, apiVersion: 'meta.k8s.io/v1' };
  if (scope.dryRun) options['dryRun'] = ['All'];
  if (fieldManager && kind !== 'DeleteOptions') options['fieldManager'] = fieldManager;
  return options;
}

export function admissionRequest(scope: RequestScope, operation: AdmissionRequest['operation'], name: string, object: KubeObject | undefined, oldObject: KubeObject | undefined, fieldManager: string): AdmissionRequest {
  const request: AdmissionRequest = {
    operation,
    group: scope.type.group,
    version: scope.version.name,
    kind: scope.type.kind,
    resource: scope.type.plural,
    subresource: scope.info.subresource,
    namespaced: scope.type.namespaced,
    namespace: scope.type.namespaced ? scope.info.namespace : '',
    name,
    dryRun: scope.dryRun,
    options: optionsObject(operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions', scope, fieldManager),
    user: scope.user,
  };
  if (object) request.object = object;
  if (oldObject) request.oldObject = oldObject;
  return request;
}

function versioned(scope: Scope, obj: KubeObject): KubeObject {
  return { ...obj, apiVersion: scope.apiVersion, kind: scope.type.kind };
}

function throwIfInvalid(scope: Scope, name: string, causes: FieldCause[]): void {
  if (causes.length > 0) throw invalid(scope.type.kind, scope.type.group, name, causes);
}

/** Check the namespace a namespaced object goes into: it must exist and not be terminating. */
function checkNamespace(scope: Scope, name: string): void {
  if (!scope.type.namespaced) return;
  const ns = scope.ctx.store.get('/namespaces', '', scope.info.namespace);
  if (!ns) throw notFound('', 'namespaces', scope.info.namespace);
  if (isTerminating(ns)) {
    throw forbidden(scope.type.group, scope.type.plural, name, `unable to create new content in namespace ${scope.info.namespace} because it is being terminated`);
  }
}

/** A CRD whose schema does not compile (bad pattern or CEL rule) is rejected, as the real server does. */
function crdSchemaCauses(crd: KubeObject): FieldCause[] {
  const spec = isObject(crd['spec']) ? crd['spec'] : {};
  const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isObject) : [];
  const causes: FieldCause[] = [];
  versions.forEach((v, i) => {
    const schema = isObject(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
    if (schema === undefined) return;
    for (const problem of schemaProblems(schema)) {
      causes.push({ field: `spec.versions[${i}].schema.openAPIV3Schema`, reason: 'FieldValueInvalid', message: `Invalid value: "": ${problem}` });
    }
  });
  return causes;
}

/** Run the schema (CRs) and kind rules; returns the admitted object. */
function validateAndPrune(scope: Scope, obj: KubeObject, old: KubeObject | undefined, name: string): KubeObject {
  let admitted = obj;
  const causes: FieldCause[] = [];
  if (!scope.type.builtin) {
    const subresource = scope.info.subresource === 'status' ? 'status' : undefined;
    const result = schemaFor(scope).admit(obj, old, subresource ? { fieldValidation: fieldValidation(scope), subresource } : { fieldValidation: fieldValidation(scope) });
    if (result.strictDecodingError) {
      // the real server fails decoding (400), before any validation, on unknown fields under Strict
      throw badRequest(`${scope.type.kind} in version "${scope.version.name}" cannot be handled as a ${scope.type.kind}: ${result.strictDecodingError}`);
    }
    admitted = result.object;
    causes.push(...result.errors);
    scope.warnings.push(...result.warnings);
  }
  if (!old) causes.push(...validateObjectName(name, scope.type.key, !scope.type.builtin));
  causes.push(...validateCommonMetadata(admitted));
  causes.push(...validateBuiltin(scope.type.key, admitted, old));
  if (scope.type.key === 'apiextensions.k8s.io/customresourcedefinitions') causes.push(...crdSchemaCauses(admitted));
  if (old && isTerminating(old)) {
    const added = finalizersOf(admitted).filter((f) => !finalizersOf(old).includes(f));
    if (added.length > 0) {
      causes.push({ field: 'metadata.finalizers', reason: 'FieldValueForbidden', message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}` });
    }
  }
  throwIfInvalid(scope, name, causes);
  return admitted;
}

/** Create `obj` (already checked against the URL); returns the stored (or, on dryRun, would-be) object. */
export async function createObject(scope: Scope, input: KubeObject, options: WriteOptions): Promise<KubeObject> {
  const { ctx, type } = scope;
  let obj = clone(input);
  const meta = metadataOf(obj);
  let name = stringField(meta, 'name') ?? '';
  const generateName = stringField(meta, 'generateName');
  if (!name && generateName) {
    name = generateName.length > 0 ? generatedName(generateName) : '';
    meta['name'] = name;
  }
  if (!name) throwIfInvalid(scope, '', [{ field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' }]);
  if (type.namespaced) meta['namespace'] = scope.info.namespace;
  else delete meta['namespace'];
  checkNamespace(scope, name);
  if (ctx.store.get(type.key, scope.info.namespace, name)) throw alreadyExists(type.group, type.plural, name);

  if (!type.builtin) obj = schemaFor(scope).applyDefaults(versioned(scope, obj));
  const mutated = await ctx.admission.mutate(admissionRequest(scope, 'CREATE', name, versioned(scope, obj), undefined, options.fieldManager));
  scope.warnings.push(...mutated.warnings);
  obj = versioned(scope, mutated.object ?? obj);

  if (scope.version.hasStatus && !type.builtin) delete obj['status'];
  prepareForCreate(type.key, obj, type.key === '/services' ? ctx.store.list(type.key) : []);
  initCreateMetadata(obj, type.hasGeneration);
  metadataOf(obj)['name'] = name;
  if (type.namespaced) metadataOf(obj)['namespace'] = scope.info.namespace;
  obj = validateAndPrune(scope, obj, undefined, name);
  delete metadataOf(obj)['managedFields'];
  if (options.applied) recordApplyCreate(obj, options.applied, options.fieldManager, scope.apiVersion, trackOptions(scope));
  else recordUpdate(obj, undefined, options.fieldManager, scope.apiVersion, trackOptions(scope));

  scope.warnings.push(...(await ctx.admission.validate(admissionRequest(scope, 'CREATE', name, obj, undefined, options.fieldManager))));
  if (scope.dryRun) return toStorage(scope, obj);
  if (ctx.store.get(type.key, scope.info.namespace, name)) throw alreadyExists(type.group, type.plural, name);
  checkNamespace(scope, name);
  return ctx.store.create(type.key, scope.info.namespace, name, toStorage(scope, obj));
}

/**
 * Update `old` to `candidate` (a full object in the request's version) through the main resource or
 * the status subresource. Returns the stored object (or `old` when nothing changed).
 */
export async function updateObject(scope: Scope, stored: KubeObject, candidate: KubeObject, options: WriteOptions): Promise<{ object: KubeObject; deleted: boolean }> {
  const { ctx, type } = scope;
  const old = type.conversion ? type.conversion.fromStorage(stored) : stored;
  const name = String(metadataOf(old)['name'] ?? '');
  // the old object as read from storage: defaulted by the current schema, as the real server reads it
  const oldShown = type.builtin ? versioned(scope, old) : schemaFor(scope).applyDefaults(versioned(scope, old));
  let obj = writableCopy(scope, candidate);
  if (!type.builtin) obj = schemaFor(scope).applyDefaults(versioned(scope, obj));
  const mutated = await ctx.admission.mutate(admissionRequest(scope, 'UPDATE', name, versioned(scope, obj), oldShown, options.fieldManager));
  scope.warnings.push(...mutated.warnings);
  obj = versioned(scope, mutated.object ?? obj);

  if (scope.info.subresource === 'finalize') {
    // namespaces/finalize changes spec.finalizers only (how users unstick a Terminating namespace)
    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    obj = versioned(scope, clone(old));
    obj['spec'] = { ...(isObject(obj['spec']) ? obj['spec'] : {}), finalizers: Array.isArray(spec['finalizers']) ? spec['finalizers'] : [] };
  } else if (scope.version.hasStatus) {
    if (scope.info.subresource === 'status') {
      const status = obj['status'];
      const managedFields = metadataOf(obj)['managedFields'];
      obj = versioned(scope, writableCopy(scope, old));
      if (status === undefined) delete obj['status'];
      else obj['status'] = status;
      if (managedFields !== undefined) metadataOf(obj)['managedFields'] = managedFields;
    } else if (old['status'] === undefined) delete obj['status'];
    else obj['status'] = clone(old['status']);
  }
  keepSystemMetadata(obj, old);
  if (scope.info.subresource !== 'finalize') prepareForUpdate(type.key, obj, old);
  obj = validateAndPrune(scope, obj, oldShown, name);
  keepSystemMetadata(obj, old);
  // generation compares with the object as read (defaulted); the no-op check below with what is stored
  bumpGenerationIfSpecChanged(obj, oldShown, scope.version.hasStatus);
  metadataOf(obj)['resourceVersion'] = metadataOf(old)['resourceVersion'];
  if (options.managedFieldsComputed) {
    metadataOf(obj)['managedFields'] = metadataOf(candidate)['managedFields'];
  } else {
    metadataOf(obj)['managedFields'] = metadataOf(old)['managedFields'];
    recordUpdate(obj, old, options.fieldManager, scope.apiVersion, trackOptions(scope));
  }
  if (metadataOf(obj)['managedFields'] === undefined) delete metadataOf(obj)['managedFields'];

  scope.warnings.push(...(await ctx.admission.validate(admissionRequest(scope, 'UPDATE', name, obj, oldShown, options.fieldManager))));
  const finalizedAway = isTerminating(obj) && finalizersOf(obj).length === 0 && (type.key !== '/namespaces' || specFinalizers(obj).length === 0);
  if (!finalizedAway && isNoOpUpdate(obj, old)) return { object: stored, deleted: false };
  if (scope.dryRun) return { object: toStorage(scope, obj), deleted: finalizedAway };
  const current = ctx.store.get(type.key, scope.info.namespace, name);
  if (!current) throw notFound(type.group, type.plural, name);
  if (metadataOf(current)['resourceVersion'] !== metadataOf(stored)['resourceVersion']) throw new StaleWrite();
  if (finalizedAway) return { object: ctx.store.delete(type.key, scope.info.namespace, name, toStorage(scope, obj)) ?? obj, deleted: true };
  return { object: ctx.store.update(type.key, scope.info.namespace, name, toStorage(scope, obj)), deleted: false };
}

/**
 * A copy of `obj` that an update may change. Custom resources are changed only at the top level and
 * in metadata on the way to the store (defaults and webhook patches make copies of their own), so a
 * copy of those two levels is enough: the rest stays shared with the request body or with the stored
 * object a patch started from, and stored objects are never changed in place. Built-in kinds have
 * strategies that change nested fields (a Service's spec): a whole copy.
 */
function writableCopy(scope: Scope, obj: KubeObject): KubeObject {
  if (scope.type.builtin) return clone(obj);
  const copy: KubeObject = { ...obj };
  if (isObject(obj['metadata'])) copy['metadata'] = { ...obj['metadata'] };
  return copy;
}

function specFinalizers(obj: KubeObject): unknown[] {
  const spec = obj['spec'];
  return isObject(spec) && Array.isArray(spec['finalizers']) ? spec['finalizers'] : [];
}

/** The stored shape of an object written through this request's version. */
function toStorage(scope: Scope, obj: KubeObject): KubeObject {
  return scope.type.conversion ? scope.type.conversion.toStorage(obj) : obj;
}

export function conflictError(scope: Scope, name: string): ApiError {
  return conflict(scope.type.group, scope.type.plural, name, 'the object has been modified; please apply your changes to the latest version and try again');
}

/** Check a body's apiVersion/kind against the URL and fill them in when absent. */
export function checkBodyIdentity(scope: Scope, body: unknown): KubeObject {
  if (!isObject(body)) throw badRequest('the body of the request was not a JSON object');
  const obj = body;
  const apiVersion = obj['apiVersion'];
  const kind = obj['kind'];
  if (apiVersion !== undefined && apiVersion !== scope.apiVersion) {
    throw badRequest(`the API version in the data (${String(apiVersion)}) does not match the expected API version (${scope.apiVersion})`);
  }
  if (kind !== undefined && kind !== scope.type.kind) {
    throw badRequest(`the kind in the data (${String(kind)}) does not match the expected kind (${scope.type.kind})`);
  }
  if (obj['metadata'] !== undefined && !isObject(obj['metadata'])) throw badRequest('metadata must be an object');
  const meta = metadataOf(obj);
  const ns = meta['namespace'];
  if (scope.type.namespaced && ns !== undefined && ns !== '' && ns !== scope.info.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  return versioned(scope, obj);
}

