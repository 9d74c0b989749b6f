/** Label selectors in the string form of `?labelSelector=` (k8s.io/apimachinery/pkg/labels). */
import { badRequest } from '../status.js';

type Operator = 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';
interface Requirement { key: string; op: Operator; values: string[] }

export type LabelSelector = (labels: Record<string, string>) => boolean;

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Split on commas that are not inside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += ch;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t.length > 0);
}

function checkKey(key: string, selector: string): void {
  if (!KEY.test(key) || key.length > 316) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${selector}"`);
}

function checkValue(value: string, selector: string): void {
  if (!VALUE.test(value) || value.length > 63) throw badRequest(`unable to parse requirement: invalid label value: "${value}" in selector "${selector}"`);
}

function parseTerm(term: string, selector: string): Requirement {
  let m = /^!\s*(\S+)$/.exec(term);
  if (m) {
    checkKey(m[1] as string, selector);
    return { key: m[1] as string, op: '!', values: [] };
  }
  m = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (m) {
    const values = (m[3] as string).split(',').map((v) => v.trim());
    checkKey(m[1] as string, selector);
    values.forEach((v) => checkValue(v, selector));
    return { key: m[1] as string, op: m[2] as 'in' | 'notin', values };
  }
  m = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(.*)$/.exec(term);
  if (m) {
    const key = m[1] as string;
    const value = (m[3] as string).trim();
    checkKey(key, selector);
    const op = m[2] === '!=' ? '!=' : m[2] === '<' ? 'lt' : m[2] === '>' ? 'gt' : '=';
    if (op === 'lt' || op === 'gt') {
      if (!/^-?\d+$/.test(value)) throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer in selector "${selector}"`);
    } else checkValue(value, selector);
    return { key, op, values: [value] };
  }
  if (/^\S+$/.test(term)) {
    checkKey(term, selector);
    return { key: term, op: 'exists', values: [] };
  }
  throw badRequest(`unable to parse requirement: found '${term}', expected: identifier in selector "${selector}"`);
}

function matches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
      return has && value === r.values[0];
    case '!=':
      return !has || value !== r.values[0];
    case 'in':
      return has && r.values.includes(value as string);
    case 'notin':
      return !has || !r.values.includes(value as string);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value as string)) return false;
      const n = Number(value);
      const bound = Number(r.values[0]);
      return r.op === 'gt' ? n > bound : n < bound;
    }
  }
}

/** Parse a label selector; an empty string selects everything. Throws 400 BadRequest on bad syntax. */
export function parseLabelSelector(selector: string | null | undefined): LabelSelector {
  if (!selector || !selector.trim()) return () => true;
  const requirements = splitTerms(selector).map((t) => parseTerm(t, selector));
  return (labels) => requirements.every((r) => matches(r, labels));
}

/** A metav1.LabelSelector object (matchLabels + matchExpressions), as webhooks use. */
export function labelSelectorFromObject(value: unknown): LabelSelector {
  if (typeof value !== 'object' || value === null) return () => true;
  const sel = value as { matchLabels?: Record<string, unknown>; matchExpressions?: unknown[] };
  const requirements: Requirement[] = [];
  for (const [key, v] of Object.entries(sel.matchLabels ?? {})) requirements.push({ key, op: '=', values: [String(v)] });
  for (const expr of sel.matchExpressions ?? []) {
    if (typeof expr !== 'object' || expr === null) continue;
    const e = expr as { key?: unknown; operator?: unknown; values?: unknown };
    const key = String(e.key ?? '');
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    const op = e.operator === 'In' ? 'in' : e.operator === 'NotIn' ? 'notin' : e.operator === 'Exists' ? 'exists' : e.operator === 'DoesNotExist' ? '!' : undefined;
    if (!op) return () => false;
    requirements.push({ key, op, values });
  }
  return (labels) => requirements.every((r) => matches(r, labels));
}
