import type { ManagedKindName } from './group.js';
import type { Violation } from './naming/violation.js';
import type { JSONSchemaProps } from './schemas/json-schema.js';
import { bucketSpecSchema } from './schemas/bucket.js';
import { tableSpecSchema } from './schemas/table.js';

/** Rule identifier of a driftPolicy path that names no setting of the kind. */
export const DRIFT_POLICY_PATH_RULE = 'driftPolicy.path';

const SPEC_SCHEMAS: Record<ManagedKindName, JSONSchemaProps> = { Bucket: bucketSpecSchema, Table: tableSpecSchema };

/** Spec fields that are k8or's own instructions, not settings the cloud holds: they never drift. */
const NOT_CLOUD_SETTINGS = new Set(['providerConfigRef', 'name', 'deletionPolicy', 'managementPolicy', 'writeOutputsTo', 'driftPolicy', 'forceDelete']);

/** Whether the top-level spec field `key` is a setting the cloud holds (spec.versioning), not one of k8or's own instructions (spec.deletionPolicy). */
export function isCloudSetting(key: string): boolean {
  return !NOT_CLOUD_SETTINGS.has(key);
}

/**
 * Why `path` names no cloud setting of the kind's spec, or undefined when it does. A path walks
 * the spec schema's properties; under a map (spec.labels) any key is a setting; a list
 * (spec.lifecycle) is one setting, named as a whole.
 */
export function driftPathProblem(kind: ManagedKindName, path: string): string | undefined {
  const [root, ...segments] = path.split('.');
  if (root !== 'spec' || segments.length === 0 || segments.some((s) => s === '')) return `"${path}" is not a spec path: write spec.<field>, such as spec.versioning or spec.labels.team`;
  const top = segments[0] ?? '';
  if (NOT_CLOUD_SETTINGS.has(top)) return `spec.${top} is k8or's own setting, not one the cloud holds, so it never drifts`;
  let schema: JSONSchemaProps | undefined = SPEC_SCHEMAS[kind];
  let walked = 'spec';
  for (const segment of segments) {
    if (schema?.type === 'array') return `${walked} is a list: name it as a whole (${walked}), not an element's field`;
    const next: JSONSchemaProps | undefined = schema?.properties?.[segment] ?? (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (!next) {
      const known = Object.keys(schema?.properties ?? {}).filter((k) => walked !== 'spec' || !NOT_CLOUD_SETTINGS.has(k));
      return `${walked} of a ${kind} has no field "${segment}"${known.length > 0 ? `; its fields are ${known.join(', ')}` : ''}`;
    }
    schema = next;
    walked = `${walked}.${segment}`;
  }
  return undefined;
}

/** Every driftPolicy path of a spec that names no cloud setting of the kind, one violation each under `spec.driftPolicy.fields[i].path`. */
export function driftPolicyViolations(kind: ManagedKindName, spec: unknown): Violation[] {
  const fields = (spec as { driftPolicy?: { fields?: unknown } } | undefined)?.driftPolicy?.fields;
  if (!Array.isArray(fields)) return [];
  const violations: Violation[] = [];
  fields.forEach((entry: unknown, index) => {
    const path = (entry as { path?: unknown } | null)?.path;
    if (typeof path !== 'string') return;
    const problem = driftPathProblem(kind, path);
    if (problem) violations.push({ field: `spec.driftPolicy.fields[${index}].path`, rule: DRIFT_POLICY_PATH_RULE, message: problem });
  });
  return violations;
}
