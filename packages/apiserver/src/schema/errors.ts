import type { FieldError } from './types.js';

// Builders for field errors, worded as k8s.io/apimachinery/pkg/util/validation/field prints them,
// and value formatting as Go's fmt does for JSON-decoded values (so kubectl output reads as on a real cluster).

/** Go's strconv.Quote, close enough for JSON strings. */
export function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

/** Go's %v for a float64: shortest digits, exponent form when the decimal exponent is < -4 or >= 6 (1e+06). */
export function goFloat(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
  if (v === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(v)));
  return exp < -4 || exp >= 6 ? goExponent(v) : String(v);
}

function goExponent(v: number): string {
  const [mantissa, e] = v.toExponential().split('e') as [string, string];
  const n = Number(e);
  const digits = String(Math.abs(n)).padStart(2, '0');
  return `${mantissa}e${n < 0 ? '-' : '+'}${digits}`;
}

/** Go's %#v of a JSON value held in interface{} (used for map and slice values in messages). */
export function goSyntax(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSyntax).join(', ')}}`;
  if (typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((k) => `${goQuote(k)}:${goSyntax((value as Record<string, unknown>)[k])}`);
    return `map[string]interface {}{${entries.join(', ')}}`;
  }
  return String(value);
}

/** The bad value as field.Error prints it after "Invalid value: ". */
export function formatBadValue(value: unknown): string {
  // field.Error prints a nil value as the string "null", quoted.
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : goFloat(value);
  if (typeof value === 'boolean') return String(value);
  return goSyntax(value);
}

const withDetail = (head: string, detail: string): string => (detail ? `${head}: ${detail}` : head);

export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { field, reason: 'FieldValueInvalid', message: withDetail(`Invalid value: ${formatBadValue(value)}`, detail) };
}

export function typeInvalid(field: string, value: unknown, detail: string): FieldError {
  return { field, reason: 'FieldValueTypeInvalid', message: withDetail(`Invalid value: ${formatBadValue(value)}`, detail) };
}

export function required(field: string, detail = ''): FieldError {
  return { field, reason: 'FieldValueRequired', message: withDetail('Required value', detail) };
}

export function forbidden(field: string, detail: string): FieldError {
  return { field, reason: 'FieldValueForbidden', message: withDetail('Forbidden', detail) };
}

export function notSupported(field: string, value: unknown, supported: unknown[]): FieldError {
  const quoted = supported.map((v) => goQuote(typeof v === 'string' ? v : JSON.stringify(v)));
  return {
    field,
    reason: 'FieldValueNotSupported',
    message: withDetail(`Unsupported value: ${formatBadValue(value)}`, quoted.length ? `supported values: ${quoted.join(', ')}` : ''),
  };
}

export function tooLong(field: string, maxLength: number): FieldError {
  return { field, reason: 'FieldValueTooLong', message: `Too long: may not be more than ${maxLength} bytes` };
}

export function tooMany(field: string, actual: number, max: number): FieldError {
  return { field, reason: 'FieldValueTooMany', message: `Too many: ${actual}: must have at most ${max} items` };
}

export function duplicate(field: string, value: unknown, detail = ''): FieldError {
  return { field, reason: 'FieldValueDuplicate', message: withDetail(`Duplicate value: ${formatBadValue(value)}`, detail) };
}

/** The full one-line text of a field error, as in a Status message: `spec.name: Invalid value: ...`. */
export function fieldErrorText(error: FieldError): string {
  return `${error.field}: ${error.message}`;
}
