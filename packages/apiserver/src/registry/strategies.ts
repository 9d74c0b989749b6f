/** Per-kind rules applied on create and update (the real server's "strategies"), for built-in kinds. */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../types.js';
import { isObject, metadataOf, stringField } from '../util.js';
import { badRequest, type FieldCause } from '../status.js';
import { crdNames } from './registry.js';
import { RBAC_GROUP, validateBinding, validateRole } from './rbac.js';
import { defaultDeployment, validateDeployment, validatePodDisruptionBudget } from './workloads.js';

/** Kind-specific defaulting and normalisation on create. */
/** `existing`: the kind's stored objects, for allocations that must not collide (Service cluster IPs). */
export function prepareForCreate(resourceKey: string, obj: KubeObject, existing: KubeObject[] = []): void {
  switch (resourceKey) {
    case '/namespaces': {
      const spec = isObject(obj['spec']) ? obj['spec'] : {};
      spec['finalizers'] = ['kubernetes'];
      obj['spec'] = spec;
      obj['status'] = { phase: 'Active' };
      labelNamespaceName(obj);
      break;
    }
    case '/secrets':
      normaliseSecret(obj);
      break;
    case '/services':
      defaultService(obj, existing);
      break;
    case 'apiextensions.k8s.io/customresourcedefinitions':
      delete obj['status'];
      break;
    case 'apps/deployments':
      defaultDeployment(obj);
      obj['status'] = {};
      break;
    case 'policy/poddisruptionbudgets':
      obj['status'] = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
      break;
  }
}

/** Services: type ClusterIP and a free address from 10.96.0.0/16 unless given (no proxying happens). */
function defaultService(obj: KubeObject, existing: KubeObject[]): void {
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  obj['spec'] = spec;
  if (typeof spec['type'] !== 'string') spec['type'] = 'ClusterIP';
  if (typeof spec['clusterIP'] !== 'string' || spec['clusterIP'] === '') {
    const used = new Set(existing.map((svc) => (isObject(svc['spec']) ? svc['spec']['clusterIP'] : undefined)));
    for (let n = 2; n < 65534; n++) {
      const ip = `10.96.${Math.floor(n / 256)}.${n % 256}`;
      if (!used.has(ip)) {
        spec['clusterIP'] = ip;
        break;
      }
    }
  }
  if (spec['clusterIP'] !== 'None' && !Array.isArray(spec['clusterIPs'])) spec['clusterIPs'] = [spec['clusterIP']];
  if (Array.isArray(spec['ports'])) {
    for (const port of spec['ports']) if (isObject(port)) port['protocol'] ??= 'TCP';
  }
  obj['status'] ??= { loadBalancer: {} };
}

export function prepareForUpdate(resourceKey: string, obj: KubeObject, old: KubeObject): void {
  switch (resourceKey) {
    case '/namespaces':
      obj['spec'] = old['spec'];
      labelNamespaceName(obj);
      break;
    case '/services': {
      // clusterIP is immutable once allocated
      const spec = isObject(obj['spec']) ? obj['spec'] : {};
      const oldSpec = isObject(old['spec']) ? old['spec'] : {};
      spec['clusterIP'] = oldSpec['clusterIP'];
      spec['clusterIPs'] = oldSpec['clusterIPs'];
      obj['spec'] = spec;
      break;
    }
    case '/secrets':
      normaliseSecret(obj);
      break;
    case 'apps/deployments':
      defaultDeployment(obj);
      break;
  }
}

/** Every namespace carries kubernetes.io/metadata.name (the real server sets it since 1.21). */
function labelNamespaceName(obj: KubeObject): void {
  const meta = metadataOf(obj);
  const labels = isObject(meta['labels']) ? meta['labels'] : {};
  labels['kubernetes.io/metadata.name'] = meta['name'];
  meta['labels'] = labels;
}

/** Secrets: fold stringData into base64 data, default the type; data that is not base64 fails decoding (400). */
function normaliseSecret(obj: KubeObject): void {
  const data = obj['data'];
  if (isObject(data)) {
    for (const value of Object.values(data)) {
      if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
        const at = typeof value === 'string' ? Math.max(0, value.search(/[^A-Za-z0-9+/=]/)) : 0;
        throw badRequest(`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${at}`);
      }
    }
  }
  const stringData = obj['stringData'];
  if (isObject(stringData)) {
    const data = isObject(obj['data']) ? obj['data'] : {};
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj['data'] = data;
  }
  delete obj['stringData'];
  if (typeof obj['type'] !== 'string' || obj['type'] === '') obj['type'] = 'Opaque';
}

/** Kind-specific validation; failures answer 422 Invalid. */
export function validateBuiltin(resourceKey: string, obj: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  switch (resourceKey) {
    case '/secrets':
    case '/configmaps': {
      for (const field of ['data', 'binaryData']) {
        const data = obj[field];
        if (data === undefined || data === null) continue;
        if (!isObject(data)) {
          causes.push({ field, reason: 'FieldValueTypeInvalid', message: `Invalid value: ${JSON.stringify(data)}: must be a map of strings` });
          continue;
        }
        let bytes = 0;
        for (const value of Object.values(data)) bytes += typeof value === 'string' ? value.length : 0;
        if (resourceKey === '/configmaps' && bytes > 1024 * 1024) {
          causes.push({ field: '', reason: 'FieldValueTooLong', message: 'Too long: must have at most 1048576 bytes' });
        }
        for (const key of Object.keys(data)) {
          if (!/^[-._a-zA-Z0-9]+$/.test(key) || key.length > 253) {
            causes.push({ field: `${field}[${key}]`, reason: 'FieldValueInvalid', message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')` });
          }
        }
      }
      if (resourceKey === '/secrets' && old && old['type'] !== obj['type']) {
        causes.push({ field: 'type', reason: 'FieldValueInvalid', message: `Invalid value: "${String(obj['type'])}": field is immutable` });
      }
      if (old && old['immutable'] === true) {
        for (const field of ['data', 'binaryData']) {
          if (!isDeepStrictEqual(old[field] ?? null, obj[field] ?? null)) {
            causes.push({ field: 'data', reason: 'FieldValueForbidden', message: 'Forbidden: field is immutable when `immutable` is set' });
            break;
          }
        }
      }
      break;
    }
    case 'apiextensions.k8s.io/customresourcedefinitions':
      causes.push(...validateCrd(obj, old));
      break;
    case 'apps/deployments':
      causes.push(...validateDeployment(obj, old));
      break;
    case 'policy/poddisruptionbudgets':
      causes.push(...validatePodDisruptionBudget(obj));
      break;
    case `${RBAC_GROUP}/roles`:
    case `${RBAC_GROUP}/clusterroles`:
      causes.push(...validateRole(obj, resourceKey.endsWith('/clusterroles')));
      break;
    case `${RBAC_GROUP}/rolebindings`:
    case `${RBAC_GROUP}/clusterrolebindings`:
      causes.push(...validateBinding(obj, old, resourceKey.endsWith('/clusterrolebindings')));
      break;
    case 'admissionregistration.k8s.io/validatingwebhookconfigurations':
    case 'admissionregistration.k8s.io/mutatingwebhookconfigurations':
      causes.push(...validateWebhooks(obj));
      break;
  }
  return causes;
}

const SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun'];

/** admissionregistration.k8s.io/v1 rules for each webhook: sideEffects None or NoneOnDryRun, a v1 or v1beta1 review version. */
function validateWebhooks(config: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const webhooks = Array.isArray(config['webhooks']) ? config['webhooks'] : [];
  webhooks.forEach((hook: unknown, i) => {
    const webhook = isObject(hook) ? hook : {};
    const field = `webhooks[${i}]`;
    const sideEffects = webhook['sideEffects'];
    if (sideEffects === undefined || sideEffects === null) {
      causes.push({ field: `${field}.sideEffects`, reason: 'FieldValueRequired', message: `Required value: must specify one of ${SIDE_EFFECT_CLASSES.join(', ')}` });
    } else if (typeof sideEffects !== 'string' || !SIDE_EFFECT_CLASSES.includes(sideEffects)) {
      causes.push({ field: `${field}.sideEffects`, reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(sideEffects)}: supported values: ${SIDE_EFFECT_CLASSES.map((c) => `"${c}"`).join(', ')}` });
    }
    const versions = Array.isArray(webhook['admissionReviewVersions']) ? webhook['admissionReviewVersions'] : [];
    if (versions.length === 0) {
      causes.push({ field: `${field}.admissionReviewVersions`, reason: 'FieldValueRequired', message: 'Required value: must specify one of v1, v1beta1' });
    } else if (!versions.some((v) => v === 'v1' || v === 'v1beta1')) {
      causes.push({ field: `${field}.admissionReviewVersions`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(versions)}: must include at least one of v1, v1beta1` });
    }
  });
  return causes;
}

function validateCrd(crd: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = isObject(crd['spec']) ? crd['spec'] : {};
  const group = stringField(spec, 'group') ?? '';
  const names = crdNames(crd);
  const name = String(metadataOf(crd)['name'] ?? '');
  if (!group) causes.push({ field: 'spec.group', reason: 'FieldValueRequired', message: 'Required value' });
  else if (!group.includes('.')) causes.push({ field: 'spec.group', reason: 'FieldValueInvalid', message: `Invalid value: "${group}": should be a domain with at least one dot` });
  if (!names.plural) causes.push({ field: 'spec.names.plural', reason: 'FieldValueRequired', message: 'Required value' });
  if (!names.kind) causes.push({ field: 'spec.names.kind', reason: 'FieldValueRequired', message: 'Required value' });
  if (names.plural && group && name !== `${names.plural}.${group}`) {
    causes.push({ field: 'metadata.name', reason: 'FieldValueInvalid', message: `Invalid value: "${name}": must be spec.names.plural+"."+spec.group` });
  }
  const scope = stringField(spec, 'scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster') {
    causes.push({ field: 'spec.scope', reason: 'FieldValueNotSupported', message: `Unsupported value: "${scope ?? ''}": supported values: "Cluster", "Namespaced"` });
  }
  const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isObject) : [];
  if (versions.length === 0) causes.push({ field: 'spec.versions', reason: 'FieldValueInvalid', message: 'Invalid value: []: must have exactly one version marked as storage version' });
  else if (versions.filter((v) => v['storage'] === true).length !== 1) {
    causes.push({ field: 'spec.versions', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(versions.map((v) => v['name']))}: must have exactly one version marked as storage version` });
  }
  if (old) {
    const oldSpec = isObject(old['spec']) ? old['spec'] : {};
    if (stringField(oldSpec, 'scope') !== scope) causes.push({ field: 'spec.scope', reason: 'FieldValueInvalid', message: `Invalid value: "${scope ?? ''}": field is immutable` });
  }
  return causes;
}
