/** `fields=` partial responses, as the GCS JSON API answers them (cloud.google.com/storage/docs/json_api#partial-response). */
import mask from 'json-mask';
import { GcsErrors } from './errors.js';
import type { Json } from './state.js';

type Selection = NonNullable<ReturnType<typeof mask.compile>>;

/** The selections of a field list's top-level terms, split at the commas outside parentheses. */
function topLevelTerms(fields: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < fields.length; i++) {
    const char = fields[i];
    if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    if (depth < 0) break;
    if (char === ',' && depth === 0) {
      terms.push(fields.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw GcsErrors.invalid(`Invalid field selection ${fields}`);
  terms.push(fields.slice(start));
  if (terms.some((term) => term === '' || term.startsWith('/') || term.endsWith('/'))) throw GcsErrors.invalid(`Invalid field selection ${fields}`);
  return terms;
}

/** Both selections together: a member selected whole by either stays whole. */
function union(left: Selection, right: Selection): Selection {
  const merged: Selection = { ...left };
  for (const [key, selection] of Object.entries(right)) {
    const existing = merged[key];
    if (!existing) {
      merged[key] = selection;
      continue;
    }
    const type = existing.type === 'array' || selection.type === 'array' ? 'array' : existing.type;
    if (existing.properties && selection.properties) {
      merged[key] = { ...existing, type, properties: union(existing.properties, selection.properties) };
    } else {
      // Selected whole: no `properties` (json-mask's types call the member required; at run time it is absent).
      const { properties: _partOnly, ...whole } = existing;
      merged[key] = { ...whole, type } as Selection[string];
    }
  }
  return merged;
}

/**
 * The part of `body` that `fields` selects: a comma list of names, `a/b` for a member of a member
 * (of each item of a list), `items(name,generation)` for several members of each item, `*` for all.
 * json-mask implements Google's partial-response syntax; the terms of the list are compiled one by
 * one and united, because json-mask keeps only the last of `items/name,items/size` (the Google Cloud
 * SDK sends such lists). No `fields`: the whole body.
 */
export function selectFields(body: Json, fields: string | null): Json {
  const compact = fields?.replace(/\s+/g, '') ?? '';
  if (compact === '') return body;
  const selection = topLevelTerms(compact)
    .map((term) => mask.compile(term))
    .reduce<Selection>((all, term) => (term ? union(all, term) : all), {});
  return (mask.filter(body, selection) as Json | null) ?? {};
}
