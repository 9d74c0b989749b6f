import { Annotations, type ManagedKindName, type ProviderConfig, type Violation } from '@k8or/api';
import { externalNameFor, mayHaveCreated, namingRulesFor } from '@k8or/core/policy';
import { cloudResourceKey, cloudTargetOf, type CloudTarget } from './cloud-resource.js';
import { annotation, field, isManagedKind, namespaceOf, providerConfigFor, stringField } from './resource.js';
import type { AdmissionContext, ResourceRef } from './types.js';

/** Rule identifiers of the one-object checks. */
export const OneObjectRules = {
  /** A second object names a cloud resource another object already names. */
  oneObject: 'cloud-resource.one-object',
  /** A ProviderConfig in use by created resources would point elsewhere. */
  targetInUse: 'providerconfig.target-in-use',
} as const;

/** How many other objects a message names before it says "and N more". */
const LISTED = 5;

/** The cloud resource a Bucket or Table names, and through what. */
export interface NamedResource extends ResourceRef {
  kind: ManagedKindName;
  externalName: string;
  providerConfig: string;
  target: CloudTarget;
  /** Equal for two objects exactly when they name one cloud resource. */
  key: string;
  /** metadata.creationTimestamp; the older object is named first. */
  createdAt: string;
  deleting: boolean;
}

/** Looks a ProviderConfig up by name; a stand-in for the context's when a change is being judged. */
type ProviderConfigLookup = (name: string) => ProviderConfig | undefined;

/**
 * The cloud resource a Bucket or Table names, by the engine's rules: the
 * ProviderConfig it uses (its target), its kind, and its external name
 * (`spec.name`, else the `k8or.io/external-name` annotation, else the
 * provider's default name for this cluster). undefined when any part is not
 * known yet (no ProviderConfig, provider not installed, no cluster id for a
 * default name).
 */
export function namedResourceOf(object: unknown, context: AdmissionContext, requestNamespace?: string, lookup: ProviderConfigLookup = (name) => context.getProviderConfig(name)): NamedResource | undefined {
  const kind = stringField(object, 'kind');
  if (!kind || !isManagedKind(kind)) return undefined;
  const namespace = namespaceOf(object, requestNamespace) ?? 'default';
  const choice = providerConfigFor(object, namespace, context);
  const providerConfig = choice ? lookup(choice.name) : undefined;
  const plugin = providerConfig ? context.providers.get(providerConfig.spec.provider) : undefined;
  if (!choice || !providerConfig || !plugin) return undefined;
  const given = stringField(object, 'spec', 'name') ?? annotation(object, Annotations.externalName);
  const named = { ...(object as Record<string, unknown>), metadata: { ...(field(object, 'metadata') as Record<string, unknown>), namespace } };
  const externalName = given ?? (context.clusterId ? externalNameFor(named, namingRulesFor(plugin, kind), context.clusterId) : undefined);
  if (!externalName) return undefined;
  const target = cloudTargetOf(providerConfig, plugin);
  return {
    kind,
    namespace,
    name: stringField(object, 'metadata', 'name') ?? '',
    externalName,
    providerConfig: choice.name,
    target,
    key: cloudResourceKey(target, kind, externalName),
    createdAt: stringField(object, 'metadata', 'creationTimestamp') ?? '',
    deleting: field(object, 'metadata', 'deletionTimestamp') !== undefined,
  };
}

/**
 * Other Buckets or Tables in the cluster that name the same cloud resource as
 * `resource` (same target, kind and external name), oldest first. Empty when
 * the context cannot list them (offline without resources).
 */
export function othersNaming(resource: NamedResource, context: AdmissionContext, lookup?: ProviderConfigLookup, skip: (other: NamedResource) => boolean = () => false): NamedResource[] {
  const found: NamedResource[] = [];
  for (const object of context.resourcesNaming?.(resource.kind, resource.externalName) ?? []) {
    const other = namedResourceOf(object, context, undefined, lookup);
    if (!other || other.key !== resource.key || sameObject(other, resource) || skip(other)) continue;
    found.push(other);
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || describe(a).localeCompare(describe(b)));
}

/**
 * One object per cloud resource: a Bucket or Table may not name a cloud
 * resource that another object already names. The violation names the other
 * object(s), oldest first.
 */
export function sameResourceViolations(object: unknown, context: AdmissionContext, requestNamespace?: string): Violation[] {
  if (!context.resourcesNaming) return [];
  const resource = namedResourceOf(object, context, requestNamespace);
  if (!resource) return [];
  const others = othersNaming(resource, context);
  const first = others[0];
  if (!first) return [];
  const fromAnnotation = stringField(object, 'spec', 'name') === undefined && annotation(object, Annotations.externalName) !== undefined;
  return [
    {
      field: fromAnnotation ? `metadata.annotations[${Annotations.externalName}]` : 'spec.name',
      rule: OneObjectRules.oneObject,
      message:
        `${listed(others)} already ${others.length === 1 ? 'names' : 'name'} the ${resource.kind} ${JSON.stringify(resource.externalName)} in ${resource.target.description}` +
        `${first.deleting ? ` (${describe(first)} is being deleted: apply again once it is gone)` : ''}: one object per cloud resource ` +
        `(either object would manage it, and could delete it under the other); choose another name, or manage it through ${describe(first)}`,
    },
  ];
}

/**
 * What an UPDATE of a ProviderConfig that points it at another cloud target
 * would break for the Buckets and Tables that use it:
 * - one object per cloud resource: one of them would then name a resource
 *   another object already names there;
 * - the target is pinned: one of them may already have created its resource
 *   at the old target, and would stop rather than follow.
 */
export function retargetViolations(oldObject: unknown, object: unknown, context: AdmissionContext): Violation[] {
  const name = stringField(object, 'metadata', 'name') ?? '';
  const before = object as ProviderConfig;
  const previous = oldObject as ProviderConfig;
  const plugin = context.providers.get(stringField(object, 'spec', 'provider') ?? '');
  const oldPlugin = context.providers.get(stringField(oldObject, 'spec', 'provider') ?? '');
  if (!plugin || !oldPlugin || !context.getResource) return [];
  const from = cloudTargetOf(previous, oldPlugin);
  const to = cloudTargetOf(before, plugin);
  if (from.key === to.key) return [];
  const users = (context.resourcesUsingProviderConfig?.(name) ?? []).flatMap((ref) => {
    const stored = isManagedKind(ref.kind) ? context.getResource?.(ref.kind, ref.namespace, ref.name) : undefined;
    return stored === undefined ? [] : [stored];
  });
  if (users.length === 0) return [];

  const violations: Violation[] = [];
  const created = users.filter((user) => mayHaveCreated(user)).map((user) => namedResourceOf(user, context)).filter((r): r is NamedResource => r !== undefined);
  if (created.length > 0) {
    violations.push({
      field: 'spec',
      rule: OneObjectRules.targetInUse,
      message:
        `cannot point from ${from.description} to ${to.description}: ${listed(created)} ${created.length === 1 ? 'has' : 'have'} a cloud resource in ${from.description}, ` +
        `and the target of a created resource is pinned (they would stop, not follow); create another ProviderConfig for ${to.description} and use it for new objects`,
    });
  }

  const after: ProviderConfigLookup = (configName) => (configName === name ? before : context.getProviderConfig(configName));
  const collisions: string[] = [];
  for (const user of users) {
    const moved = namedResourceOf(user, context, undefined, after);
    if (!moved) continue;
    // Objects using this ProviderConfig move together; they are judged among themselves when they were admitted.
    const others = othersNaming(moved, context, undefined, (other) => other.providerConfig === name);
    if (others.length > 0) collisions.push(`${describe(moved)} would name ${JSON.stringify(moved.externalName)} as ${listed(others)} does`);
  }
  if (collisions.length > 0) {
    const more = collisions.length > LISTED ? `; and ${collisions.length - LISTED} more` : '';
    violations.push({
      field: 'spec',
      rule: OneObjectRules.oneObject,
      message: `pointing at ${to.description}, ${collisions.slice(0, LISTED).join('; ')}${more}: one object per cloud resource`,
    });
  }
  return violations;
}

const describe = (r: ResourceRef): string => `${r.kind} ${r.namespace}/${r.name}`;

const sameObject = (a: ResourceRef, b: ResourceRef): boolean => a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;

function listed(resources: readonly ResourceRef[]): string {
  const names = resources.slice(0, LISTED).map(describe).join(', ');
  return resources.length > LISTED ? `${names} and ${resources.length - LISTED} more` : names;
}
