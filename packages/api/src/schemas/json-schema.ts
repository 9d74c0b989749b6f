/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps k8or's schemas use. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  required?: string[];
  items?: JSONSchemaProps;
  additionalProperties?: JSONSchemaProps | boolean;
  enum?: (string | number | boolean)[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  /** OpenAPI v3 (CRD) form: `minimum` itself is excluded. */
  exclusiveMinimum?: boolean;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  default?: unknown;
  nullable?: boolean;
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

/** A CEL rule (`x-kubernetes-validations`). */
export interface ValidationRule {
  rule: string;
  message: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
}


export const str = (description: string, extra: Omit<JSONSchemaProps, 'type' | 'description'> = {}): JSONSchemaProps => ({
  type: 'string',
  description,
  ...extra,
});

export const bool = (description: string, extra: Omit<JSONSchemaProps, 'type' | 'description'> = {}): JSONSchemaProps => ({
  type: 'boolean',
  description,
  ...extra,
});

export const int = (description: string, extra: Omit<JSONSchemaProps, 'type' | 'description'> = {}): JSONSchemaProps => ({
  type: 'integer',
  description,
  ...extra,
});

export const obj = (
  description: string,
  properties: Record<string, JSONSchemaProps>,
  extra: Omit<JSONSchemaProps, 'type' | 'description' | 'properties'> = {},
): JSONSchemaProps => ({ type: 'object', description, properties, ...extra });

export const arr = (
  description: string,
  items: JSONSchemaProps,
  extra: Omit<JSONSchemaProps, 'type' | 'description' | 'items'> = {},
): JSONSchemaProps => ({ type: 'array', description, items, ...extra });

/** The CEL rule that makes a field immutable once set (a transition rule: runs on update only). */
export const immutable = (field: string): ValidationRule => ({
  rule: 'self == oldSelf',
  message: `${field} is immutable once set`,
});

/** At the parent: once `field` is set it may not be removed. */
export const notRemovable = (field: string, path: string): ValidationRule => ({
  rule: `!has(oldSelf.${field}) || has(self.${field})`,
  message: `${path} may not be removed once set`,
});

export const map = (
  description: string,
  values: JSONSchemaProps,
  extra: Omit<JSONSchemaProps, 'type' | 'description' | 'additionalProperties'> = {},
): JSONSchemaProps => ({ type: 'object', description, additionalProperties: values, ...extra });
