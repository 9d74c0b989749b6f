import type { Violation } from '@k8or/api';
import { describeObject } from '../manifests/objects.js';

/** What `k8or validate` found for one object (once per provider it was checked as, when its ProviderConfig was assumed). */
export interface ObjectVerdict {
  source: string;
  document: number;
  kind: string;
  namespace: string | undefined;
  name: string;
  valid: boolean;
  violations: Violation[];
  warnings: string[];
  /** The object as the API server would store it, defaults applied. */
  defaulted: unknown;
  /** The ProviderConfig a Bucket or Table uses, once defaulted. */
  providerConfig?: string;
  /** Its ProviderConfig is neither in the files nor given: it was checked as one of this provider. */
  assumedProvider?: string;
}

/** A ProviderConfig the files name but do not hold, checked as each installed provider in turn. */
export interface AssumedProviderConfig {
  name: string;
  /** Providers that admit every object using it. */
  admittedAs: string[];
  refusedAs: string[];
}

export interface ValidateReport {
  valid: boolean;
  objects: ObjectVerdict[];
  /** Set when ProviderConfigs were checked as each installed provider (no --provider, --provider-configs or --context). */
  providerConfigs?: AssumedProviderConfig[];
  /** Set with --provider: the provider ProviderConfigs missing from the files were taken to be of. */
  assumedProvider?: string;
}

/**
 * The ProviderConfigs checked as each provider, with the providers that admit all of their objects.
 * One cluster gives one ProviderConfig one provider, so a provider must admit all of them at once.
 */
export function assumedProviderConfigs(verdicts: readonly ObjectVerdict[], providers: readonly string[]): AssumedProviderConfig[] {
  const names = [...new Set(verdicts.flatMap((v) => (v.assumedProvider !== undefined && v.providerConfig !== undefined ? [v.providerConfig] : [])))];
  return names.map((name) => {
    const admits = (provider: string): boolean => verdicts.every((v) => v.providerConfig !== name || v.assumedProvider !== provider || v.valid);
    return { name, admittedAs: providers.filter(admits), refusedAs: providers.filter((p) => !admits(p)) };
  });
}

/** Whether a cluster would admit every object: each object, or, for an assumed ProviderConfig, each object as one provider that admits them all. */
export function isValid(verdicts: readonly ObjectVerdict[], assumed: readonly AssumedProviderConfig[] | undefined): boolean {
  if (!assumed) return verdicts.every((v) => v.valid);
  return verdicts.every((v) => v.assumedProvider !== undefined || v.valid) && assumed.every((a) => a.admittedAs.length > 0);
}

export function humanReport(report: ValidateReport): string {
  const lines: string[] = [];
  const perProvider = report.providerConfigs !== undefined;
  const once = perProvider ? report.objects.filter((v) => v.assumedProvider === undefined) : report.objects;
  for (const v of once) lines.push(...verdictLines(v, ''));
  if (perProvider) {
    const providers = [...new Set(report.objects.flatMap((v) => (v.assumedProvider !== undefined ? [v.assumedProvider] : [])))];
    const names = report.providerConfigs!.map((a) => `"${a.name}"`).join(', ');
    for (const provider of providers) {
      lines.push(`as ${provider} (ProviderConfig ${names}, which the files do not hold, taken to be ${provider}, its settings unknown):`);
      for (const v of report.objects.filter((o) => o.assumedProvider === provider)) lines.push(...verdictLines(v, '  '));
    }
    for (const a of report.providerConfigs!) {
      if (a.admittedAs.length === 0) lines.push(`ProviderConfig "${a.name}": no installed provider admits every object that uses it (refused as ${a.refusedAs.join(', ')})`);
      else lines.push(`ProviderConfig "${a.name}": admitted as ${a.admittedAs.join(', ')}${a.refusedAs.length ? `; refused as ${a.refusedAs.join(', ')}` : ''}`);
    }
    lines.push('(each installed provider was tried: --provider NAME checks as one, --provider-configs FILE or --context NAME against a cluster\'s ProviderConfigs)');
  }
  if (report.assumedProvider !== undefined) {
    const names = [...new Set(report.objects.flatMap((v) => (v.assumedProvider !== undefined && v.providerConfig !== undefined ? [`"${v.providerConfig}"`] : [])))];
    if (names.length) lines.push(`ProviderConfig ${names.join(', ')}, which the files do not hold, taken to be ${report.assumedProvider} (its settings unknown)`);
  }
  lines.push(summary(report));
  return `${lines.join('\n')}\n`;
}

function verdictLines(v: ObjectVerdict, indent: string): string[] {
  const lines: string[] = [];
  const where = `${v.source}#${v.document}`;
  const what = v.kind ? describeObject({ apiVersion: '', kind: v.kind, namespace: v.namespace, name: v.name }) : 'document';
  lines.push(`${indent}${where}: ${what}: ${v.valid ? 'valid' : `${v.violations.length} violation${v.violations.length === 1 ? '' : 's'}`}`);
  for (const violation of v.violations) lines.push(`${indent}  ${violation.field || '(document)'}: ${violation.message} (rule ${violation.rule})`);
  for (const warning of v.warnings) lines.push(`${indent}  warning: ${warning}`);
  return lines;
}

/** Objects counted once each; one checked as each provider is valid when one of them admits it. */
function summary(report: ValidateReport): string {
  const objects = new Map<string, boolean>();
  const invalid: ObjectVerdict[] = [];
  for (const v of report.objects) {
    const key = `${v.source}#${v.document}`;
    objects.set(key, (objects.get(key) ?? false) || v.valid);
    // (as each provider, the violations are listed under that provider's heading)
    if (!v.valid && !(report.providerConfigs && v.assumedProvider !== undefined)) invalid.push(v);
  }
  if (objects.size === 0) return 'no k8or objects (Bucket, Table, ProviderConfig of k8or.io) found';
  const validCount = [...objects.values()].filter(Boolean).length;
  const count = invalid.reduce((n, v) => n + v.violations.length, 0);
  const s = (n: number): string => (n === 1 ? '' : 's');
  return `${objects.size} object${s(objects.size)}: ${validCount} valid, ${objects.size - validCount} invalid${count ? ` (${count} violation${s(count)})` : ''}`;
}
