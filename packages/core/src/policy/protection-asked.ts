import type { ManagedResource } from '@k8or/api';
import { canonicalDigest } from './drift.js';

/** What an unset field records: no digest of any value has this form. */
const UNSET = 'unset';

/** The spec's value at a protection's field (`spec.deletionProtection`); undefined for a provider setting's name or an unset field. */
function specValueAt(resource: ManagedResource, field: string): unknown {
  if (!field.startsWith('spec.')) return undefined;
  let value: unknown = resource.spec;
  for (const part of field.slice('spec.'.length).split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function valueDigest(value: unknown): string {
  return value === undefined ? UNSET : canonicalDigest(value);
}

/** What `status.appliedProtection` records after a pass that brought the cloud in line: each reported protection's spec value, as a digest. */
export function appliedProtectionOf(resource: ManagedResource, fields: readonly string[]): Record<string, string> {
  return Object.fromEntries(fields.map((field) => [field, valueDigest(specValueAt(resource, field))]));
}

/**
 * Whether the user asked to change the protection at `field`: the spec's value there differs from
 * the one recorded when the cloud was last brought in line. Nothing recorded: not asked, so a
 * protection is never lowered on a guess (another edit of the spec asks nothing of it).
 */
export function protectionChangeAsked(resource: ManagedResource, field: string): boolean {
  const recorded = resource.status?.appliedProtection?.[field];
  return recorded !== undefined && recorded !== valueDigest(specValueAt(resource, field));
}
