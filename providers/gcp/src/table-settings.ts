/**
 * What the webhook's validation and the Bigtable mapping both read of a Table, without Bigtable's
 * SDK: the validation loads with the provider, the SDK only with the first Table (./table.ts).
 */
import type { Table } from '@k8or/api';
import type { SettingIssue } from '@k8or/core';

/** The column family that holds every attribute a Table does not place elsewhere. */
export const DEFAULT_COLUMN_FAMILY = 'd';
/** Annotation declaring more column families: a comma-separated list of family ids. */
export const COLUMN_FAMILIES_ANNOTATION = 'gcp.k8or.io/column-families';

/** The family ids the Table declares: the default one plus the annotation's. */
export function columnFamiliesOf(table: Table): string[] {
  const declared = (table.metadata.annotations?.[COLUMN_FAMILIES_ANNOTATION] ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  return [...new Set([DEFAULT_COLUMN_FAMILY, ...declared])];
}

/** The portable settings Bigtable has no counterpart for, when the Table sets them: never applied, so never reported as done. */
export function unappliedSettings(table: Table): SettingIssue[] {
  const issues: SettingIssue[] = [];
  if (table.spec.billing?.mode === 'provisioned') {
    issues.push({ field: 'spec.billing', problem: 'unapplied', message: 'Bigtable bills the instance\'s nodes, not per table: provisioned read and write capacities are not applied' });
  }
  if (table.spec.pointInTimeRecovery) {
    issues.push({ field: 'spec.pointInTimeRecovery', problem: 'unapplied', message: 'Bigtable has no point-in-time recovery; use Bigtable backups' });
  }
  if (Object.keys(table.spec.labels ?? {}).length > 0) issues.push({ field: 'spec.labels', problem: 'unapplied', message: 'Bigtable tables carry no labels' });
  return issues;
}
