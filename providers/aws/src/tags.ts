import { isDeepStrictEqual } from 'node:util';
import { OwnerTags } from '@k8or/api';
import type { FieldDiff } from '@k8or/core';

/** Tags AWS reserves for itself; they are neither written nor compared. */
const isSystemTag = (key: string): boolean => key.toLowerCase().startsWith('aws:');

/** The tags a resource should carry: the user's labels plus k8or's owner tags (owner tags win). */
export function desiredTags(labels: Readonly<Record<string, string>> | undefined, ownerTags: Readonly<Record<string, string>>): Record<string, string> {
  return { ...(labels ?? {}), ...ownerTags };
}

/** The keys of k8or's owner tags: the well-known ones and any the engine adds. */
export const ownerTagKeys = (ownerTags: Readonly<Record<string, string>>): string[] => [...new Set([...Object.values(OwnerTags), ...Object.keys(ownerTags)])];

/** The owner tags among a resource's tags. */
export function ownerTagsIn(tags: Readonly<Record<string, string>>, ownerTagKeys: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(tags).filter(([key]) => ownerTagKeys.includes(key)));
}

/** True when a resource's tags hold exactly these owner tags: it is this object's resource. */
export function carriesOwnerTags(tags: Readonly<Record<string, string>>, ownerTags: Readonly<Record<string, string>>): boolean {
  return isDeepStrictEqual(ownerTagsIn(tags, ownerTagKeys(ownerTags)), { ...ownerTags });
}

/**
 * Differences between desired and actual tags: user labels as `spec.labels.<key>`, owner tags as
 * `ownerTags.<key>`. A tag added behind k8or's back is drift too (desired unset), since the spec owns the tag set.
 */
export function diffTags(desired: Readonly<Record<string, string>>, actual: Readonly<Record<string, string>>, ownerTagKeys: readonly string[]): FieldDiff[] {
  const keys = [...new Set([...Object.keys(desired), ...Object.keys(actual)])].filter((key) => !isSystemTag(key)).sort();
  return keys
    .filter((key) => desired[key] !== actual[key])
    .map((key) => ({ field: ownerTagKeys.includes(key) ? `ownerTags.${key}` : `spec.labels.${key}`, desired: desired[key], actual: actual[key] }));
}

export const toTagList = (tags: Readonly<Record<string, string>>): { Key: string; Value: string }[] =>
  Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));

export const fromTagList = (tags: readonly { Key?: string; Value?: string }[] | undefined): Record<string, string> =>
  Object.fromEntries((tags ?? []).filter((t) => t.Key !== undefined).map((t) => [t.Key as string, t.Value ?? '']));
