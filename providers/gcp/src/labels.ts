/**
 * GCS labels: the user's labels plus k8or's owner tags. Owner tag keys (`k8or.io/name`) and values
 * (`Bucket`, a cluster id) do not fit GCS label rules (lowercase letters, digits, `_` and `-`, at
 * most 63), so each is written in a label form: `k8or.io/name` -> `k8or-name`, and a value GCS
 * cannot hold verbatim -> its sanitised form plus a short hash of the original. Reading them back,
 * a label that equals the encoding of the expected value stands for that value.
 */
import { createHash } from 'node:crypto';
import { OwnerTags } from '@k8or/api';
import type { FieldDiff } from '@k8or/core';

const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
/** Labels GCS and other Google services set themselves; neither written nor compared. */
const isSystemLabel = (key: string): boolean => key.startsWith('goog-');
/** The label keys k8or's owner tags use. */
export const OWNER_LABEL_PREFIX = 'k8or-';

/** `k8or.io/managed-by` -> `k8or-managed-by`. */
export const ownerLabelKey = (tagKey: string): string => `${OWNER_LABEL_PREFIX}${tagKey.replace(/^k8or\.io\//, '').toLowerCase().replace(/[^a-z0-9_-]/g, '_')}`;

/** A value as a GCS label value: verbatim when it fits, else sanitised and suffixed with a hash of the original. */
export function ownerLabelValue(value: string): string {
  if (LABEL_VALUE.test(value)) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 8);
  const stem = value.toLowerCase().replace(/[^a-z0-9_-]/g, '_').slice(0, 63 - hash.length - 1);
  return `${stem}-${hash}`;
}

/** The labels a bucket should carry: the user's plus the owner labels (owner labels win). */
export function desiredLabels(labels: Readonly<Record<string, string>> | undefined, ownerTags: Readonly<Record<string, string>>): Record<string, string> {
  const owner = Object.fromEntries(Object.entries(ownerTags).map(([key, value]) => [ownerLabelKey(key), ownerLabelValue(value)]));
  return { ...(labels ?? {}), ...owner };
}

/**
 * Every k8or owner tag found among a bucket's labels (all of k8or's owner tag keys, whichever are
 * expected), in their tag form (`k8or.io/*` keys): a label equal to the encoding of the expected
 * value reports the expected value; any other value is reported as found (its label form, since an
 * encoded value cannot be decoded), so it differs. Absent owner labels are absent keys (`{}`:
 * someone else's bucket).
 */
export function ownerTagsFromLabels(labels: Readonly<Record<string, string>>, expected: Readonly<Record<string, string>>): Record<string, string> {
  const found: Record<string, string> = {};
  for (const tagKey of new Set([...Object.values(OwnerTags), ...Object.keys(expected)])) {
    const label = labels[ownerLabelKey(tagKey)];
    const value = expected[tagKey];
    if (label !== undefined) found[tagKey] = value !== undefined && label === ownerLabelValue(value) ? value : label;
  }
  return found;
}

/**
 * Differences between desired and actual labels: user labels as `spec.labels.<key>`, owner labels
 * as `ownerTags.<tag key>`. A label added behind k8or's back is drift too: the spec owns the label set.
 */
export function diffLabels(desired: Readonly<Record<string, string>>, actual: Readonly<Record<string, string>>, ownerTags: Readonly<Record<string, string>>): FieldDiff[] {
  const tagKeyOf = new Map(Object.keys(ownerTags).map((tagKey) => [ownerLabelKey(tagKey), tagKey]));
  const keys = [...new Set([...Object.keys(desired), ...Object.keys(actual)])].filter((key) => !isSystemLabel(key)).sort();
  return keys
    .filter((key) => desired[key] !== actual[key])
    .map((key) => {
      const tagKey = tagKeyOf.get(key);
      return { field: tagKey ? `ownerTags.${tagKey}` : `spec.labels.${key}`, desired: desired[key], actual: actual[key] };
    });
}

/** The labels part of a patch: the desired labels, and null for each label to remove (GCS patch merges labels). */
export function labelsPatch(desired: Readonly<Record<string, string>>, actual: Readonly<Record<string, string>>): Record<string, string | null> {
  const removed = Object.keys(actual).filter((key) => !(key in desired) && !isSystemLabel(key));
  return { ...Object.fromEntries(removed.map((key) => [key, null])), ...desired };
}
