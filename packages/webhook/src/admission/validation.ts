import { Annotations, driftPolicyViolations, type ManagedResource, type ProviderConfig, type Violation } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import {
  canReadSecretsIn,
  driftCheckBudgetViolations,
  externalNameConflict,
  mayHaveCreated,
  namingRulesFor,
  providerSettingsViolations,
  rateLimitViolations,
  rateLimitWarnings,
  resyncPeriodViolation,
  DEFAULT_RESYNC_FLOOR_MS,
} from '@k8or/core/policy';
import { checkImmutableFields } from './immutability.js';
import { isPlainObject } from './patch.js';
import { providerConfigUsers } from './protection.js';
import { OneObjectRules, retargetOutcome, sameResourceViolations } from './same-resource.js';
import { annotation, field, isDeletionPolicy, isManagedKind, namespaceOf, providerConfigFor, stringField } from './resource.js';
import type { AdmissionContext, ValidationOutcome } from './types.js';

export interface ValidationOptions {
  /** CREATE (default) or UPDATE; UPDATE adds the immutability and orphan checks against `oldObject`. */
  operation?: 'CREATE' | 'UPDATE';
  oldObject?: unknown;
  /** The request's namespace, when the object's metadata does not say. */
  namespace?: string;
}

/** Rule identifiers of the checks made here (providers bring their own). */
export const Rules = {
  object: 'schema.object',
  providerConfigRequired: 'providerconfig.required',
  providerConfigExists: 'providerconfig.exists',
  providerInstalled: 'providerconfig.provider-installed',
  providerFailed: 'provider.validation-error',
  secretNamespace: 'credentials.secret-namespace',
  providerChangeInUse: 'providerconfig.in-use',
  cloudChange: 'immutable.provider',
  deletionPolicyAnnotation: 'annotation.deletion-policy',
  externalNameAnnotation: 'annotation.external-name',
  resyncPeriod: 'resync-period.format',
  oneObject: OneObjectRules.oneObject,
} as const;

/**
 * Every rule an object breaks, at once: the installed provider's naming and
 * spec rules, the ProviderConfig it uses, credentials the operator can read,
 * one object per cloud resource (where the context knows the other objects),
 * and on UPDATE immutable fields and ProviderConfig changes that would orphan
 * resources or make two objects name one resource (a warning when one would
 * move resources already created: the target is pinned).
 * Portability warnings come from the provider.
 *
 * On UPDATE a violation the stored object already had (same field and rule) is
 * not reported again: an object admitted under older rules can still be edited
 * (and have its finalizer removed) without first fixing everything.
 */
export function validateObject(object: unknown, context: AdmissionContext, options: ValidationOptions = {}): ValidationOutcome {
  const outcome = validateAlone(object, context, options.namespace);
  if (options.operation !== 'UPDATE' || options.oldObject === undefined) return outcome;
  const before = validateAlone(options.oldObject, context, options.namespace);
  const known = new Set(before.violations.map(key));
  const kind = stringField(object, 'kind') ?? '';
  const violations = outcome.violations.filter((v) => !known.has(key(v)));
  violations.push(...checkImmutableFields(kind, options.oldObject, object));
  const warnings = [...outcome.warnings];
  if (kind === 'ProviderConfig') {
    const retarget = retargetOutcome(options.oldObject, object, context);
    violations.push(...providerChange(options.oldObject, object, context), ...retarget.violations);
    warnings.push(...retarget.warnings);
  }
  if (isManagedKind(kind)) violations.push(...cloudChange(options.oldObject, object, context, options.namespace));
  return { violations, warnings };
}

const key = (v: Violation): string => `${v.field}\u0000${v.rule}`;

function validateAlone(object: unknown, context: AdmissionContext, requestNamespace: string | undefined): ValidationOutcome {
  const kind = stringField(object, 'kind');
  if (!isPlainObject(object) || !kind) return { violations: [{ field: 'kind', rule: Rules.object, message: 'the object must be a JSON object with a kind' }], warnings: [] };
  if (isManagedKind(kind)) return validateManaged(kind, object, context, namespaceOf(object, requestNamespace));
  if (kind === 'ProviderConfig') return validateProviderConfig(object, context);
  return { violations: [], warnings: [] };
}

function validateManaged(kind: 'Bucket' | 'Table', object: Record<string, unknown>, context: AdmissionContext, namespace: string | undefined): ValidationOutcome {
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (!isPlainObject(object.spec)) {
    return { violations: [{ field: 'spec', rule: Rules.object, message: `a ${kind} needs a spec object` }], warnings };
  }
  violations.push(...annotationViolations(object, context));
  violations.push(...driftPolicyViolations(kind, object.spec));
  const policyAnnotation = annotation(object, Annotations.deletionPolicy);
  const specPolicy = stringField(object, 'spec', 'deletionPolicy');
  if (isDeletionPolicy(policyAnnotation) && specPolicy && specPolicy !== policyAnnotation) {
    // The engine reads the annotation first (core's deletionPolicyFor), so say which one will apply.
    warnings.push(`metadata.annotations[${Annotations.deletionPolicy}] is ${policyAnnotation} but spec.deletionPolicy is ${specPolicy}: the annotation wins, the cloud resource will be ${policyAnnotation === 'Retain' ? 'kept' : 'deleted'} when this object is deleted`);
  }
  const nsPolicy = namespace ? annotation(context.getNamespace(namespace), Annotations.deletionPolicy) : undefined;
  if (nsPolicy !== undefined && !isDeletionPolicy(nsPolicy)) {
    warnings.push(`namespace ${namespace} has ${Annotations.deletionPolicy}=${JSON.stringify(nsPolicy)}, which is neither Delete nor Retain; it is ignored`);
  }

  const choice = providerConfigFor(object, namespace, context);
  if (!choice) {
    violations.push({
      field: 'spec.providerConfigRef',
      rule: Rules.providerConfigRequired,
      message: `no ProviderConfig: set spec.providerConfigRef.name, annotate namespace ${namespace ?? ''} with ${Annotations.providerConfig}, or create the ProviderConfig named "default"`,
    });
    return { violations, warnings };
  }
  const providerConfig = context.getProviderConfig(choice.name);
  if (!providerConfig) {
    const from = choice.source === 'namespace-annotation' ? ` (from the ${Annotations.providerConfig} annotation of namespace ${namespace})` : '';
    violations.push({ field: 'spec.providerConfigRef.name', rule: Rules.providerConfigExists, message: `ProviderConfig "${choice.name}"${from} does not exist` });
    return { violations, warnings };
  }
  const plugin = pluginFor(providerConfig, context);
  if (!plugin) {
    violations.push({ field: 'spec.providerConfigRef.name', rule: Rules.providerInstalled, message: notInstalled(providerConfig, context) });
    return { violations, warnings };
  }
  const externalName = stringField(object, 'spec', 'name');
  if (externalName) violations.push(...runProvider(plugin, () => ({ violations: namingRulesFor(plugin, kind).validate(externalName, 'spec.name'), warnings: [] })).violations);
  const result = runProvider(plugin, () => plugin.validation.validate(kind, object as unknown as ManagedResource, providerConfig));
  // A provider may check spec.name in its own rules too; the same rule on the same field is listed once.
  const seen = new Set(violations.map(key));
  violations.push(...result.violations.filter((v) => !seen.has(key(v))));
  warnings.push(...result.warnings);
  violations.push(...sameResourceViolations(object, context, namespace));
  return { violations, warnings };
}

function validateProviderConfig(object: Record<string, unknown>, context: AdmissionContext): ValidationOutcome {
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (!isPlainObject(object.spec)) return { violations: [{ field: 'spec', rule: Rules.object, message: 'a ProviderConfig needs a spec object' }], warnings };
  const providerConfig = object as unknown as ProviderConfig;
  const plugin = pluginFor(providerConfig, context);
  // The budget's shape needs no provider; its rateLimitPercent needs one that declares rate limits.
  violations.push(...driftCheckBudgetViolations(plugin, providerConfig));
  if (!plugin) {
    warnings.push(`${notInstalled(providerConfig, context)}; resources that use this ProviderConfig will be denied until it is`);
  } else {
    violations.push(...runProvider(plugin, () => ({ violations: providerSettingsViolations(plugin, providerConfig), warnings: [] })).violations);
    const rateLimits = runProvider(plugin, () => ({ violations: rateLimitViolations(plugin, providerConfig), warnings: rateLimitWarnings(plugin, providerConfig) }));
    violations.push(...rateLimits.violations);
    warnings.push(...rateLimits.warnings);
    if (plugin.validation.validateProviderConfig) {
      const check = plugin.validation.validateProviderConfig.bind(plugin.validation);
      const result = runProvider(plugin, () => check(providerConfig));
      violations.push(...result.violations);
      warnings.push(...result.warnings);
    }
  }
  const secretNamespace = field(object, 'spec', 'credentials', 'secretRef', 'namespace');
  const allowed = context.secretNamespaces;
  if (typeof secretNamespace === 'string' && allowed !== '*' && !canReadSecretsIn(allowed, secretNamespace)) {
    violations.push({
      field: 'spec.credentials.secretRef.namespace',
      rule: Rules.secretNamespace,
      message: `the operator cannot read Secrets in namespace "${secretNamespace}"; use one of: ${allowed.join(', ') || '(none configured)'}`,
    });
  }
  return { violations, warnings };
}

function providerChange(oldObject: unknown, object: unknown, context: AdmissionContext): Violation[] {
  const before = stringField(oldObject, 'spec', 'provider');
  const after = stringField(object, 'spec', 'provider');
  if (before === after) return [];
  const users = providerConfigUsers(stringField(object, 'metadata', 'name') ?? '', context);
  if (!users) return [];
  return [{ field: 'spec.provider', rule: Rules.providerChangeInUse, message: `cannot change from ${JSON.stringify(before)} to ${JSON.stringify(after)}: ${users}` }];
}

/**
 * A resource k8or may already have created cannot move to a ProviderConfig of
 * another cloud: the engine would create a second resource there and orphan
 * the first. Moving between ProviderConfigs of the same cloud stays allowed.
 */
function cloudChange(oldObject: unknown, object: unknown, context: AdmissionContext, requestNamespace: string | undefined): Violation[] {
  if (!mayHaveCreated(oldObject)) return [];
  const before = providerConfigFor(oldObject, namespaceOf(oldObject, requestNamespace), context)?.name;
  const after = providerConfigFor(object, namespaceOf(object, requestNamespace), context)?.name;
  if (!before || !after || before === after) return [];
  const cloudBefore = stringField(context.getProviderConfig(before), 'spec', 'provider');
  const cloudAfter = stringField(context.getProviderConfig(after), 'spec', 'provider');
  if (!cloudBefore || !cloudAfter || cloudBefore === cloudAfter) return [];
  return [
    {
      field: 'spec.providerConfigRef.name',
      rule: Rules.cloudChange,
      message: `cannot move to another cloud: was ${JSON.stringify(before)} (${cloudBefore}), now ${JSON.stringify(after)} (${cloudAfter}); the cloud resource exists in ${cloudBefore} and would be orphaned, so create a new object instead`,
    },
  ];
}

function annotationViolations(object: Record<string, unknown>, context: AdmissionContext): Violation[] {
  const violations: Violation[] = [];
  const policy = field(object, 'metadata', 'annotations', Annotations.deletionPolicy);
  if (policy !== undefined && !isDeletionPolicy(policy)) {
    violations.push({
      field: `metadata.annotations[${Annotations.deletionPolicy}]`,
      rule: Rules.deletionPolicyAnnotation,
      message: `must be Delete or Retain, not ${JSON.stringify(policy)}`,
    });
  }
  const conflict = externalNameConflict(object);
  if (conflict) violations.push(conflict);
  const resync = field(object, 'metadata', 'annotations', Annotations.resyncPeriod);
  if (resync !== undefined) {
    const problem =
      typeof resync === 'string'
        ? resyncPeriodViolation(resync, context.resyncFloorMs ?? DEFAULT_RESYNC_FLOOR_MS)
        : { field: `metadata.annotations[${Annotations.resyncPeriod}]`, rule: 'resync-period.format', message: 'must be a string such as 30s, 5m or 1h' };
    if (problem) violations.push(problem);
  }
  return violations;
}

function pluginFor(providerConfig: ProviderConfig, context: AdmissionContext): ProviderPlugin | undefined {
  const provider = stringField(providerConfig, 'spec', 'provider');
  return provider ? context.providers.get(provider) : undefined;
}

function notInstalled(providerConfig: ProviderConfig, context: AdmissionContext): string {
  const installed = [...context.providers.keys()].join(', ') || 'none';
  return `ProviderConfig "${providerConfig.metadata?.name ?? ''}" names provider ${JSON.stringify(stringField(providerConfig, 'spec', 'provider') ?? null)}, which is not installed (installed: ${installed})`;
}

/** A provider's rules run on untrusted input; if they throw, the object is denied with the reason rather than the webhook failing. */
function runProvider(plugin: ProviderPlugin, run: () => ValidationOutcome): ValidationOutcome {
  try {
    const result = run();
    return { violations: [...(result.violations ?? [])], warnings: [...(result.warnings ?? [])] };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { violations: [{ field: 'spec', rule: Rules.providerFailed, message: `${plugin.packageName} could not validate the object: ${reason}` }], warnings: [] };
  }
}
