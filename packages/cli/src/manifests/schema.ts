import { crdFor, type KindName, type Violation } from '@k8or/api';
import { compileCrdSchema, type CompiledSchema, type FieldError } from '@k8or/apiserver';
import { settingsSchemasOf, type ProviderPlugin } from '@k8or/core';

/** Rule ids of the API server's own checks, by the reason it gives. */
const RULE_OF_REASON: Record<FieldError['reason'], string> = {
  FieldValueInvalid: 'schema.invalid',
  FieldValueRequired: 'schema.required',
  FieldValueNotSupported: 'schema.enum',
  FieldValueTooLong: 'schema.too-long',
  FieldValueTooMany: 'schema.too-many',
  FieldValueForbidden: 'schema.forbidden',
  FieldValueTypeInvalid: 'schema.type',
  FieldValueDuplicate: 'schema.duplicate',
};

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * What the API server refuses before any webhook sees an object: unknown fields (kubectl asks for
 * strict field validation), the CRD's structural schema (types, enums, bounds, patterns, required
 * fields, its CEL rules) and metadata.name. The same schema engine as the embedded API server, on the
 * CRDs the chart installs, so `k8or validate` refuses what `kubectl apply` would.
 */
export class CrdSchemaCheck {
  readonly #schemas = new Map<KindName, CompiledSchema>();
  readonly #settingsSchemas: NonNullable<Parameters<typeof crdFor>[1]>['settingsSchemas'];

  constructor(providers: readonly ProviderPlugin[]) {
    this.#settingsSchemas = settingsSchemasOf(providers);
  }

  /** Decoding and schema violations of a create of `object`; empty when the API server would pass it on to the webhooks. */
  violations(kind: KindName, object: Record<string, unknown>): Violation[] {
    const name = (object['metadata'] as { name?: unknown } | undefined)?.name;
    const nameViolations: Violation[] =
      typeof name === 'string' && (name.length > 253 || !DNS_SUBDOMAIN.test(name))
        ? [{ field: 'metadata.name', rule: 'metadata.name', message: `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character, at most 253 characters` }]
        : [];
    const result = this.#schema(kind).admit(object, undefined, { fieldValidation: 'Strict' });
    if (result.strictDecodingError) return [...nameViolations, ...result.errors.map((e) => ({ field: e.field, rule: 'schema.unknown-field', message: e.message }))];
    // `<nil>`: the API server's note that CEL rules were skipped for the errors above; it names no field.
    const fieldErrors = result.errors.filter((e) => e.field !== '<nil>');
    return [...nameViolations, ...fieldErrors.map((e) => ({ field: e.field, rule: RULE_OF_REASON[e.reason], message: e.message }))];
  }

  #schema(kind: KindName): CompiledSchema {
    let schema = this.#schemas.get(kind);
    if (!schema) {
      const crd = crdFor(kind, this.#settingsSchemas ? { settingsSchemas: this.#settingsSchemas } : {});
      schema = compileCrdSchema(crd.spec.versions[0]?.schema.openAPIV3Schema);
      this.#schemas.set(kind, schema);
    }
    return schema;
  }
}
