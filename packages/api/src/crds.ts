import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { CATEGORY, GROUP, KINDS, VERSION, type KindName } from './group.js';
import type { JSONSchemaProps } from './schemas/json-schema.js';
import { bucketSchema } from './schemas/bucket.js';
import { tableSchema } from './schemas/table.js';
import { providerConfigSchema } from './schemas/provider-config.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

/** apiextensions.k8s.io/v1 CustomResourceDefinition, as k8or generates it. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

const condition = (type: string): PrinterColumn => ({
  name: type.toUpperCase(),
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
  description: `Status of the ${type} condition.`,
});

const managedColumns: PrinterColumn[] = [
  { name: 'PROVIDER', type: 'string', jsonPath: '.status.provider', description: 'Cloud the resource lives in.' },
  { name: 'EXTERNAL-NAME', type: 'string', jsonPath: '.spec.name', description: 'Name of the resource in the cloud.' },
  condition('Ready'),
  condition('Synced'),
  { name: 'DRIFT', type: 'integer', jsonPath: '.status.driftCount', description: 'How many settings differ between the cloud and the spec.' },
  { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'CONFIG', type: 'string', jsonPath: '.spec.providerConfigRef.name', description: 'ProviderConfig in use.', priority: 1 },
  { name: 'LOCATION', type: 'string', jsonPath: '.status.atProvider.location', description: 'Where the resource lives.', priority: 1 },
];

const COLUMNS: Record<KindName, PrinterColumn[]> = {
  Bucket: managedColumns,
  Table: managedColumns,
  ProviderConfig: [
    { name: 'PROVIDER', type: 'string', jsonPath: '.spec.provider', description: 'The cloud.' },
    { name: 'REGION', type: 'string', jsonPath: '.spec.region', description: 'AWS region.' },
    { name: 'PROJECT', type: 'string', jsonPath: '.spec.project', description: 'GCP project.' },
    { name: 'ACCOUNT', type: 'string', jsonPath: '.spec.storageAccount', description: 'Azure storage account.' },
    { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

const SCHEMAS: Record<KindName, JSONSchemaProps> = {
  Bucket: bucketSchema,
  Table: tableSchema,
  ProviderConfig: providerConfigSchema,
};

/** What CRD generation can take from the installed providers. */
export interface CrdOptions {
  /**
   * Each provider's settings schema (ProviderPlugin.settingsSchema) by provider
   * name: their properties are listed under ProviderConfig `spec.settings`, so
   * `kubectl explain providerconfig.spec.settings` shows them. The providers'
   * own rules (required, enums, bounds) stay with the provider, which checks
   * them in the webhook and the engine: the CRD lists, it does not constrain,
   * since one property name may mean different things to two providers.
   */
  settingsSchemas?: Readonly<Record<string, JSONSchemaProps>>;
}

/** A property for `kubectl explain`: its type, description and shape, without the provider's constraints. */
function explainOnly(schema: JSONSchemaProps, provider: string): JSONSchemaProps {
  const shape: JSONSchemaProps = {};
  if (schema.type) shape.type = schema.type;
  shape.description = `(${provider}) ${schema.description ?? ''}`.trim();
  if (schema.type === 'object') {
    if (schema.properties) shape.properties = Object.fromEntries(Object.entries(schema.properties).map(([key, value]) => [key, explainOnly(value, provider)]));
    shape['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (schema.type === 'array' && schema.items) shape.items = explainOnly(schema.items, provider);
  if (!schema.type) shape['x-kubernetes-preserve-unknown-fields'] = true;
  return shape;
}

/** spec.settings listing every installed provider's settings (a property two providers declare with different types is left unlisted). */
function settingsWith(base: JSONSchemaProps, schemas: Readonly<Record<string, JSONSchemaProps>>): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = {};
  const clashing = new Set<string>();
  for (const [provider, schema] of Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) {
    for (const [key, value] of Object.entries(schema.properties ?? {})) {
      const listed = explainOnly(value, provider);
      const existing = properties[key];
      if (existing && existing.type !== listed.type) clashing.add(key);
      else if (existing) existing.description = `${existing.description} ${listed.description}`;
      else properties[key] = listed;
    }
  }
  for (const key of clashing) delete properties[key];
  return Object.keys(properties).length > 0 ? { ...base, properties } : base;
}

/** The CRD for one kind, built from the single-source schema (and, for ProviderConfig, the installed providers' settings). */
export function crdFor(kind: KindName, options: CrdOptions = {}): CustomResourceDefinition {
  const names = KINDS[kind];
  const schema = structuredClone(SCHEMAS[kind]);
  const spec = schema.properties?.['spec'];
  const settings = spec?.properties?.['settings'];
  if (kind === 'ProviderConfig' && spec?.properties && settings && options.settingsSchemas) spec.properties['settings'] = settingsWith(settings, options.settingsSchemas);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${names.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'k8or' },
    },
    spec: {
      group: GROUP,
      names: {
        kind: names.kind,
        listKind: names.listKind,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
        categories: [CATEGORY],
      },
      scope: names.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: { status: {} },
          additionalPrinterColumns: COLUMNS[kind],
        },
      ],
    },
  };
}

/** Every k8or CRD. */
export function allCrds(options: CrdOptions = {}): CustomResourceDefinition[] {
  return (Object.keys(KINDS) as KindName[]).map((kind) => crdFor(kind, options));
}

/** File name of a CRD under charts/k8or/crds/ (the controller-gen convention). */
export function crdFileName(crd: CustomResourceDefinition): string {
  return `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
}

/** The YAML text of a CRD exactly as committed to charts/k8or/crds/. */
export function crdYaml(crd: CustomResourceDefinition): string {
  return `# Generated by \`npm run generate\` from packages/api. Do not edit.\n---\n${yamlStringify()(crd, { lineWidth: 0 })}`;
}

/**
 * `yaml`'s stringify, loaded on first use: the operator process needs the CRDs as objects, never as
 * YAML, and importing `yaml` costs a process about 13 MiB of RSS.
 */
function yamlStringify(): typeof Yaml.stringify {
  return (createRequire(import.meta.url)('yaml') as typeof Yaml).stringify;
}
