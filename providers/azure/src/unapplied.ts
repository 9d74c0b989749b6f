/**
 * Portable settings Azure does not hold on a container or a table. Each is reported, at apply
 * time as a webhook warning and by every observe as a setting k8or did not apply (the engine's
 * Synced False, SettingsNotApplied), so status never says Synced for it; none is skipped in silence.
 */
import type { Bucket, Table } from '@k8or/api';
import type { SettingIssue } from '@k8or/core';

const unapplied = (field: string, message: string): SettingIssue => ({ field, problem: 'unapplied', message });

/** What a Bucket asks for that an Azure container cannot hold. */
export function unappliedBucketSettings(bucket: Bucket): SettingIssue[] {
  const { spec } = bucket;
  const issues: SettingIssue[] = [];
  if (spec.versioning) {
    issues.push(unapplied('spec.versioning', 'Azure keeps blob versioning on the storage account (blob service properties, isVersioningEnabled), not on a container; k8or does not change account settings'));
  }
  if (spec.lifecycle?.length) {
    issues.push(unapplied('spec.lifecycle', 'Azure keeps lifecycle rules in the storage account\'s management policy, not on a container; k8or does not change account settings'));
  }
  if (spec.encryption?.type === 'CustomerManaged') {
    issues.push(unapplied('spec.encryption', 'Azure sets customer-managed keys on the storage account or in an encryption scope, not on a container; k8or does not change account settings'));
  }
  if (spec.location !== undefined) {
    issues.push(unapplied('spec.location', 'an Azure container lives in its storage account\'s region; k8or cannot place it elsewhere'));
  }
  return issues;
}

/** What a Table asks for that Azure Table Storage does not have. */
export function unappliedTableSettings(table: Table): SettingIssue[] {
  const { spec } = table;
  const issues: SettingIssue[] = [];
  if (spec.billing?.mode === 'provisioned') {
    issues.push(unapplied('spec.billing', 'Azure Table Storage has no provisioned capacity: tables are billed per transaction and stored byte'));
  }
  if (spec.ttlAttribute) issues.push(unapplied('spec.ttlAttribute', 'Azure Table Storage has no time to live: entities stay until deleted'));
  if (spec.pointInTimeRecovery) {
    issues.push(unapplied('spec.pointInTimeRecovery', 'Azure Table Storage has no point-in-time recovery (the account\'s point-in-time restore covers block blobs only)'));
  }
  if (spec.labels && Object.keys(spec.labels).length > 0) {
    issues.push(unapplied('spec.labels', 'Azure tables carry no metadata or tags; labels stay on the Kubernetes object only'));
  }
  return issues;
}
