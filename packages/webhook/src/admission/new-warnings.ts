/**
 * The warnings a write introduces or changes: on an update, those the stored object did not already
 * draw. A user is warned when they write what the warning is about, not again on every later write
 * (a `kubectl label`, an unrelated spec change). A warning's text names the field and its value, so a
 * changed value is a new warning.
 */
export function warningsNewTo(warnings: readonly string[], stored: readonly string[]): string[] {
  const already = new Set(stored);
  return warnings.filter((warning) => !already.has(warning));
}
