import { KINDS, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import { cloudTargetFor, decideOwnership, deletionActionFor, externalNameFor, refuseCreate, sameCloudTarget, mayManage, namingRulesFor, ownerTagsFor, providerConfigFor, shardLabel, type CloudCallRecorder, type Connector, type FieldDiff, type NamespaceInfo, type Observation, type ProviderPlugin } from '@k8or/core';
import { ProviderLoader } from '@k8or/operator';
import { CloudPacing } from '../cloud-pacing.js';
import { FirstNamers } from '../cluster/named-resources.js';
import { ClusterReader } from '../cluster/reads.js';
import { readManifests } from '../manifests/read.js';
import { describeObject, identityOf } from '../manifests/objects.js';
import { humanDriftChecks, projectDriftChecks, type DriftCheckProjection } from './plan-drift.js';

export interface PlanOptions {
  filename: string[];
  providerConfig: string | undefined;
  kubeconfig: string | undefined;
  clusterId: string | undefined;
  output: 'human' | 'json';
  providers: string[];
  providerRoot: string | undefined;
  timeoutMs: number;
}

/** What the operator would do for one resource. */
export type PlannedAction =
  | { action: 'create'; externalName: string }
  | { action: 'update'; externalName: string; changes: Change[] }
  | { action: 'no change'; externalName: string; note?: string }
  | { action: 'blocked'; externalName?: string; reason: BlockReason; message: string };

export type BlockReason =
  | 'not owned'
  | 'replaced'
  | 'target changed'
  | 'second object'
  | 'immutable change'
  | 'missing credentials'
  | 'no ProviderConfig'
  | 'invalid ProviderConfig'
  | 'provider not installed'
  | 'kind not supported'
  | 'cannot observe'
  | 'deletion policy';

export interface Change {
  field: string;
  from: unknown;
  to: unknown;
}

export interface PlanEntry {
  kind: ManagedKindName;
  namespace: string;
  name: string;
  providerConfig?: string;
  plan: PlannedAction;
}

/**
 * `k8or plan`: observes the cloud for each Bucket and Table of the files and says what the operator would do. Writes nothing anywhere.
 * Its cloud calls keep to each ProviderConfig's rate limits, as the operator's do (CloudPacing).
 */
export async function planCommand(options: PlanOptions): Promise<number> {
  const documents = readManifests(options.filename);
  const objects = documents.flatMap((d) => (d.object === undefined ? [] : [d.object]));
  const managed = objects.filter((o): o is ManagedResource => {
    const id = identityOf(o);
    return id.apiVersion.startsWith('k8or.io/') && (id.kind === 'Bucket' || id.kind === 'Table');
  });
  const { providers } = await new ProviderLoader(options.providerRoot ? { root: options.providerRoot } : {}).loadAll(options.providers);
  const fileConfig = options.providerConfig ? providerConfigFromFile(options.providerConfig) : undefined;
  const cluster = fileConfig && !options.kubeconfig && !process.env.KUBECONFIG ? undefined : ClusterReader.from(options.kubeconfig);
  const clusterId = options.clusterId ?? process.env.K8OR_CLUSTER_ID ?? (await cluster?.kubeSystemUid()) ?? 'unknown';
  const firstNamers = await FirstNamers.load({ cluster, files: managed, providerConfigFromFile: fileConfig, providers, clusterId });
  const planner = new Planner({ providers, fileConfig, cluster, clusterId, manifests: objects, timeoutMs: options.timeoutMs, pacing: new CloudPacing(), firstNamers });

  const entries: PlanEntry[] = [];
  for (const resource of managed) entries.push(await planner.plan(resource));
  const drift = await driftChecksOf({ managed, manifests: objects, cluster, fileConfig, providers });

  if (options.output === 'json') process.stdout.write(`${JSON.stringify({ clusterId, resources: entries, driftChecks: drift.projections }, null, 2)}\n`);
  else process.stdout.write(humanPlan(entries) + humanDriftChecks(drift.projections, drift.scope).map((line) => `${line}\n`).join(''));
  return entries.some((e) => e.plan.action === 'blocked' && (e.plan.reason === 'cannot observe' || e.plan.reason === 'invalid ProviderConfig')) ? 1 : 0;
}

/**
 * The drift checks the operator would schedule once the files are applied: the cluster's stored
 * Buckets and Tables (when it can list them) with the files' objects in their place.
 */
async function driftChecksOf(input: {
  managed: readonly ManagedResource[];
  manifests: readonly unknown[];
  cluster: ClusterReader | undefined;
  fileConfig: ProviderConfig | undefined;
  providers: ReadonlyMap<string, ProviderPlugin>;
}): Promise<{ projections: DriftCheckProjection[]; scope: string }> {
  const keyOf = (r: ManagedResource): string => `${r.kind}/${r.metadata.namespace ?? 'default'}/${r.metadata.name ?? ''}`;
  const resources = new Map<string, ManagedResource>();
  let scope = 'the files\' objects';
  const stored: Record<string, unknown>[] = [];
  const namespaces = new Map<string, NamespaceInfo>();
  const configs = new Map<string, ProviderConfig>();
  if (input.cluster) {
    try {
      for (const plural of ['buckets', 'tables']) stored.push(...((await input.cluster.listAll(plural)) as Record<string, unknown>[]));
      for (const ns of await input.cluster.namespaces()) namespaces.set(ns.metadata?.name ?? '', ns as NamespaceInfo);
      for (const config of await input.cluster.providerConfigs()) configs.set(config.metadata.name ?? '', config);
      scope = 'the cluster\'s objects with the files\' in their place';
    } catch {
      scope = 'the files\' objects only: the cluster\'s could not be listed';
    }
  }
  for (const object of stored) {
    const id = identityOf(object);
    const kind = id.kind || (object['kind'] as string | undefined) || '';
    const resource = { ...object, kind } as unknown as ManagedResource;
    resources.set(keyOf(resource), resource);
  }
  for (const resource of input.managed) {
    const key = keyOf({ ...resource, metadata: { ...resource.metadata, namespace: resource.metadata.namespace ?? 'default' } });
    // A sharded operator's stored object keeps its shard when the file's takes its place.
    const shard = resources.get(key)?.metadata.labels?.[shardLabel(resource.kind)];
    resources.set(key, shard === undefined ? resource : { ...resource, metadata: { ...resource.metadata, labels: { ...resource.metadata.labels, [shardLabel(resource.kind)]: shard } } });
  }
  for (const object of input.manifests) {
    const id = identityOf(object);
    if (id.kind === 'Namespace') namespaces.set(id.name, object as NamespaceInfo);
    if (id.kind === 'ProviderConfig') configs.set(id.name, object as ProviderConfig);
  }
  const projections = projectDriftChecks({
    resources: [...resources.values()],
    namespaceOf: (name) => namespaces.get(name),
    providerConfigOf: (name) => input.fileConfig ?? configs.get(name),
    providers: input.providers,
  });
  return { projections, scope };
}

interface PlannerDeps {
  providers: ReadonlyMap<string, ProviderPlugin>;
  fileConfig: ProviderConfig | undefined;
  cluster: ClusterReader | undefined;
  clusterId: string;
  /** Every object of the files: Secrets and Namespaces there count before the cluster's. */
  manifests: readonly unknown[];
  timeoutMs: number;
  /** The ProviderConfigs' rate limits, kept across every resource of the run. */
  pacing: CloudPacing;
  /** One object per cloud resource: who came first to each. */
  firstNamers: FirstNamers;
}

/** The engine's decisions, made from the same policy functions, with every write left out. */
class Planner {
  constructor(private readonly deps: PlannerDeps) {}

  async plan(fromFile: ManagedResource): Promise<PlanEntry> {
    const kind = fromFile.kind;
    const namespace = fromFile.metadata.namespace ?? 'default';
    const name = fromFile.metadata.name ?? '';
    // The stored object carries what the engine persisted (external name, create markers).
    const stored = (await this.deps.cluster?.managed(KINDS[kind].plural, namespace, name)) as ManagedResource | undefined;
    const resource = merge(fromFile, stored, namespace);
    const namespaceObject = this.#fromFiles('Namespace', undefined, namespace) ?? (await this.deps.cluster?.namespace(namespace));
    const entry = (plan: PlannedAction, providerConfig?: string): PlanEntry => ({ kind, namespace, name, ...(providerConfig ? { providerConfig } : {}), plan });

    const configName = providerConfigFor(resource, namespaceObject).name;
    const providerConfig = this.deps.fileConfig ?? (await this.deps.cluster?.providerConfig(configName));
    if (!providerConfig) return entry({ action: 'blocked', reason: 'no ProviderConfig', message: `ProviderConfig "${configName}" not found` });
    const configLabel = providerConfig.metadata.name ?? configName;
    const plugin = this.deps.providers.get(providerConfig.spec.provider);
    if (!plugin) return entry({ action: 'blocked', reason: 'provider not installed', message: `no installed provider serves "${providerConfig.spec.provider}"` }, configLabel);
    // The connector of this object's kind: the union of per-kind connectors narrows no further by `kind`.
    const connector = plugin.connectors[kind] as Connector | undefined;
    if (!connector) return entry({ action: 'blocked', reason: 'kind not supported', message: `provider ${plugin.provider} does not manage ${kind}` }, configLabel);
    const decided = externalNameFor(resource, namingRulesFor(plugin, kind), this.deps.clusterId);
    // A default that carries the object's token (a kind without tags) is decided by the operator once the object exists.
    if (decided === undefined && namingRulesFor(plugin, kind).perObjectName) return entry({ action: 'create', externalName: NAMED_AT_CREATE }, configLabel);
    const externalName = decided ?? '';
    const ahead = this.deps.firstNamers.ahead(resource, plugin, providerConfig, externalName);
    if (ahead.length > 0) {
      const first = ahead.map((o) => `${o.kind} ${o.namespace}/${o.name}`).join(', ');
      return entry({ action: 'blocked', externalName, reason: 'second object', message: `${first} already names this ${kind}: one object per cloud resource (the webhook refuses this object; the operator lets only the first act)` }, configLabel);
    }

    let credentials: Record<string, string> | undefined;
    const credentialsSpec = providerConfig.spec.credentials;
    if (credentialsSpec?.source === 'Secret') {
      const ref = credentialsSpec.secretRef;
      credentials = ref ? await this.#secret(ref.namespace, ref.name) : undefined;
      if (!credentials) {
        return entry({ action: 'blocked', externalName, reason: 'missing credentials', message: `Secret ${ref?.namespace ?? '?'}/${ref?.name ?? '?'} not found` }, configLabel);
      }
    }

    // The target is pinned: the engine never calls the cloud where the ProviderConfig now points if the resource was created elsewhere.
    const recordedTarget = resource.status?.target;
    const target = cloudTargetFor(plugin, kind, providerConfig, credentials);
    if (recordedTarget && !sameCloudTarget(recordedTarget, target)) {
      const show = (t: Readonly<Record<string, string>>): string => Object.entries(t).filter(([, v]) => v !== '').map(([k, v]) => `${k}=${v}`).join(', ');
      return entry({ action: 'blocked', externalName, reason: 'target changed', message: `created in ${show(recordedTarget)}, but the ProviderConfig now points at ${show(target)}` }, configLabel);
    }

    let recordCall: CloudCallRecorder;
    try {
      recordCall = this.deps.pacing.recorder(plugin, providerConfig);
    } catch (error) {
      return entry({ action: 'blocked', externalName, reason: 'invalid ProviderConfig', message: error instanceof Error ? error.message : String(error) }, configLabel);
    }
    let observation: Observation;
    let identityUnavailable: string | undefined;
    try {
      const client = await connector.connect(resource, { providerConfig, credentials, externalName, ownerTags: ownerTagsFor(resource, this.deps.clusterId), recordCall });
      identityUnavailable = client.identityUnavailable;
      observation = await client.observe(resource, { signal: AbortSignal.timeout(this.deps.timeoutMs) });
    } catch (error) {
      return entry({ action: 'blocked', externalName, reason: 'cannot observe', message: error instanceof Error ? error.message : String(error) }, configLabel);
    }
    // The engine's refusal before a create (core's refuseCreate); Delete is the operator's default deletion policy.
    const refused = !observation.exists && resource.spec.managementPolicy !== 'ObserveOnly' ? refuseCreate(deletionActionFor(resource, namespaceObject, 'Delete'), kind, identityUnavailable) : undefined;
    if (refused) return entry({ action: 'blocked', externalName, reason: 'deletion policy', message: refused }, configLabel);
    return entry(decide(resource, observation, externalName, this.deps.clusterId), configLabel);
  }

  async #secret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const fromFile = this.#fromFiles('Secret', namespace, name) as { data?: Record<string, string>; stringData?: Record<string, string> } | undefined;
    if (fromFile) {
      const decoded = Object.fromEntries(Object.entries(fromFile.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
      return { ...decoded, ...(fromFile.stringData ?? {}) };
    }
    return await this.deps.cluster?.secretData(namespace, name);
  }

  #fromFiles(kind: string, namespace: string | undefined, name: string): unknown {
    return this.deps.manifests.find((o) => {
      const id = identityOf(o);
      return id.kind === kind && id.name === name && (namespace === undefined || (id.namespace ?? 'default') === namespace);
    });
  }
}

/** The engine's choice for an observed resource (reconciler.ts), as a plan. */
export function decide(resource: ManagedResource, observation: Observation, externalName: string, clusterId: string): PlannedAction {
  if (resource.spec.managementPolicy === 'ObserveOnly') {
    const drift = observation.diff ?? [];
    const note = !observation.exists ? 'ObserveOnly: does not exist in the cloud; k8or will report it missing' : drift.length ? `ObserveOnly: differs in ${drift.map((d) => d.field).join(', ')}; k8or only reports it` : 'ObserveOnly';
    return { action: 'no change', externalName, note };
  }
  if (!observation.exists) return { action: 'create', externalName };
  // The engine's own ownership decision (@k8or/core policy/ownership.ts), from the same facts.
  const { ownership, message } = decideOwnership(resource, observation, ownerTagsFor(resource, clusterId), externalName);
  if (!mayManage(ownership)) {
    const reason = ownership === 'replaced' ? 'replaced' : 'not owned';
    return { action: 'blocked', externalName, reason, message: message ?? `"${externalName}" exists and is not owned by this object` };
  }
  if (observation.immutableDiff?.length) {
    return { action: 'blocked', externalName, reason: 'immutable change', message: `the cloud cannot change ${observation.immutableDiff.map(describeChange).join('; ')} in place` };
  }
  const changes = (observation.diff ?? []).map((d) => ({ field: d.field, from: d.actual, to: d.desired }));
  if (changes.length > 0 || ownership !== 'ours') return { action: 'update', externalName, changes };
  return { action: 'no change', externalName };
}

function merge(fromFile: ManagedResource, stored: ManagedResource | undefined, namespace: string): ManagedResource {
  const metadata = { ...fromFile.metadata, namespace, annotations: { ...(stored?.metadata.annotations ?? {}), ...(fromFile.metadata.annotations ?? {}) } };
  const spec = { ...fromFile.spec, ...(fromFile.spec.name ? {} : stored?.spec.name ? { name: stored.spec.name } : {}) };
  // What the engine recorded (identity, target) is evidence the ownership decision needs.
  return { ...fromFile, metadata, spec, ...(stored?.status ? { status: stored.status } : {}) } as ManagedResource;
}

function providerConfigFromFile(path: string): ProviderConfig {
  const found = readManifests([path]).find((d) => identityOf(d.object).kind === 'ProviderConfig');
  if (!found) throw new PlanUsageError(`--provider-config ${path}: no ProviderConfig in the file`);
  return found.object as ProviderConfig;
}

/** A bad `--provider-config` file: a usage error. */
export class PlanUsageError extends Error {}

/** What plan shows for a default name the operator decides at create (it carries the object's uid token). */
const NAMED_AT_CREATE = '(named by the operator at create)';

const show = (value: unknown): string => (value === undefined ? '(unset)' : JSON.stringify(value));
const describeChange = (d: FieldDiff): string => `${d.field} from ${show(d.actual)} to ${show(d.desired)}`;

function humanPlan(entries: readonly PlanEntry[]): string {
  const lines: string[] = [];
  for (const e of entries) {
    const what = describeObject({ apiVersion: '', kind: e.kind, namespace: e.namespace, name: e.name });
    const p = e.plan;
    const target = p.externalName ? ` "${p.externalName}"` : '';
    const via = e.providerConfig ? ` (ProviderConfig ${e.providerConfig})` : '';
    if (p.action === 'create') lines.push(`${what}: create${target}${via}`);
    if (p.action === 'no change') lines.push(`${what}: no change${target}${via}${p.note ? ` [${p.note}]` : ''}`);
    if (p.action === 'blocked') lines.push(`${what}: blocked (${p.reason})${target}${via}: ${p.message}`);
    if (p.action === 'update') {
      lines.push(`${what}: update${target}${via}`);
      for (const c of p.changes) lines.push(`  ${c.field}: ${show(c.from)} -> ${show(c.to)}`);
      if (p.changes.length === 0) lines.push('  owner tags only (taking the resource over)');
    }
  }
  const count = (action: PlannedAction['action']): number => entries.filter((e) => e.plan.action === action).length;
  lines.push(`${entries.length} resource${entries.length === 1 ? '' : 's'}: ${count('create')} to create, ${count('update')} to update, ${count('no change')} unchanged, ${count('blocked')} blocked. Nothing was written.`);
  return `${lines.join('\n')}\n`;
}
