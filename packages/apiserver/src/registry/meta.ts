/** Object metadata rules shared by every kind: system fields, generation, name checks. */
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../types.js';
import { isObject, jsonEqual, metadataOf, nowIso } from '../util.js';
import type { FieldCause } from '../status.js';

/** Metadata the server owns: a client can never set or change these through a write. */
const SYSTEM_FIELDS = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'selfLink'] as const;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Label and annotation keys: optional DNS-subdomain prefix and "/", then a name part. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

export function finalizersOf(obj: KubeObject): string[] {
  const f = metadataOf(obj)['finalizers'];
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

export function labelsOf(obj: KubeObject): Record<string, string> {
  const labels = metadataOf(obj)['labels'];
  const out: Record<string, string> = {};
  if (isObject(labels)) for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

export function isTerminating(obj: KubeObject): boolean {
  return typeof metadataOf(obj)['deletionTimestamp'] === 'string';
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** generateName + 5 random characters, as the real server does. */
export function generatedName(prefix: string): string {
  const base = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return base + suffix;
}

/** Server-set metadata of a newly created object. */
export function initCreateMetadata(obj: KubeObject, hasGeneration: boolean): void {
  const meta = metadataOf(obj);
  for (const f of SYSTEM_FIELDS) delete meta[f];
  delete meta['resourceVersion'];
  meta['uid'] = randomUUID();
  meta['creationTimestamp'] = nowIso();
  if (hasGeneration) meta['generation'] = 1;
}

/** Carry the server-owned metadata of `old` into `next`. */
export function keepSystemMetadata(next: KubeObject, old: KubeObject): void {
  const meta = metadataOf(next);
  const oldMeta = metadataOf(old);
  for (const f of SYSTEM_FIELDS) {
    if (oldMeta[f] === undefined) delete meta[f];
    else meta[f] = oldMeta[f];
  }
  meta['name'] = oldMeta['name'];
  if (oldMeta['namespace'] !== undefined) meta['namespace'] = oldMeta['namespace'];
}

/**
 * Everything but metadata (and status, when the kind has a status subresource): a change here bumps
 * generation. Without a status subresource a status change is a change like any other, as on a real server.
 */
function generationPart(obj: KubeObject, statusIsSeparate: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind' || (statusIsSeparate && k === 'status')) continue;
    out[k] = v;
  }
  return out;
}

export function bumpGenerationIfSpecChanged(next: KubeObject, old: KubeObject, statusIsSeparate: boolean): void {
  const meta = metadataOf(next);
  if (typeof meta['generation'] !== 'number') return;
  if (!jsonEqual(generationPart(next, statusIsSeparate), generationPart(old, statusIsSeparate))) meta['generation'] = (meta['generation'] as number) + 1;
}

/** True when an update would store nothing new (the real server then skips the write). */
export function isNoOpUpdate(next: KubeObject, old: KubeObject): boolean {
  // compared without copies: every write asks this, and the objects are whole (managedFields too)
  const withoutVolatile = (o: KubeObject): KubeObject => {
    const { resourceVersion: _rv, managedFields: _mf, ...meta } = metadataOf({ ...o });
    return { ...o, metadata: meta };
  };
  return jsonEqual(withoutVolatile(next), withoutVolatile(old));
}

/** Name rules for metadata.name: namespaces are DNS labels, most others DNS subdomains. */
export function validateObjectName(name: string, resourceKey: string, custom: boolean): FieldCause[] {
  const causes: FieldCause[] = [];
  if (resourceKey === '/namespaces') {
    if (name.length > 63) causes.push({ field: 'metadata.name', reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(name)}: ${maxLengthMessage(63)}` });
    if (!DNS_LABEL.test(name)) {
      causes.push({ field: 'metadata.name', reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(name)}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')` });
    }
    return causes;
  }
  if (custom || resourceKey !== '/events') {
    if (name.length > 253) causes.push({ field: 'metadata.name', reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(name)}: ${maxLengthMessage(253)}` });
    if (!DNS_SUBDOMAIN.test(name)) {
      causes.push({ field: 'metadata.name', reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` });
    }
  }
  return causes;
}

/** Go's validation.MaxLenError, the message kube-apiserver gives for a value over a length limit. */
function maxLengthMessage(limit: number): string {
  return `must be no more than ${limit} characters`;
}

/** Longer values are cut where a field error echoes them, so a 1 MB value does not come back whole. */
const ECHOED_VALUE_LIMIT = 256;

/** A bad value as a field error shows it: quoted (as Go's %q), cut after ECHOED_VALUE_LIMIT characters. */
export function echoValue(value: string): string {
  if (value.length <= ECHOED_VALUE_LIMIT) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, ECHOED_VALUE_LIMIT)).slice(0, -1)}..." (${value.length} characters, truncated)`;
}

/** validation.IsValidLabelValue: one cause per rule broken, the length first, as kube-apiserver lists them. */
function labelValueCauses(value: string): FieldCause[] {
  const messages: string[] = [];
  if (value.length > 63) messages.push(maxLengthMessage(63));
  if (!LABEL_VALUE.test(value)) {
    messages.push(
      `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  }
  return messages.map((message) => ({ field: 'metadata.labels', reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(value)}: ${message}` }));
}

/** Checks on labels, annotations and finalizers common to every kind. */
export function validateCommonMetadata(obj: KubeObject): FieldCause[] {
  const meta = metadataOf(obj);
  const causes: FieldCause[] = [];
  for (const field of ['labels', 'annotations'] as const) {
    const value = meta[field];
    if (value === undefined || value === null) continue;
    if (!isObject(value)) {
      causes.push({ field: `metadata.${field}`, reason: 'FieldValueTypeInvalid', message: `Invalid value: "${typeof value}": metadata.${field} must be an object of strings` });
      continue;
    }
    let total = 0;
    for (const [k, v] of Object.entries(value)) {
      total += k.length + (typeof v === 'string' ? v.length : 0);
      if (!QUALIFIED_NAME.test(k) || (k.includes('/') && (k.split('/')[0] ?? '').length > 253)) {
        causes.push({ field: `metadata.${field}`, reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(k)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')` });
      } else if ((k.split('/').pop() ?? '').length > 63) {
        causes.push({ field: `metadata.${field}`, reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(k)}: name part ${maxLengthMessage(63)}` });
      }
      if (typeof v !== 'string') causes.push({ field: `metadata.${field}`, reason: 'FieldValueTypeInvalid', message: `Invalid value: ${JSON.stringify(v)}: value of "${k}" must be a string` });
      else if (field === 'labels') causes.push(...labelValueCauses(v));
    }
    if (field === 'annotations' && total > 256 * 1024) {
      causes.push({ field: 'metadata.annotations', reason: 'FieldValueTooLong', message: 'Too long: must have at most 262144 bytes' });
    }
  }
  const finalizers = meta['finalizers'];
  if (finalizers !== undefined && finalizers !== null && (!Array.isArray(finalizers) || finalizers.some((f) => typeof f !== 'string'))) {
    causes.push({ field: 'metadata.finalizers', reason: 'FieldValueTypeInvalid', message: 'Invalid value: finalizers must be a list of strings' });
  } else if (Array.isArray(finalizers)) {
    for (const f of finalizers as string[]) {
      if (!QUALIFIED_NAME.test(f) || (f.split('/').pop() ?? '').length > 63) {
        causes.push({ field: 'metadata.finalizers', reason: 'FieldValueInvalid', message: `Invalid value: ${echoValue(f)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')` });
      }
    }
  }
  return causes;
}
