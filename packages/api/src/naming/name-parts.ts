import { createHash } from 'node:crypto';
import { ViolationCollector, type Violation } from './violation.js';

/**
 * Building blocks for a provider's default external names: a short hash of
 * the parts that make a name unique (cluster id, namespace, name), and a stem
 * cut to fit beside it. Each provider composes them within its cloud's rules.
 */

/** 8 hex characters of SHA-256 over the parts (NUL-separated, so `a/b`+`c` differs from `a`+`b/c`). */
export function shortHash(...parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 8);
}

/**
 * `stem` cut so that `stem + separator + hash` fits `maxLength`, then joined.
 * The hash is never cut: two long names that share a prefix stay apart.
 * Trailing separators left by the cut are trimmed; an empty stem becomes `fallback`.
 */
export function withHash(stem: string, hash: string, options: { maxLength: number; separator?: string; fallback?: string }): string {
  const separator = options.separator ?? '-';
  const room = options.maxLength - hash.length - separator.length;
  let cut = stem.slice(0, Math.max(0, room));
  if (separator) while (cut.endsWith(separator)) cut = cut.slice(0, -separator.length);
  return `${cut || (options.fallback ?? 'k8or')}${separator}${hash}`;
}

/** `text` in lowercase letters, digits and single hyphens, without hyphens at either end (a DNS label's alphabet). */
export function dnsLabelStem(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

/**
 * The default external name of the generic rules: `<namespace>-<name>-<hash>`
 * as a DNS label (at most 63 characters), the hash taken over cluster id,
 * namespace and name. For providers that declare no naming rules of their own.
 */
export function genericDefaultName(input: { clusterId: string; namespace: string; name: string }): string {
  return withHash(dnsLabelStem(`${input.namespace}-${input.name}`), shortHash(input.clusterId, input.namespace, input.name), { maxLength: 63 });
}

/** The generic naming rule: a DNS label (1 to 63 lowercase letters, digits and hyphens, alphanumeric at both ends). */
export function validateGenericName(name: string, field = 'spec.name'): Violation[] {
  const c = new ViolationCollector(field);
  c.check(name.length >= 1 && name.length <= 63, 'name.length', `names must be 1 to 63 characters long; "${name}" has ${name.length}`);
  c.check(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name), 'name.dns-label', 'names may contain only lowercase letters, digits and hyphens, and must start and end with a letter or digit');
  return c.violations;
}
