/** Field selectors (`?fieldSelector=metadata.name=x,metadata.namespace!=y`). */
import type { KubeObject } from '../types.js';
import { isObject } from '../util.js';
import { badRequest } from '../status.js';

export type FieldSelector = (obj: KubeObject) => boolean;

interface FieldRequirement { path: string; equal: boolean; value: string }

const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];

/** Extra selectable fields of built-in kinds, keyed by resource key (group/plural). */
const EXTRA_FIELDS: Record<string, string[]> = {
  '/secrets': ['type'],
  '/namespaces': ['status.phase'],
  '/events': [
    'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
    'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath',
    'reason', 'reportingComponent', 'source', 'type',
  ],
  'events.k8s.io/events': ['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'reportingController', 'type'],
};

function valueAt(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (!isObject(cur)) return '';
    cur = cur[part];
  }
  if (path === 'source' && isObject(cur)) return String(cur['component'] ?? '');
  return cur === undefined || cur === null ? '' : String(cur);
}

/** Parse a field selector for one resource; unsupported fields get 400 like the real server. */
export function parseFieldSelector(selector: string | null | undefined, resourceKey: string): FieldSelector {
  if (!selector || !selector.trim()) return () => true;
  const allowed = [...COMMON_FIELDS, ...(EXTRA_FIELDS[resourceKey] ?? [])];
  const requirements: FieldRequirement[] = [];
  for (const term of selector.split(',').map((t) => t.trim()).filter(Boolean)) {
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const path = (m[1] as string).trim();
    if (!allowed.includes(path)) throw badRequest(`field label not supported: ${path}`);
    requirements.push({ path, equal: m[2] !== '!=', value: (m[3] as string).trim() });
  }
  return (obj) => requirements.every((r) => (valueAt(obj, r.path) === r.value) === r.equal);
}

/** The single name an `metadata.name=x` selector pins, if any (used for watch by name). */
export function selectedName(selector: string | null | undefined): string | undefined {
  const m = /(?:^|,)\s*metadata\.name\s*==?\s*([^,]+)/.exec(selector ?? '');
  return m ? (m[1] as string).trim() : undefined;
}
