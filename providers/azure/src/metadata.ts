/**
 * Container metadata: the user's labels plus k8or's owner metadata. Azure metadata names must be
 * C# identifiers and are case-insensitive (Azurite lowercases them), so k8or's `k8or.io/name`
 * owner tag is written as `k8or_name` and every comparison folds case.
 */
import { OwnerTags } from '@k8or/api';
import type { FieldDiff } from '@k8or/core';

/** Metadata names k8or writes its owner tags under start with this; labels may not. */
export const OWNER_METADATA_PREFIX = 'k8or_';

/** `k8or.io/managed-by` -> `k8or_managed_by`. */
export const ownerMetadataName = (ownerTag: string): string => `${OWNER_METADATA_PREFIX}${ownerTag.replace(/^k8or\.io\//, '').replace(/[^A-Za-z0-9_]/g, '_')}`;

/** The metadata a container should carry: the user's labels plus the owner metadata. */
export function desiredMetadata(labels: Readonly<Record<string, string>> | undefined, ownerTags: Readonly<Record<string, string>>): Record<string, string> {
  const owner = Object.fromEntries(Object.entries(ownerTags).map(([tag, value]) => [ownerMetadataName(tag), value]));
  return { ...(labels ?? {}), ...owner };
}

const folded = (metadata: Readonly<Record<string, string>>): Map<string, string> => new Map(Object.entries(metadata).map(([key, value]) => [key.toLowerCase(), value]));

/**
 * Every k8or owner tag found in a container's metadata (all of k8or's owner tag keys, whichever are
 * expected), under their `k8or.io/*` names, as found: `{}` for a container without any. A container
 * always has metadata, so owner metadata removed behind k8or's back is reported missing (a missing
 * tag proves nothing), never as "this kind has no tags".
 */
export function ownerTagsIn(metadata: Readonly<Record<string, string>>, ownerTags: Readonly<Record<string, string>>): Record<string, string> {
  const actual = folded(metadata);
  return Object.fromEntries(
    [...new Set([...Object.values(OwnerTags), ...Object.keys(ownerTags)])].flatMap((tag) => {
      const value = actual.get(ownerMetadataName(tag).toLowerCase());
      return value === undefined ? [] : [[tag, value] as const];
    }),
  );
}

/**
 * Differences between desired and actual metadata, names compared without case: labels as
 * `spec.labels.<name>`, owner metadata as `ownerTags.<k8or.io/...>`. Metadata added behind k8or's
 * back is drift too, since the spec owns the whole set.
 */
export function diffMetadata(labels: Readonly<Record<string, string>> | undefined, ownerTags: Readonly<Record<string, string>>, metadata: Readonly<Record<string, string>>): FieldDiff[] {
  const desired = folded(desiredMetadata(labels, ownerTags));
  const actual = folded(metadata);
  const ownerByName = new Map(Object.keys(ownerTags).map((tag) => [ownerMetadataName(tag).toLowerCase(), tag]));
  const labelName = new Map(Object.keys(labels ?? {}).map((key) => [key.toLowerCase(), key]));
  const names = [...new Set([...desired.keys(), ...actual.keys()])].sort();
  return names
    .filter((name) => desired.get(name) !== actual.get(name))
    .map((name) => {
      const owner = ownerByName.get(name);
      return { field: owner ? `ownerTags.${owner}` : `spec.labels.${labelName.get(name) ?? name}`, desired: desired.get(name), actual: actual.get(name) };
    });
}
