/** A field-level validation error, shaped like apimachinery's field.Error as it reaches a client (a StatusCause). */
export interface FieldError {
  /** Field path as kube-apiserver prints it: `spec.lifecycle[0].id`. */
  field: string;
  reason:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueNotSupported'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueForbidden'
    | 'FieldValueTypeInvalid'
    | 'FieldValueDuplicate';
  /**
   * The error body without the field, exactly as a StatusCause message reads:
   * `Invalid value: "string": name is immutable once set`. The full text is `${field}: ${message}`.
   */
  message: string;
}

/** Outcome of {@link CompiledSchema.admit}. */
export interface AdmitResult {
  /**
   * The pruned and defaulted object: a copy, or the input itself when nothing was pruned or
   * defaulted. The input is never modified; change the result only after copying it, or when the
   * input was yours to change.
   */
  object: Record<string, unknown>;
  /** Validation errors: non-empty means the write is rejected. */
  errors: FieldError[];
  /** Warnings for the client (`unknown field "spec.foo"` with fieldValidation=Warn). */
  warnings: string[];
  /**
   * Set when fieldValidation=Strict found unknown fields. kube-apiserver fails the *decoding* then:
   * 400 BadRequest with message `${kind} in version "${version}" cannot be handled as a ${kind}: ${strictDecodingError}`,
   * and no schema validation runs (`errors` then holds one entry per unknown field).
   */
  strictDecodingError?: string;
}

export interface AdmitOptions {
  fieldValidation: 'Strict' | 'Warn' | 'Ignore';
  /** A write to the status subresource: only errors under `status` count. */
  subresource?: 'status';
}

/** A CRD version's openAPIV3Schema, compiled once and applied to every write. */
export interface CompiledSchema {
  /**
   * Prune unknown fields, apply defaults, validate (OpenAPI value validations, list types, CEL rules),
   * the way apiextensions-apiserver handles a create (oldObject undefined) or an update.
   */
  admit(object: Record<string, unknown>, oldObject: Record<string, unknown> | undefined, options: AdmitOptions): AdmitResult;
  /**
   * Apply schema defaults (as on read from storage): a defaulted copy, or `object` itself when it
   * needs no default (nearly every stored object was defaulted when written). Never change the
   * result in place: it may be the stored object.
   */
  applyDefaults(object: Record<string, unknown>): Record<string, unknown>;
}

/**
 * Thrown by compileCrdSchema when the schema (a pattern or a CEL rule) does not compile.
 * `fieldErrors` have fields relative to the version's schema (`openAPIV3Schema.properties[spec]...`):
 * prefix them with `spec.versions[i].schema.` for the CRD's Invalid status, as kube-apiserver reports them.
 */
export class SchemaCompileError extends Error {
  /** One line per problem: `openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: ...`. */
  readonly errors: string[];
  readonly fieldErrors: FieldError[];
  constructor(fieldErrors: FieldError[]) {
    const errors = fieldErrors.map((e) => `${e.field}: ${e.message}`);
    super(`invalid CRD schema: ${errors.join('; ')}`);
    this.name = 'SchemaCompileError';
    this.errors = errors;
    this.fieldErrors = fieldErrors;
  }
}
