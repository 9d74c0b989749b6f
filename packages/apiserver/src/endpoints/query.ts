/**
 * A boolean query parameter as kube-apiserver reads one (apimachinery's Convert_Slice_string_To_bool):
 * absent, `0` or `false` in any case is false; anything else, `True` and an empty value included, is
 * true. Clients differ (`watch=1`, `watch=true`, Python's `watch=True`); all of them must work.
 */
export function queryFlag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  return value !== null && value !== '0' && value.toLowerCase() !== 'false';
}
