/** Query parameters as the GCS JSON API reads them. */
import { GcsErrors } from './errors.js';

/**
 * A boolean query parameter: `true` or `false` in any case (the Google Cloud SDK sends `True`), as
 * GCS accepts them; absent is `false`. Anything else is 400.
 */
export function booleanParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === '') return false;
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw GcsErrors.invalid(`Invalid boolean value '${value}' for parameter '${name}'.`);
}
