import { isCloudSetting, type ManagedKindName, type ManagedResource } from '@k8or/api';
import { configure } from 'safe-stable-stringify';
import type { FieldDiff } from '../provider/contract.js';
import { redactValue } from '../redact.js';

/**
 * The record of every cloud write: which fields the engine wrote, from which value to which.
 * One record per write goes out twice, with the same changes: as an Event (short, values
 * truncated, at most {@link MAX_EVENT_MESSAGE_BYTES}) and as a structured log line (complete).
 * Neither ever holds a credential: every value is redacted here, before either sees it.
 */

/** The cloud call a record describes: `release` removes k8or's owner tags (deletion policy Retain). */
export type CloudWriteOperation = 'create' | 'update' | 'delete' | 'release';

/** One field as a write changed it. `from` absent: the field was unset before; `to` absent: the write removed it. */
export interface FieldChange {
  field: string;
  from?: unknown;
  to?: unknown;
}

/** The structured log line of one cloud write (msg {@link CLOUD_WRITE_MESSAGE}). */
export interface CloudWriteRecord {
  /** `namespace/name` of the object. */
  object: string;
  kind: ManagedKindName;
  provider: string;
  /** Name of the ProviderConfig the write went through. */
  providerConfig: string;
  externalName: string;
  operation: CloudWriteOperation;
  /** The reason of the Event that carries the same record. */
  reason: string;
  changes: FieldChange[];
}

/** The `msg` of every cloud-write log line, so a change log can select them. */
export const CLOUD_WRITE_MESSAGE = 'cloud write';
/** Core/v1 Event messages longer than this are cut by many tools (events.k8s.io's `note` limit). */
export const MAX_EVENT_MESSAGE_BYTES = 1024;
/** A value longer than this is cut in an Event, with the count of characters left out. */
const MAX_EVENT_VALUE_CHARS = 80;

/** Keys in sorted order at every level, so a value reads the same whatever order the cloud listed it in. */
const canonical = configure({ deterministic: true, circularValue: '[Circular]', bigint: true });

/** What an update writes for these differences: each field from the cloud's value to the spec's. */
export function changesOfDiff(diff: readonly FieldDiff[]): FieldChange[] {
  return diff.map((d) => change(d.field, d.actual, d.desired));
}

/**
 * What a create writes: every cloud setting the spec sets (not k8or's own instructions such as
 * deletionPolicy), from unset, and the owner tags as `ownerTags.<key>` unless `ownerTags` is
 * undefined (a kind the cloud keeps no tags for).
 */
export function changesOfCreate(resource: ManagedResource, ownerTags: Readonly<Record<string, string>> | undefined): FieldChange[] {
  const spec = resource.spec as unknown as Record<string, unknown>;
  const settings = Object.keys(spec)
    .filter((key) => isCloudSetting(key) && spec[key] !== undefined)
    .sort()
    .map((key) => change(`spec.${key}`, undefined, spec[key]));
  return [...settings, ...ownerTagChanges(ownerTags, 'add')];
}

/** What a release removes: each of this object's owner tags the resource carried. */
export function changesOfRelease(found: Readonly<Record<string, string>> | undefined, ours: Readonly<Record<string, string>>): FieldChange[] {
  const carried = Object.fromEntries(Object.keys(ours).filter((key) => found?.[key] !== undefined).map((key) => [key, found?.[key] ?? '']));
  return ownerTagChanges(carried, 'remove');
}

/** The changes with every credential value, URL query string and sensitive key's value redacted (see redactValue). */
export function redactChanges(changes: readonly FieldChange[], secretValues: readonly string[]): FieldChange[] {
  return changes.map((c) => redactValue(c, secretValues));
}

/**
 * `spec.versioning: false -> true, spec.labels.team: "a" -> unset`: the changes as an Event
 * reads them, within `maxBytes`. A value longer than a line is cut, saying how much was left
 * out; changes that do not fit are counted at the end (the log line has them all).
 */
export function describeChanges(changes: readonly FieldChange[], maxBytes: number): string {
  const parts: string[] = [];
  let used = 0;
  for (const [index, c] of changes.entries()) {
    const part = `${c.field}: ${shortValue(c.from)} -> ${shortValue(c.to)}`;
    const rest = changes.length - index - 1;
    // Room for this part, its separator, and the count of what might not fit after it.
    const reserve = rest > 0 ? Buffer.byteLength(`, and ${rest} more fields`) : 0;
    const cost = Buffer.byteLength(part) + (parts.length > 0 ? 2 : 0);
    if (used + cost + reserve > maxBytes) {
      const left = changes.length - index;
      parts.push(`${parts.length > 0 ? 'and ' : ''}${left} more field${left === 1 ? '' : 's'}`);
      break;
    }
    parts.push(part);
    used += cost;
  }
  return parts.join(', ');
}

/** The Event message of a write: `lead` (`Repaired drift`), then its changes, within MAX_EVENT_MESSAGE_BYTES. */
export function writeEventMessage(lead: string, changes: readonly FieldChange[]): string {
  if (changes.length === 0) return `${lead}.`;
  return `${lead}: ${describeChanges(changes, MAX_EVENT_MESSAGE_BYTES - Buffer.byteLength(lead) - 3)}.`;
}

function change(field: string, from: unknown, to: unknown): FieldChange {
  return { field, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) };
}

function ownerTagChanges(tags: Readonly<Record<string, string>> | undefined, direction: 'add' | 'remove'): FieldChange[] {
  return Object.keys(tags ?? {})
    .sort()
    .map((key) => (direction === 'add' ? change(`ownerTags.${key}`, undefined, tags?.[key]) : change(`ownerTags.${key}`, tags?.[key], undefined)));
}

function shortValue(value: unknown): string {
  if (value === undefined) return 'unset';
  const text = canonical(value) ?? String(value);
  if (text.length <= MAX_EVENT_VALUE_CHARS) return text;
  return `${text.slice(0, MAX_EVENT_VALUE_CHARS)}... (${text.length - MAX_EVENT_VALUE_CHARS} more chars)`;
}
