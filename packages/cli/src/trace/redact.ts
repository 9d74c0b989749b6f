import { redactText, secretNeedles } from '@k8or/core';

// One redaction for every output of k8or (the engine's cloud-write records use it too).
export { redactText, secretNeedles };

/** {@link redactText} through every string of a JSON-shaped value (keys included). */
export function redact<T>(value: T, secretValues: readonly string[]): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, secretValues);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactText(k, secretValues), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
