import { Annotations, MANAGED_KINDS, type ManagedKindName, type ProviderConfig, type Violation } from '@k8or/api';
import type { CloudTarget, ProviderPlugin } from '@k8or/core';
import { cloudResourceKey, cloudTargetFor, externalNameFor, mayHaveCreated, namingRulesFor, sameCloudTarget } from '@k8or/core/policy';
import { annotation, field, isManagedKind, namespaceOf, providerConfigFor, stringField } from './resource.js';
import type { AdmissionContext, ResourceRef } from './types.js';

/** Rule identifiers of the one-object checks. */
export const OneObjectRules = {
  /** A second object names a cloud resource another object already names. */
  oneObject: 'cloud-resource.one-object',
} as const;

/** How many other objects a message names before it says "and N more". */
const LISTED = 5;

/** The cloud resource a Bucket or Table names, and through what. */
export interface NamedResource extends ResourceRef {
  kind: ManagedKindName;
  externalName: string;
  providerConfig: string;
  /** Where its ProviderConfig points for this kind (core's cloudTargetFor; credentials left out, as admission cannot read them). */
  target: CloudTarget;
  /** Equal for two objects exactly when they name one cloud resource (core's cloudResourceKey). */
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
  const plugin = context.providers.get(stringField(providerConfig, 'spec', 'provider') ?? '');
  if (!choice || !providerConfig || !plugin) return undefined;
  const given = stringField(object, 'spec', 'name') ?? annotation(object, Annotations.externalName);
  const named = { ...(object as Record<string, unknown>), metadata: { ...(field(object, 'metadata') as Record<string, unknown>), namespace } };
  const externalName = given ?? (context.clusterId ? externalNameFor(named, namingRulesFor(plugin, kind), context.clusterId) : undefined);
  if (!externalName) return undefined;
  const target = targetOf(plugin, kind, providerConfig);
  if (!target) return undefined;
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
 * Every Bucket or Table in the cluster that names the cloud resource of
 * `kind` and `externalName` at `target` (core's cloudResourceKey), oldest
 * first. Empty when the context cannot list them (offline without resources).
 */
export function objectsNaming(kind: ManagedKindName, externalName: string, target: CloudTarget, context: AdmissionContext, lookup?: ProviderConfigLookup): NamedResource[] {
  const key = cloudResourceKey(target, kind, externalName);
  const found: NamedResource[] = [];
  for (const object of context.resourcesNaming?.(kind, externalName) ?? []) {
    const other = namedResourceOf(object, context, undefined, lookup);
    if (other?.key === key) found.push(other);
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || describe(a).localeCompare(describe(b)));
}

/** The objects other than `resource` itself that name its cloud resource, oldest first; `skip` leaves more out. */
export function othersNaming(resource: NamedResource, context: AdmissionContext, lookup?: ProviderConfigLookup, skip: (other: NamedResource) => boolean = () => false): NamedResource[] {
  return objectsNaming(resource.kind, resource.externalName, resource.target, context, lookup).filter((other) => !sameObject(other, resource) && !skip(other));
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
        `${listed(others)} already ${others.length === 1 ? 'names' : 'name'} the ${resource.kind} ${JSON.stringify(resource.externalName)} in ${describeTarget(resource.target)}` +
        `${first.deleting ? ` (${describe(first)} is being deleted: apply again once it is gone)` : ''}: one object per cloud resource ` +
        `(either object would manage it, and could delete it under the other); choose another name, or manage it through ${describe(first)}`,
    },
  ];
}

/** What a ProviderConfig UPDATE that points it elsewhere would do to the Buckets and Tables that use it. */
export interface RetargetOutcome {
  /** One object per cloud resource: an object would then name a resource another object already names. */
  violations: Violation[];
  /** The target is pinned: objects that may have created their resource at the old target will stop, not follow. */
  warnings: string[];
}

/**
 * An UPDATE of a ProviderConfig, judged for the Buckets and Tables that use
 * it, each at its kind's target (core's cloudTargetFor) before and after:
 * - denied when one of them would then name a cloud resource that another
 *   object already names there (one object per cloud resource);
 * - a warning when one of them may already have created its resource at the
 *   old target: the target is pinned, so the engine stops it with a condition
 *   rather than create a second resource. Not a denial: the sandbox points its
 *   ProviderConfigs at its backends' new ports on every restart, and an
 *   operator may re-point an endpoint at the same service on purpose.
 */
export function retargetOutcome(oldObject: unknown, object: unknown, context: AdmissionContext): RetargetOutcome {
  const outcome: RetargetOutcome = { violations: [], warnings: [] };
  const name = stringField(object, 'metadata', 'name') ?? '';
  if (!context.getResource || !context.resourcesUsingProviderConfig) return outcome;
  // Most updates (labels, credentials, rate limits) point nowhere new: then no object need be looked at.
  const pluginOf = (config: unknown): ProviderPlugin | undefined => context.providers.get(stringField(config, 'spec', 'provider') ?? '');
  const moves = MANAGED_KINDS.some((kind) => {
    const from = targetOf(pluginOf(oldObject), kind, oldObject as ProviderConfig);
    const to = targetOf(pluginOf(object), kind, object as ProviderConfig);
    return !from || !to || !sameCloudTarget(from, to);
  });
  if (!moves) return outcome;
  const before: ProviderConfigLookup = (configName) => (configName === name ? (oldObject as ProviderConfig) : context.getProviderConfig(configName));
  const after: ProviderConfigLookup = (configName) => (configName === name ? (object as ProviderConfig) : context.getProviderConfig(configName));

  const stranded: NamedResource[] = [];
  const collisions: string[] = [];
  for (const ref of context.resourcesUsingProviderConfig(name)) {
    const user = isManagedKind(ref.kind) ? context.getResource(ref.kind, ref.namespace, ref.name) : undefined;
    const was = namedResourceOf(user, context, undefined, before);
    const moved = namedResourceOf(user, context, undefined, after);
    if (!was || !moved || sameCloudTarget(was.target, moved.target)) continue;
    if (mayHaveCreated(user)) stranded.push(was);
    // Objects using this ProviderConfig move together; they were judged among themselves when admitted.
    const others = othersNaming(moved, context, undefined, (other) => other.providerConfig === name);
    if (others.length > 0) collisions.push(`${describe(moved)} would name the ${moved.kind} ${JSON.stringify(moved.externalName)} in ${describeTarget(moved.target)}, which ${listed(others)} already ${others.length === 1 ? 'names' : 'name'}`);
  }
  if (collisions.length > 0) {
    const more = collisions.length > LISTED ? `; and ${collisions.length - LISTED} more` : '';
    outcome.violations.push({
      field: 'spec',
      rule: OneObjectRules.oneObject,
      message: `${collisions.slice(0, LISTED).join('; ')}${more}: one object per cloud resource; point the objects elsewhere first, or use another ProviderConfig`,
    });
  }
  if (stranded.length > 0) {
    outcome.warnings.push(
      `ProviderConfig "${name}" now points elsewhere for ${listed(stranded)}, which may have created ${stranded.length === 1 ? 'its resource' : 'their resources'} in ${describeTarget(stranded[0]?.target ?? {})}: ` +
        `the target of a created resource is pinned, so the operator stops ${stranded.length === 1 ? 'it' : 'them'} with a condition rather than follow; to manage resources in the new place, use another ProviderConfig for new objects`,
    );
  }
  return outcome;
}

/** core's cloudTargetFor; undefined when the provider's `targetOf` throws on this ProviderConfig (its own rules report why). */
function targetOf(plugin: ProviderPlugin | undefined, kind: ManagedKindName, providerConfig: ProviderConfig): CloudTarget | undefined {
  try {
    return cloudTargetFor(plugin, kind, providerConfig);
  } catch {
    return undefined;
  }
}

/** A target for messages, as the engine's conditions write it: `aws (region=us-east-1, endpoint=http://127.0.0.1:4566)`. */
export function describeTarget(target: CloudTarget): string {
  const parts = Object.entries(target)
    .filter(([key, value]) => key !== 'provider' && value !== '')
    .map(([key, value]) => `${key}=${value}`);
  return `${target['provider'] ?? 'the cloud'} (${parts.join(', ') || 'defaults'})`;
}

const describe = (r: ResourceRef): string => `${r.kind} ${r.namespace}/${r.name}`;

const sameObject = (a: ResourceRef, b: ResourceRef): boolean => a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;

function listed(resources: readonly ResourceRef[]): string {
  const names = resources.slice(0, LISTED).map(describe).join(', ');
  return resources.length > LISTED ? `${names} and ${resources.length - LISTED} more` : names;
}
