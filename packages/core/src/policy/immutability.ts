import { isDeepStrictEqual } from 'node:util';
import { Annotations, type Violation } from '@k8or/api';
import { annotation, field, fieldAt, stringField } from './read.js';

/** Rule identifiers of the immutability checks, stable for tooling. */
export const ImmutableRules = {
  externalName: 'immutable.name',
  externalNameAnnotation: 'annotation.external-name',
  location: 'immutable.location',
  partitionKey: 'immutable.partition-key',
  sortKey: 'immutable.sort-key',
} as const;

const show = (value: unknown): string => (value === undefined ? 'unset' : JSON.stringify(value));

/**
 * What an UPDATE may not change, because the cloud cannot change it in place:
 * the external name (a rename is a new resource), a bucket's location (a bucket
 * cannot move) and a table's key schema. Values are compared structurally.
 * Messages carry the old and new values.
 */
export function immutableFieldChanges(kind: string, oldObject: unknown, newObject: unknown): Violation[] {
  const violations: Violation[] = [];
  const changed = (path: string[], rule: string, why: string, allowSetting: boolean): void => {
    const before = fieldAt(oldObject, path);
    const after = fieldAt(newObject, path);
    if (before === undefined && allowSetting) return;
    if (isDeepStrictEqual(before, after)) return;
    violations.push({ field: path.join('.'), rule, message: `immutable once set: was ${show(before)}, now ${show(after)}; ${why}` });
  };

  changed(['spec', 'name'], ImmutableRules.externalName, 'renaming would mean a new cloud resource and orphan the old one', true);
  if (kind === 'Bucket') {
    changed(['spec', 'location'], ImmutableRules.location, 'a bucket cannot move; create a new Bucket in the new location and copy the data', true);
    // The bucket already lives somewhere even when the spec never said where: setting a different location later is a move too.
    const observed = stringField(oldObject, 'status', 'atProvider', 'location');
    const before = field(oldObject, 'spec', 'location');
    const after = stringField(newObject, 'spec', 'location');
    if (before === undefined && observed && after && after !== observed) {
      violations.push({
        field: 'spec.location',
        rule: ImmutableRules.location,
        message: `immutable once set: the bucket exists in ${JSON.stringify(observed)}, now ${JSON.stringify(after)}; a bucket cannot move`,
      });
    }
  }
  if (kind === 'Table') {
    const why = 'the cloud cannot change a key schema in place; create a new Table and migrate the items';
    changed(['spec', 'partitionKey'], ImmutableRules.partitionKey, why, false);
    changed(['spec', 'sortKey'], ImmutableRules.sortKey, why, false);
  }
  return violations;
}

/**
 * `spec.name` and the `k8or.io/external-name` annotation name the same cloud
 * resource; once both are set they must agree. The webhook refuses the
 * disagreement; the engine, which may run without the webhook, stops with a
 * condition instead of creating a second resource under the new name.
 */
export function externalNameConflict(resource: unknown): Violation | undefined {
  const external = annotation(resource, Annotations.externalName);
  const specName = stringField(resource, 'spec', 'name');
  if (!external || !specName || external === specName) return undefined;
  return {
    field: `metadata.annotations[${Annotations.externalName}]`,
    rule: ImmutableRules.externalNameAnnotation,
    message: `is ${JSON.stringify(external)} but spec.name is ${JSON.stringify(specName)}; they name the same cloud resource and must agree`,
  };
}
