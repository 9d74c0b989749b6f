import { formatViolations, GROUP, type Violation } from '@k8or/api';
import { defaultObject } from './defaulting.js';
import { warningsNewTo } from './new-warnings.js';
import { isPlainObject } from './patch.js';
import { checkDeletion } from './protection.js';
import { field, isManagedKind, stringField } from './resource.js';
import { validateObject } from './validation.js';
import { ADMISSION_API_VERSION, type AdmissionContext, type AdmissionRequest, type AdmissionResponse, type AdmissionReview } from './types.js';

/** Which of the two webhooks answers: `mutate` defaults, `validate` checks. */
export type WebhookKind = 'mutate' | 'validate';

/**
 * Deepest nesting an admitted object may have. k8or's schemas nest about six
 * levels; the guard keeps hostile input from exhausting the stack in the rules.
 */
export const MAX_OBJECT_DEPTH = 64;

/** The kinds k8or admits; anything else is allowed untouched. */
const ADMITTED_KINDS = new Set(['Bucket', 'Table', 'ProviderConfig']);

/**
 * Answers one AdmissionReview v1 request. Pure: the context answers every
 * lookup, nothing is written anywhere, so a dry run needs no special care
 * (`sideEffects: None`). The response always carries the request's uid.
 */
export function admit(review: AdmissionReview, context: AdmissionContext, webhook: WebhookKind = 'validate'): AdmissionReview {
  const request = review.request;
  if (!request) throw new TypeError('admit needs an AdmissionReview with a request');
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: answer(request, context, webhook) };
}

function answer(request: AdmissionRequest, context: AdmissionContext, webhook: WebhookKind): AdmissionResponse {
  const uid = request.uid;
  const kind = request.kind?.kind ?? '';
  if (request.kind?.group !== GROUP || !ADMITTED_KINDS.has(kind) || request.subResource) return { uid, allowed: true };
  const operation = request.operation;
  if (operation === 'DELETE') {
    if (webhook === 'mutate') return { uid, allowed: true };
    const violations = checkDeletion(kind, request.oldObject, context, request.name);
    return violations.length ? deny(uid, request, violations, 403, 'Forbidden', 'cannot be deleted') : { uid, allowed: true };
  }
  if (operation !== 'CREATE' && operation !== 'UPDATE') return { uid, allowed: true };
  if (!isPlainObject(request.object)) {
    return deny(uid, request, [{ field: 'request.object', rule: 'request.object', message: `an AdmissionReview for ${operation} must carry the object` }], 400, 'BadRequest', 'cannot be admitted');
  }
  for (const [name, value] of [['request.object', request.object], ['request.oldObject', request.oldObject]] as const) {
    if (nestsDeeperThan(value, MAX_OBJECT_DEPTH)) {
      return deny(uid, request, [{ field: name, rule: 'request.depth', message: `nests deeper than ${MAX_OBJECT_DEPTH} levels` }], 400, 'BadRequest', 'cannot be admitted');
    }
  }
  // An object on its way out (finalizer removal) is never blocked or changed.
  if (field(request.object, 'metadata', 'deletionTimestamp') !== undefined) return { uid, allowed: true };
  const options = { operation, oldObject: operation === 'UPDATE' ? request.oldObject : undefined, namespace: request.namespace };

  if (webhook === 'mutate') {
    if (!isManagedKind(kind)) return { uid, allowed: true };
    const { patch, warnings } = defaultObject(request.object, context, options);
    const response: AdmissionResponse = { uid, allowed: true };
    if (patch.length) Object.assign(response, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') });
    if (warnings.length) response.warnings = warnings;
    return response;
  }

  const { violations, warnings: all } = validateObject(request.object, context, options);
  const warnings = options.oldObject !== undefined ? warningsNewTo(all, validateObject(options.oldObject, context, { ...options, oldObject: options.oldObject }).warnings) : all;
  const response = violations.length ? deny(uid, request, violations, 422, 'Invalid', 'is invalid') : { uid, allowed: true };
  if (warnings.length) response.warnings = warnings;
  return response;
}

/** Violations listed in one denial; a hostile object could break thousands of rules. */
const MAX_LISTED_VIOLATIONS = 50;
/** Longest field or message in a denial: messages quote user values, and a denial must stay readable. */
const MAX_TEXT = 1024;

const clip = (text: string): string => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}... (${text.length - MAX_TEXT} more characters)` : text);

/** A denial that lists every violation in the message (`field: message (rule ...)`, one a line) and as status causes. */
function deny(uid: string, request: AdmissionRequest, all: Violation[], code: number, reason: string, what: string): AdmissionResponse {
  const kind = request.kind?.kind ?? 'object';
  const name = clip(request.name || stringField(request.object, 'metadata', 'name') || stringField(request.oldObject, 'metadata', 'name') || '');
  const count = all.length === 1 ? '1 violation' : `${all.length} violations`;
  const violations = all.slice(0, MAX_LISTED_VIOLATIONS).map((v) => ({ field: clip(v.field), rule: clip(v.rule), message: clip(v.message) }));
  const more = all.length > MAX_LISTED_VIOLATIONS ? `\n... and ${all.length - MAX_LISTED_VIOLATIONS} more` : '';
  return {
    uid,
    allowed: false,
    status: {
      code,
      reason,
      message: `${kind} "${name}" ${what} (${count}):\n${formatViolations(violations)}${more}`,
      details: {
        name,
        kind,
        group: GROUP,
        causes: violations.map((v) => ({ reason: v.rule, message: `${v.message} (rule ${v.rule})`, field: v.field })),
      },
    },
  };
}

/** True when `value` nests deeper than `limit`; iterative, so depth itself cannot overflow the stack. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
