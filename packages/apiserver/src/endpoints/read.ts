/** GET of one object and LIST with selectors and pagination. */
import type { KubeObject } from '../types.js';
import { metadataOf } from '../util.js';
import { labelsOf } from '../registry/meta.js';
import { parseFieldSelector } from '../selectors/fields.js';
import { parseLabelSelector } from '../selectors/labels.js';
import { objectKey } from '../storage/store.js';
import { toTable } from './table/table.js';
import { present, sendObject, type Scope } from './scope.js';
import { sendJson } from './respond.js';
import { ApiError, badRequest, notFound } from '../status.js';

export function handleGet(scope: Scope): void {
  const { info, type } = scope;
  const obj = scope.ctx.store.get(type.key, info.namespace, info.name);
  if (!obj) throw notFound(type.group, type.plural, info.name);
  sendObject(scope, 200, obj);
}

interface ContinueToken {
  /** resourceVersion of the first page */
  rv: number;
  /** last key served */
  start: string;
  /** snapshot the pages are served from */
  snapshot: string;
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    const t = parsed as Partial<ContinueToken>;
    if (typeof t.rv === 'number' && typeof t.start === 'string' && typeof t.snapshot === 'string') return { rv: t.rv, start: t.start, snapshot: t.snapshot };
  } catch {
    // fall through
  }
  throw badRequest(`continue key is not valid: ${token}`);
}

function continueExpired(): ApiError {
  return new ApiError(
    410,
    'Expired',
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
  );
}

/** The objects a list or watch selects: namespace, label selector, field selector. */
export function selectorFor(scope: Scope): (obj: KubeObject) => boolean {
  const labels = parseLabelSelector(scope.query.get('labelSelector'));
  const fields = parseFieldSelector(scope.query.get('fieldSelector'), `${scope.type.group}/${scope.type.plural}`);
  const conversion = scope.type.conversion;
  // field selectors name fields of the served shape
  return (obj) => labels(labelsOf(obj)) && fields(conversion ? conversion.fromStorage(obj) : obj);
}

function keyOf(obj: KubeObject): string {
  const meta = metadataOf(obj);
  return objectKey(String(meta['namespace'] ?? ''), String(meta['name'] ?? ''));
}

/** The index of the first object after `key` in a list sorted by key (as the store lists): a later page starts there without reading the ones before. */
function firstAfter(sorted: readonly KubeObject[], key: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keyOf(sorted[middle] as KubeObject) <= key) low = middle + 1;
    else high = middle;
  }
  return low;
}

export function handleList(scope: Scope): void {
  const { ctx, info, type, query } = scope;
  const matches = selectorFor(scope);
  const limitParam = query.get('limit');
  const limit = limitParam ? Number(limitParam) : 0;
  if (limitParam && (!Number.isInteger(limit) || limit < 0)) throw badRequest(`invalid limit: ${limitParam}`);
  const continueParam = query.get('continue');
  const token = continueParam ? decodeContinue(continueParam) : undefined;
  let all: KubeObject[];
  let listRv: number;
  if (token) {
    const snapshot = ctx.listSnapshots.get(token.snapshot);
    if (!snapshot) throw continueExpired();
    all = snapshot.objects;
    listRv = snapshot.resourceVersion;
  } else {
    all = ctx.store.list(type.key, info.namespace || undefined);
    listRv = ctx.store.resourceVersion;
  }

  // As the API server's storage: a selector filters, so the remaining count is only known without one.
  const selective = Boolean(query.get('labelSelector') || query.get('fieldSelector'));
  const selected: KubeObject[] = [];
  let remaining: number | undefined;
  let nextStart: string | undefined;
  for (let i = token ? firstAfter(all, token.start) : 0; i < all.length; i++) {
    const obj = all[i] as KubeObject;
    if (!matches(obj)) continue;
    if (limit > 0 && selected.length >= limit) {
      remaining = selective ? undefined : all.length - i;
      nextStart = keyOf(selected[selected.length - 1] as KubeObject);
      break;
    }
    selected.push(obj);
  }
  const listMeta: Record<string, unknown> = { resourceVersion: String(listRv) };
  if (nextStart !== undefined) {
    const snapshot = token?.snapshot ?? ctx.listSnapshots.keep(all, listRv);
    listMeta['continue'] = Buffer.from(JSON.stringify({ rv: listRv, start: nextStart, snapshot } satisfies ContinueToken)).toString('base64url');
    if (remaining !== undefined) listMeta['remainingItemCount'] = remaining;
  }
  const items = selected.map((obj) => present(scope, obj));
  if (scope.table) {
    sendJson(scope.res, 200, toTable(items, type, scope.version, scope.table, listMeta), scope.warnings);
    return;
  }
  sendJson(scope.res, 200, { apiVersion: scope.apiVersion, kind: type.listKind, metadata: listMeta, items }, scope.warnings);
}
