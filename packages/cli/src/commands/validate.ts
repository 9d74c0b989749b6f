import { type KindName } from '@k8or/api';
import { ProviderLoader } from '@k8or/operator';
import { reviewObject, type AdmissionContext } from '@k8or/webhook';
import { readManifests, type ManifestDocument } from '../manifests/read.js';
import { identityOf, isK8orObject, type ObjectIdentity } from '../manifests/objects.js';
import { CrdSchemaCheck } from '../manifests/schema.js';
import { checkContext } from '../validate/context.js';
import { clusterViewOf, sourceFrom, withManifests, type SourceFlags } from '../validate/provider-configs.js';
import { assumedProviderConfigs, humanReport, isValid, type ObjectVerdict, type ValidateReport } from '../validate/report.js';

export { ClusterReadError, ValidateUsageError } from '../validate/provider-configs.js';
export type { ObjectVerdict, ValidateReport } from '../validate/report.js';

export interface ValidateOptions extends SourceFlags {
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

/**
 * `k8or validate`: both admission webhooks' rules, offline, on every k8or object of the files, as a
 * cluster would admit them. The files' own ProviderConfigs and Namespaces are part of that cluster;
 * the rest come from `--provider-configs FILE` or, read-only, `--context` (see ProviderConfigSource),
 * or a missing ProviderConfig is taken to be of `--provider`'s cloud, else of each installed one in
 * turn. Exit 0 when a cluster would admit every object, 1 otherwise.
 */
export async function validateCommand(options: ValidateOptions): Promise<number> {
  const documents = readManifests(options.filename, { recursive: options.recursive });
  const { providers } = await new ProviderLoader(options.providerRoot ? { root: options.providerRoot } : {}).loadAll(options.providers);
  const installed = [...providers.keys()];
  const source = sourceFrom(options, installed);
  const objects = documents.filter((d) => d.object !== undefined).map((d) => d.object);
  const view = withManifests(await clusterViewOf(source), objects);
  const known = new Set(view.providerConfigs.map((pc) => pc.metadata?.name ?? ''));
  const resources = objects.filter((o) => ['Bucket', 'Table'].includes(identityOf(o).kind));
  const schema = new CrdSchemaCheck([...providers.values()]);
  const contextOptions = { providers, defaultDeletionPolicy: options.defaultDeletionPolicy, secretsNamespace: options.secretsNamespace, clusterId: options.clusterId };
  const check = (assumedProvider: string | undefined): ObjectVerdict[] =>
    checkDocuments(documents, checkContext(view, resources, assumedProvider, contextOptions), schema, known, assumedProvider);

  let report: ValidateReport;
  if (source.from === 'each-provider' && installed.length > 0) {
    const runs = installed.map(check);
    // An object whose ProviderConfig is known gets the same verdict from every run: report it once.
    const verdicts = [...runs[0]!.filter((v) => v.assumedProvider === undefined), ...runs.flatMap((run) => run.filter((v) => v.assumedProvider !== undefined))];
    const assumed = verdicts.some((v) => v.assumedProvider !== undefined) ? assumedProviderConfigs(verdicts, installed) : undefined;
    report = { valid: isValid(verdicts, assumed), objects: verdicts, ...(assumed ? { providerConfigs: assumed } : {}) };
  } else {
    const assumedProvider = source.from === 'provider' ? source.provider : undefined;
    const verdicts = check(assumedProvider);
    report = { valid: isValid(verdicts, undefined), objects: verdicts, ...(assumedProvider ? { assumedProvider } : {}) };
  }

  if (options.output === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(humanReport(report));
  return report.valid ? 0 : 1;
}

/** Every k8or object of the documents through the API server's schema check and both webhooks, with `context` as the cluster. */
function checkDocuments(documents: readonly ManifestDocument[], context: AdmissionContext, schema: CrdSchemaCheck, known: ReadonlySet<string>, assumedProvider: string | undefined): ObjectVerdict[] {
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
    const providerConfig = providerConfigOf(review.object);
    verdicts.push({
      ...position(document, id),
      namespace,
      valid: violations.length === 0,
      violations,
      warnings: review.warnings,
      defaulted: review.object,
      ...(providerConfig !== undefined ? { providerConfig } : {}),
      ...(providerConfig !== undefined && assumedProvider !== undefined && !known.has(providerConfig) ? { assumedProvider } : {}),
    });
  }
  return verdicts;
}

/** spec.providerConfigRef.name of a defaulted Bucket or Table. */
function providerConfigOf(object: unknown): string | undefined {
  const o = object as { kind?: unknown; spec?: { providerConfigRef?: { name?: unknown } } } | null;
  if (o?.kind !== 'Bucket' && o?.kind !== 'Table') return undefined;
  const name = o.spec?.providerConfigRef?.name;
  return typeof name === 'string' ? name : undefined;
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
