import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Violation } from '@k8or/api';
import type { ProviderPlugin } from '../provider/contract.js';
import { field, isPlainObject } from './read.js';

/** Rule identifiers of the settings checks. */
export const SettingsRules = {
  schema: 'settings.schema',
  unsupported: 'settings.unsupported',
  invalidSchema: 'settings.provider-schema',
} as const;

// The schemas are the CRD's structural subset; the x-kubernetes-* keywords mean nothing to ajv.
const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** `/a/0/b` -> `spec.settings.a[0].b`. */
function settingsPath(error: ErrorObject): string {
  let path = 'spec.settings';
  for (const token of error.instancePath.split('/').slice(1)) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(key) ? `[${key}]` : `.${key}`;
  }
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params['missingProperty'] === 'string') path += `.${params['missingProperty']}`;
  if (error.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') path += `.${params['additionalProperty']}`;
  return path;
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') return 'is not a setting this provider knows';
  if (error.keyword === 'required') return 'is required';
  return error.message ?? `breaks the ${error.keyword} rule`;
}

/**
 * Checks `ProviderConfig.spec.settings` against the provider's declared
 * `settingsSchema` (ajv). Settings given to a provider that declares none are
 * refused too: a setting never silently does nothing. Each violation names
 * the field (`spec.settings.<path>`) and the rule.
 */
export function providerSettingsViolations(plugin: Pick<ProviderPlugin, 'provider' | 'settingsSchema'>, providerConfig: unknown): Violation[] {
  const settings = field(providerConfig, 'spec', 'settings');
  if (settings === undefined) return [];
  const schema = plugin.settingsSchema;
  if (!schema) {
    const keys = isPlainObject(settings) ? Object.keys(settings) : [];
    if (keys.length === 0) return [];
    return [{ field: 'spec.settings', rule: SettingsRules.unsupported, message: `provider "${plugin.provider}" declares no settings; remove ${keys.map((k) => JSON.stringify(k)).join(', ')}` }];
  }
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema);
  } catch (error) {
    return [{ field: 'spec.settings', rule: SettingsRules.invalidSchema, message: `provider "${plugin.provider}" declares a settings schema ajv cannot compile: ${error instanceof Error ? error.message : String(error)}` }];
  }
  if (validate(settings)) return [];
  return (validate.errors ?? []).map((error) => ({ field: settingsPath(error), rule: `${SettingsRules.schema}.${error.keyword}`, message: describe(error) }));
}
