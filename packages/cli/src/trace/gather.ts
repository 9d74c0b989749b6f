import { Annotations, KINDS, type Condition, type DriftEntry, type KindName, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import {
  cloudTargetFor,
  compareIdentity,
  creationStateOf,
  decideOwnership,
  externalNameFor,
  namingRulesFor,
  ownerTagsFor,
  providerConfigFor,
  recordedIdentity,
  resyncPeriodFor,
  resyncPeriodViolation,
  sameCloudTarget,
  DEFAULT_RESYNC_FLOOR_MS,
  ProviderError,
  type CloudCallRecorder,
  type Connector,
  type FieldDiff,
  type ProviderPlugin,
} from '@k8or/core';
import type { CloudPacing } from '../cloud-pacing.js';
import type { ClusterReader } from '../cluster/reads.js';
import type { TraceReport, TracedCloud, TracedCondition, TracedCredentials, TracedObject, TracedOutputs, TracedProviderConfig, TracedSchedule } from './report.js';

export interface GatherDeps {
  cluster: ClusterReader;
  providers: ReadonlyMap<string, ProviderPlugin>;
  /** The operator's cluster id: its owner tags and default names carry it. */
  clusterId: string;
  pacing: CloudPacing;
  timeoutMs: number;
  /** The operator's drift-check period for objects without `k8or.io/resync-period`. */
  defaultResyncMs: number;
}

/** The facts, less the problems (problems.ts reads them), and the credential values the output must never carry. */
export interface Gathered {
  report: Omit<TraceReport, 'problems'>;
  secretValues: string[];
}

/** The annotations shown with the object: those that change what the engine does. */
const SHOWN_ANNOTATIONS: readonly string[] = [
  Annotations.paused,
  Annotations.adopt,
  Annotations.protect,
  Annotations.deletionPolicy,
  Annotations.resyncPeriod,
  Annotations.externalName,
  Annotations.createPending,
  Annotations.createSucceeded,
  Annotations.createFailed,
];

/** How many Events the trace shows: the last ones. */
const EVENTS_SHOWN = 10;

interface Meta {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  finalizers?: string[];
}

/** Reads a Bucket or a Table, its ProviderConfig and Secret (key names only), its Events and outputs ConfigMap, and its cloud resource live. Undefined when there is no such object. */
export async function gatherManaged(deps: GatherDeps, kind: ManagedKindName, namespace: string, name: string): Promise<Gathered | undefined> {
  const resource = (await deps.cluster.managed(KINDS[kind].plural, namespace, name)) as ManagedResource | undefined;
  if (!resource) return undefined;
  const metadata = resource.metadata as Meta;
  const secretValues: string[] = [];

  const namespaceObject = await deps.cluster.namespace(namespace);
  const choice = providerConfigFor(resource, namespaceObject);
  const providerConfig = await deps.cluster.providerConfig(choice.name);
  const plugin = providerConfig ? deps.providers.get(providerConfig.spec.provider) : undefined;
  const traced: TracedProviderConfig = { name: choice.name, chosenBy: choice.source, found: providerConfig !== undefined };
  let credentials: TracedCredentials | undefined;
  let cloud: TracedCloud;

  if (!providerConfig) {
    cloud = { read: 'skipped', skippedBecause: 'providerconfig-missing', why: `ProviderConfig "${choice.name}" not found` };
  } else {
    traced.provider = providerConfig.spec.provider;
    traced.installed = plugin !== undefined;
    traced.conditions = conditionsOf(providerConfig.status?.conditions);
    const secret = await readCredentials(deps, providerConfig);
    credentials = secret.traced;
    if (secret.values) secretValues.push(...Object.values(secret.values));
    const recordedTarget = resource.status?.target;
    if (recordedTarget) traced.recordedTarget = { ...recordedTarget };
    if (plugin) {
      const target = cloudTargetFor(plugin, kind, providerConfig, secret.values);
      traced.target = { ...target };
      if (recordedTarget) traced.targetMatches = sameCloudTarget(recordedTarget, target);
    }
    cloud = await readCloud(deps, resource, kind, providerConfig, plugin, secret, traced.targetMatches !== false);
  }

  const outputsName = resource.spec.writeOutputsTo?.name;
  let outputs: TracedOutputs | undefined;
  if (outputsName) {
    const data = await deps.cluster.configMapData(namespace, outputsName);
    outputs = { configMap: outputsName, found: data !== undefined, ...(data ? { data } : {}) };
  }
  const drift = resource.status?.drift;

  return {
    report: {
      object: tracedObject(resource, kind),
      conditions: conditionsOf(resource.status?.conditions),
      providerConfig: traced,
      ...(credentials ? { credentials } : {}),
      cloud,
      ...(drift?.length ? { drift: drift.map((d) => ({ ...d })) } : {}),
      schedule: scheduleOf(resource, deps.defaultResyncMs),
      events: lastEvents(await deps.cluster.events(namespace, kind, name, metadata.uid)),
      ...(outputs ? { outputs } : {}),
    },
    secretValues,
  };
}

/** A ProviderConfig: its conditions, where it points for each kind its provider serves, its credential source, its Events. */
export async function gatherProviderConfig(deps: GatherDeps, name: string): Promise<Gathered | undefined> {
  const providerConfig = await deps.cluster.providerConfig(name);
  if (!providerConfig) return undefined;
  const plugin = deps.providers.get(providerConfig.spec.provider);
  const secret = await readCredentials(deps, providerConfig);
  const traced: TracedProviderConfig = { name, chosenBy: 'spec', found: true, provider: providerConfig.spec.provider, installed: plugin !== undefined };
  if (plugin) {
    const kinds = Object.keys(plugin.connectors) as ManagedKindName[];
    traced.targets = Object.fromEntries(kinds.map((kind) => [kind, { ...cloudTargetFor(plugin, kind, providerConfig, secret.values) }]));
  }
  const metadata = providerConfig.metadata as Meta;
  return {
    report: {
      object: tracedObject(providerConfig, 'ProviderConfig'),
      conditions: conditionsOf(providerConfig.status?.conditions),
      providerConfig: traced,
      ...(secret.traced ? { credentials: secret.traced } : {}),
      events: lastEvents(await deps.cluster.events(undefined, 'ProviderConfig', name, metadata.uid)),
    },
    secretValues: Object.values(secret.values ?? {}),
  };
}

interface Credentials {
  traced: TracedCredentials | undefined;
  /** The Secret's values: handed to the connector, never reported. */
  values: Record<string, string> | undefined;
  /** A Secret named but not there: no cloud call can be made. */
  missing: boolean;
}

async function readCredentials(deps: GatherDeps, providerConfig: ProviderConfig): Promise<Credentials> {
  const spec = providerConfig.spec.credentials;
  if (!spec) return { traced: undefined, values: undefined, missing: false };
  if (spec.source !== 'Secret') return { traced: { source: spec.source }, values: undefined, missing: false };
  const ref = spec.secretRef;
  if (!ref) return { traced: { source: spec.source }, values: undefined, missing: true };
  const values = await deps.cluster.secretData(ref.namespace, ref.name);
  const secret = { namespace: ref.namespace, name: ref.name, found: values !== undefined, ...(values ? { keys: Object.keys(values).sort() } : {}) };
  return { traced: { source: spec.source, secret }, values, missing: values === undefined };
}

/** The live read, as `k8or plan` makes it: the same connector, through the ProviderConfig's rate limits, observe only. */
async function readCloud(
  deps: GatherDeps,
  resource: ManagedResource,
  kind: ManagedKindName,
  providerConfig: ProviderConfig,
  plugin: ProviderPlugin | undefined,
  credentials: Credentials,
  targetHolds: boolean,
): Promise<TracedCloud> {
  if (!plugin) return { read: 'skipped', skippedBecause: 'provider-not-installed', why: `no installed provider serves "${providerConfig.spec.provider}"` };
  const connector = plugin.connectors[kind] as Connector | undefined;
  if (!connector) return { read: 'skipped', skippedBecause: 'kind-not-supported', why: `provider ${plugin.provider} does not manage ${kind}` };
  const externalName = externalNameFor(resource, namingRulesFor(plugin, kind), deps.clusterId) ?? '';
  const base = { externalName };
  if (credentials.missing) return { ...base, read: 'skipped', skippedBecause: 'credentials-missing', why: 'the credentials Secret is missing' };
  // The engine never calls the cloud where the ProviderConfig now points for a resource made elsewhere; neither does trace.
  if (!targetHolds) return { ...base, read: 'skipped', skippedBecause: 'target-changed', why: 'the ProviderConfig points away from where the resource was created' };
  let recordCall: CloudCallRecorder;
  try {
    recordCall = deps.pacing.recorder(plugin, providerConfig);
  } catch (error) {
    // An invalid spec.rateLimits: the engine refuses to connect, and so does trace.
    return { ...base, read: 'skipped', skippedBecause: 'invalid-providerconfig', why: `ProviderConfig "${providerConfig.metadata.name ?? ''}" is invalid: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    const client = await connector.connect(resource, { providerConfig, credentials: credentials.values, externalName, ownerTags: ownerTagsFor(resource, deps.clusterId), recordCall });
    const observation = await client.observe(resource, { signal: AbortSignal.timeout(deps.timeoutMs) });
    const recorded = recordedIdentity(resource);
    const cloud: TracedCloud = { ...base, read: 'done', exists: observation.exists, ready: observation.ready };
    if (observation.ownerTags) cloud.ownerTags = { ...observation.ownerTags };
    if (recorded || observation.identity) {
      cloud.identity = { ...(recorded ? { recorded } : {}), ...(observation.identity ? { found: { ...observation.identity } } : {}), comparison: compareIdentity(recorded, observation.identity) };
    }
    if (observation.exists) {
      const decision = decideOwnership(resource, observation, ownerTagsFor(resource, deps.clusterId), externalName);
      cloud.ownership = { verdict: decision.ownership, ...(decision.proof ? { proof: decision.proof } : {}), ...(decision.message ? { message: decision.message } : {}) };
    }
    if (observation.protection) cloud.protection = observation.protection.map((p) => ({ ...p }));
    if (observation.diff?.length) cloud.diff = observation.diff.map(driftOf);
    if (observation.immutableDiff?.length) cloud.immutableDiff = observation.immutableDiff.map(driftOf);
    return cloud;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const code = error instanceof ProviderError ? error.code : undefined;
    return { ...base, read: 'failed', why: message, ...(code ? { errorCode: code } : {}) };
  }
}

const driftOf = (d: FieldDiff): DriftEntry => ({ field: d.field, ...(d.desired !== undefined ? { desired: d.desired } : {}), ...(d.actual !== undefined ? { actual: d.actual } : {}) });

function tracedObject(object: ManagedResource | ProviderConfig, kind: KindName): TracedObject {
  const metadata = object.metadata as Meta;
  const annotations = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([key]) => SHOWN_ANNOTATIONS.includes(key)));
  const traced: TracedObject = { kind, name: metadata.name ?? '', annotations };
  if (metadata.namespace) traced.namespace = metadata.namespace;
  if (metadata.uid) traced.uid = metadata.uid;
  if (metadata.generation !== undefined) traced.generation = metadata.generation;
  if (object.status?.observedGeneration !== undefined) traced.observedGeneration = object.status.observedGeneration;
  if (metadata.deletionTimestamp) traced.deleting = { since: String(metadata.deletionTimestamp), finalizers: [...(metadata.finalizers ?? [])] };
  if (object.kind !== 'ProviderConfig') {
    const spec = (object as ManagedResource).spec;
    traced.managementPolicy = spec.managementPolicy ?? 'Manage';
    traced.deletionPolicy = spec.deletionPolicy ?? metadata.annotations?.[Annotations.deletionPolicy] ?? 'the operator default';
    traced.creation = creationStateOf(object);
    const deletionProtection = (spec as { deletionProtection?: unknown }).deletionProtection;
    if (typeof deletionProtection === 'boolean') traced.deletionProtection = deletionProtection;
  }
  return traced;
}

function conditionsOf(conditions: readonly Condition[] | undefined): TracedCondition[] {
  return (conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
    ...(c.lastTransitionTime ? { lastTransitionTime: String(c.lastTransitionTime) } : {}),
  }));
}

function scheduleOf(resource: ManagedResource, defaultMs: number): TracedSchedule {
  const annotations = (resource.metadata as Meta).annotations ?? {};
  const text = annotations[Annotations.resyncPeriod];
  const violation = text !== undefined ? resyncPeriodViolation(text) : undefined;
  const periodMs = resyncPeriodFor(resource, defaultMs, DEFAULT_RESYNC_FLOOR_MS);
  const mode = annotations[Annotations.paused] === 'true' ? 'paused' : resource.spec.managementPolicy === 'ObserveOnly' ? 'observe-only' : 'manage';
  return {
    mode,
    periodMs,
    period: formatDuration(periodMs),
    source: text !== undefined && !violation ? 'annotation' : 'operator-default',
    ...(text !== undefined && violation ? { ignoredAnnotation: { value: text, why: violation.message } } : {}),
  };
}

function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('') || `${ms}ms`;
}

const lastEvents = <T>(events: readonly T[]): T[] => events.slice(-EVENTS_SHOWN);
