/** Kubernetes-style JSONPath (`.status.conditions[?(@.type=="Ready")].status`) for printer columns. */
import { JSONPath } from 'jsonpath-plus';

const cache = new Map<string, string>();

function toJsonPathPlus(path: string): string {
  let expr = cache.get(path);
  if (expr === undefined) {
    let p = path.trim();
    // kubectl-style templates may be wrapped in braces: {.spec.name}
    if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
    expr = p.startsWith('$') ? p : `$${p.startsWith('.') || p.startsWith('[') ? '' : '.'}${p}`;
    cache.set(path, expr);
  }
  return expr;
}

/** All values the path selects in `json` (empty when none or when the path is malformed). */
export function evaluateJsonPath(path: string, json: unknown): unknown[] {
  try {
    const result: unknown = JSONPath({ path: toJsonPathPlus(path), json: json as object, wrap: true, eval: 'safe' });
    return Array.isArray(result) ? result : [];
  } catch {
    return [];
  }
}
