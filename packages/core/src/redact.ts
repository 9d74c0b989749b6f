import { SENSITIVE_KEYS } from './logging.js';

/** Shortest credential value searched for in a text: shorter ones would blot out ordinary words. */
const MIN_SECRET_LENGTH = 6;
const CENSOR = '[Redacted]';
const SENSITIVE = new Set(SENSITIVE_KEYS);

/**
 * Makes any text safe to print: every credential value becomes `***`, and a URL keeps only
 * scheme, host, port and path (no user info, query string or fragment, where SAS tokens and
 * signed parameters live).
 */
export function redactText(text: string, secretValues: readonly string[]): string {
  let out = text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^/\s?#@"']*@)?([^\s?#"']*)(\?[^\s#"']*)?(#[^\s"']*)?/gi, (_all, scheme: string, _user, rest: string) => `${scheme}${rest}`);
  for (const value of secretValues) {
    if (value.length >= MIN_SECRET_LENGTH) out = out.split(value).join('***');
  }
  return out;
}

/** The strings to hide for a Secret's values: each value, and each string inside one that is JSON (a service-account key file). */
export function secretNeedles(values: readonly string[]): string[] {
  const needles = new Set<string>();
  const leaves = (v: unknown): void => {
    if (typeof v === 'string') needles.add(v);
    else if (Array.isArray(v)) v.forEach(leaves);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(leaves);
  };
  for (const value of values) {
    needles.add(value);
    try {
      leaves(JSON.parse(value));
    } catch {
      // not JSON: the value itself is the secret
    }
  }
  // Longest first, so a value is hidden whole before any part of it.
  return [...needles].filter((n) => n.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/**
 * A copy of a JSON-shaped value safe to print: {@link redactText} on every string (object keys
 * included), and `[Redacted]` for the value under any key the logger treats as sensitive
 * (SENSITIVE_KEYS: `password`, `sasToken`, `connectionString`, ...).
 */
export function redactValue<T>(value: T, secretValues: readonly string[]): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, secretValues);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, secretValues), SENSITIVE.has(k) ? CENSOR : walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}
