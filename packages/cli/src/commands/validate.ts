import { type KindName, type Violation } from '@k8or/api';
import { ProviderLoader } from '@k8or/operator';
import { contextFromManifests, reviewObject } from '@k8or/webhook';
import { readManifests, type ManifestDocument } from '../manifests/read.js';
import { describeObject, identityOf, isK8orObject, type ObjectIdentity } from '../manifests/objects.js';
import { CrdSchemaCheck } from '../manifests/schema.js';

export interface ValidateOptions {
  filename: string[];
  recursive: boolean;
  output: 'human' | 'json';
  providers: string[];
  providerRoot: string | undefined;
  defaultDeletionPolicy: 'Delete' | 'Retain';
  secretsNamespace: string;
  /** Default external names fold it in; without it they are left to the operator. */
  clusterId: string | undefined;
}

/** What `k8or validate` found for one object. */
export interface ObjectVerdict {
  source: string;
  document: number;
  kind: string;
  namespace: string | undefined;
  name: string;
  valid: boolean;
  violations: Violation[];
  warnings: string[];
  /** The object as the API server would store it, defaults applied. */
  defaulted: unknown;
}

/**
 * `k8or validate`: both admission webhooks' rules, offline, on every k8or
 * object of the files (the ProviderConfigs and Namespaces among them are the
 * cluster it is checked against). Exit 0 when all are valid, 1 otherwise.
 */
export async function validateCommand(options: ValidateOptions): Promise<number> {
  const documents = readManifests(options.filename, { recursive: options.recursive });
  const { providers } = await new ProviderLoader(options.providerRoot ? { root: options.providerRoot } : {}).loadAll(options.providers);
  const objects = documents.filter((d) => d.object !== undefined).map((d) => d.object);
  const context = contextFromManifests(objects, {
    providers,
    defaultDeletionPolicy: options.defaultDeletionPolicy,
    secretNamespaces: [options.secretsNamespace],
    ...(options.clusterId ? { clusterId: options.clusterId } : {}),
  });

  const schema = new CrdSchemaCheck([...providers.values()]);
  const verdicts: ObjectVerdict[] = [];
  for (const document of documents) {
    if (document.error !== undefined) {
      verdicts.push(unreadable(document));
      continue;
    }
    const id = identityOf(document.object);
    if (!isK8orObject(id)) continue;
    const namespace = id.kind === 'ProviderConfig' ? undefined : (id.namespace ?? 'default');
    const review = reviewObject(document.object, context, { operation: 'CREATE', ...(namespace ? { namespace } : {}) });
    // The API server's schema check (after the mutating webhook, before the validating one) and the
    // webhook's rules, every problem at once; a field both name is reported in the webhook's words.
    const named = new Set(review.violations.map((v) => v.field));
    const schemaViolations = schema.violations(id.kind as KindName, review.object as Record<string, unknown>).filter((v) => !named.has(v.field));
    const violations = [...schemaViolations, ...review.violations];
    verdicts.push({ ...position(document, id), namespace, valid: violations.length === 0, violations, warnings: review.warnings, defaulted: review.object });
  }

  const valid = verdicts.every((v) => v.valid);
  if (options.output === 'json') process.stdout.write(`${JSON.stringify({ valid, objects: verdicts }, null, 2)}\n`);
  else process.stdout.write(humanReport(verdicts));
  return valid ? 0 : 1;
}

function position(document: ManifestDocument, id: ObjectIdentity): Pick<ObjectVerdict, 'source' | 'document' | 'kind' | 'name'> {
  return { source: document.source, document: document.index, kind: id.kind, name: id.name };
}

function unreadable(document: ManifestDocument): ObjectVerdict {
  return {
    source: document.source,
    document: document.index,
    kind: '',
    namespace: undefined,
    name: '',
    valid: false,
    violations: [{ field: '', rule: 'yaml.syntax', message: document.error ?? 'cannot be parsed' }],
    warnings: [],
    defaulted: undefined,
  };
}

function humanReport(verdicts: readonly ObjectVerdict[]): string {
  const lines: string[] = [];
  for (const v of verdicts) {
    const where = `${v.source}#${v.document}`;
    const what = v.kind ? describeObject({ apiVersion: '', kind: v.kind, namespace: v.namespace, name: v.name }) : 'document';
    lines.push(v.valid ? `${where}: ${what}: valid` : `${where}: ${what}: ${v.violations.length} violation${v.violations.length === 1 ? '' : 's'}`);
    for (const violation of v.violations) lines.push(`  ${violation.field || '(document)'}: ${violation.message} (rule ${violation.rule})`);
    for (const warning of v.warnings) lines.push(`  warning: ${warning}`);
  }
  const invalid = verdicts.filter((v) => !v.valid);
  const count = invalid.reduce((n, v) => n + v.violations.length, 0);
  lines.push(
    verdicts.length === 0
      ? 'no k8or objects (Bucket, Table, ProviderConfig of k8or.io) found'
      : `${verdicts.length} object${verdicts.length === 1 ? '' : 's'}: ${verdicts.length - invalid.length} valid, ${invalid.length} invalid${invalid.length ? ` (${count} violation${count === 1 ? '' : 's'})` : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
