import {
  API_VERSION,
  Annotations,
  ConditionTypes,
  FINALIZER,
  type ProviderName,
  type DeletionPolicy,
  type ManagedKindName,
  type ManagedResource,
  type ManagedStatus,
  type ProviderConfig,
} from '@k8or/api';
import type { Logger } from 'pino';
import type { CallOptions, CloudCallRecorder, Connector, ExternalClient, FieldDiff, Observation } from '../provider/contract.js';
import { DeletionBlockedError, NotOwnedError, RetryableError, isRetryable } from '../provider/errors.js';
import { isConflict } from '../kube/rest.js';
import { mergeConditions, statusEqual, type DesiredCondition } from './conditions.js';

/** A condition's status, reason and message; the type is set where it is used. */
type ConditionState = Omit<DesiredCondition, 'type'>;
import {
  deletionPolicyFor,
  externalNameFor,
  isTrue,
  ownerTagsFor,
  ownershipOf,
  providerConfigNameFor,
  resyncPeriodFor,
  withJitter,
  type NamespaceInfo,
} from './policy.js';
import type { ConfigLookups, EventRecorder, EventType, ManagedPatch, ManagedResourceClient, OutputsWriter, ProviderPlugins, SecretData } from './ports.js';
import { Messages, Reasons } from './reasons.js';

/** Which object to reconcile. */
export interface ReconcileRequest {
  namespace: string;
  name: string;
  /** Aborts the reconcile's cloud and API calls (the engine stops, or loses leadership). */
  signal?: AbortSignal;
}

/**
 * What the controller does next with the key. `backoff`: requeue with the
 * per-item exponential rate limiter (retryable failures). `requeueAfterMs`:
 * look again after that long (resync, polling a cloud operation); the backoff
 * is forgotten. Neither: wait for the next watch event.
 */
export interface ReconcileOutcome {
  backoff?: boolean;
  requeueAfterMs?: number;
}

export interface ReconcilerOptions {
  /** Written into owner tags; tells this cluster's resources from another's. */
  clusterId: string;
  /** Used when neither the resource nor its namespace names a policy. Default `Delete`. */
  defaultDeletionPolicy?: DeletionPolicy;
  /** Drift-check period when the resource has no `k8or.io/resync-period`. Default 1 h. */
  resyncPeriodMs?: number;
  /** Spread of the resync period, as a fraction. Default 0.1 (±10 %). */
  resyncJitter?: number;
  /** How soon to look again while the cloud finishes creating or deleting. Default 5 s. */
  pollIntervalMs?: number;
  /** How soon to look again at a blocked deletion. Default 60 s. */
  deletionBlockedRetryMs?: number;
  /** Deadline of one reconcile: its provider calls are aborted after this long. Default 2 min. */
  reconcileTimeoutMs?: number;
  /** Wraps each cloud call for metrics; given the provider name. */
  cloudCallRecorder?: (provider: string) => CloudCallRecorder;
  logger?: Logger;
  now?: () => Date;
  random?: () => number;
}

export interface ReconcilerDeps {
  kube: ManagedResourceClient;
  lookups: ConfigLookups;
  providers: ProviderPlugins;
  events: EventRecorder;
  outputs: OutputsWriter;
}

/** How to reach the cloud for one resource: everything `connect` needs. */
interface Target {
  provider: ProviderName;
  providerConfig: ProviderConfig;
  credentials: SecretData | undefined;
  connector: Connector;
}

/** A reason the engine cannot go on that the user (not a retry) resolves. */
interface Blocker {
  reason: string;
  message: string;
}

const passThrough: CloudCallRecorder = (_operation, call) => call();
const MAX_STATUS_ATTEMPTS = 5;

/**
 * The managed-resource reconcile algorithm for one kind. `reconcile` reads top
 * to bottom as the lifecycle: get, paused?, deleting?, resolve ProviderConfig
 * and credentials, finalizer and external name, connect, observe, then create,
 * update or nothing, then status. Every effect goes through the ports in
 * ReconcilerDeps; every decision is made here.
 */
export class ManagedReconciler {
  readonly kind: ManagedKindName;
  readonly #deps: ReconcilerDeps;
  readonly #clusterId: string;
  readonly #defaultDeletionPolicy: DeletionPolicy;
  readonly #resyncPeriodMs: number;
  readonly #resyncJitter: number;
  readonly #pollIntervalMs: number;
  readonly #deletionBlockedRetryMs: number;
  readonly #reconcileTimeoutMs: number;
  readonly #cloudCallRecorder: (provider: string) => CloudCallRecorder;
  readonly #logger: Logger | undefined;
  readonly #now: () => Date;
  readonly #random: () => number;

  constructor(kind: ManagedKindName, deps: ReconcilerDeps, options: ReconcilerOptions) {
    this.kind = kind;
    this.#deps = deps;
    this.#clusterId = options.clusterId;
    this.#defaultDeletionPolicy = options.defaultDeletionPolicy ?? 'Delete';
    this.#resyncPeriodMs = options.resyncPeriodMs ?? 3_600_000;
    this.#resyncJitter = options.resyncJitter ?? 0.1;
    this.#pollIntervalMs = options.pollIntervalMs ?? 5_000;
    this.#deletionBlockedRetryMs = options.deletionBlockedRetryMs ?? 60_000;
    this.#reconcileTimeoutMs = options.reconcileTimeoutMs ?? 120_000;
    this.#cloudCallRecorder = options.cloudCallRecorder ?? (() => passThrough);
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
    this.#random = options.random ?? Math.random;
  }

  async reconcile(request: ReconcileRequest): Promise<ReconcileOutcome> {
    const deadline = AbortSignal.timeout(this.#reconcileTimeoutMs);
    const call: CallOptions = { signal: request.signal ? AbortSignal.any([request.signal, deadline]) : deadline };
    let resource = await this.#deps.kube.get(this.kind, request.namespace, request.name);
    if (!resource) return {};
    const log = this.#logger?.child({ resource: `${this.kind}/${request.namespace}/${request.name}` });

    if (isTrue(resource, Annotations.paused)) {
      await this.#setStatus(resource, { synced: { status: 'False', reason: Reasons.Paused, message: Messages.paused } });
      return {};
    }

    const namespace = await this.#deps.lookups.namespace(request.namespace);
    if (resource.metadata.deletionTimestamp) return await this.#finalize(resource, namespace, call);

    const target = await this.#resolveTarget(resource, namespace);
    if ('reason' in target) return await this.#block(resource, target);

    const externalName = externalNameFor(resource, target.provider);
    const observeOnly = resource.spec.managementPolicy === 'ObserveOnly';
    // Finalizer and external name before any cloud call; the create-pending
    // marker too, for an object never created, so a crash between here and the
    // end of create always leaves a trace of the name it used.
    resource = await this.#ensureManaged(resource, externalName, !observeOnly);

    let client: ExternalClient;
    try {
      client = await this.#connect(resource, target, externalName);
    } catch (error) {
      return await this.#fail(resource, Reasons.CannotConnectToProvider, error);
    }

    let observation: Observation;
    try {
      observation = await client.observe(resource, call);
    } catch (error) {
      return await this.#fail(resource, Reasons.CannotObserveExternalResource, error);
    }

    if (observeOnly) return await this.#report(resource, observation, target, externalName);

    if (!observation.exists) {
      try {
        await client.create(resource, call);
      } catch (error) {
        return await this.#fail(resource, Reasons.CannotCreateExternalResource, error);
      }
      resource = await this.#deps.kube.patch(resource, { annotations: { [Annotations.createSucceeded]: this.#timestamp() } });
      await this.#event(resource, 'Normal', Reasons.CreatedExternalResource, `Created ${this.kind} "${externalName}" in ${target.provider}.`);
      log?.info({ externalName }, 'created external resource');
      try {
        observation = await client.observe(resource, call);
      } catch (error) {
        return await this.#fail(resource, Reasons.CannotObserveExternalResource, error);
      }
      return await this.#succeed(resource, observation, target, externalName);
    }

    const ownership = ownershipOf(resource, observation, ownerTagsFor(resource, this.#clusterId));
    if (ownership === 'foreign') {
      return await this.#block(resource, { reason: Reasons.NotOwned, message: Messages.notOwned(externalName) });
    }
    // Adopting writes our owner tags, which is update's job even when the settings match.
    const mustUpdate = !observation.upToDate || ownership === 'adopt';
    if (!resource.metadata.annotations?.[Annotations.createSucceeded]) {
      // Ours by its tags but never recorded as created: a worker died between
      // the create call and the marker. Take it as ours (or adopt it).
      const reason = ownership === 'ours' ? Reasons.RecoveredExternalResource : Reasons.AdoptedExternalResource;
      resource = await this.#deps.kube.patch(resource, { annotations: { [Annotations.createSucceeded]: this.#timestamp() } });
      await this.#event(resource, 'Normal', reason, `Took over existing ${this.kind} "${externalName}" in ${target.provider} (${ownership === 'ours' ? 'carries this object\'s owner tags' : 'k8or.io/adopt is set'}).`);
    }

    if (observation.immutableDiff && observation.immutableDiff.length > 0) {
      return await this.#block(resource, {
        reason: Reasons.ImmutableFieldChanged,
        message: `The cloud cannot change ${describeDiff(observation.immutableDiff)} in place; restore the previous value or create a new resource.`,
      });
    }

    if (mustUpdate) {
      const diff = observation.diff ?? [];
      try {
        await client.update(resource, observation, call);
      } catch (error) {
        return await this.#fail(resource, Reasons.CannotUpdateExternalResource, error);
      }
      if (diff.length > 0) {
        // Spec unchanged since the last successful reconcile means the cloud moved: drift.
        const drift = resource.status?.observedGeneration === resource.metadata.generation;
        await this.#event(
          resource,
          drift ? 'Warning' : 'Normal',
          drift ? Reasons.RepairedDrift : Reasons.UpdatedExternalResource,
          drift ? `Repaired drift in ${describeDiff(diff)}.` : `Updated ${describeDiff(diff)}.`,
        );
      }
      try {
        observation = await client.observe(resource, call);
      } catch (error) {
        return await this.#fail(resource, Reasons.CannotObserveExternalResource, error);
      }
    }

    return await this.#succeed(resource, observation, target, externalName);
  }

  // ---- deletion ----------------------------------------------------------

  async #finalize(resource: ManagedResource, namespace: NamespaceInfo | undefined, call: CallOptions): Promise<ReconcileOutcome> {
    if (!resource.metadata.finalizers?.includes(FINALIZER)) return {};
    const observeOnly = resource.spec.managementPolicy === 'ObserveOnly';
    const policy = observeOnly ? 'Retain' : deletionPolicyFor(resource, namespace, this.#defaultDeletionPolicy);
    const externalName = resource.spec.name ?? resource.metadata.annotations?.[Annotations.externalName] ?? '';

    if (policy === 'Retain') {
      await this.#event(resource, 'Normal', Reasons.RetainedExternalResource, `Left ${this.kind} "${externalName}" in the cloud (${observeOnly ? 'managementPolicy ObserveOnly' : 'deletion policy Retain'}).`);
      return await this.#release(resource);
    }

    const target = await this.#resolveTarget(resource, namespace);
    if ('reason' in target) return await this.#block(resource, target);
    const name = externalNameFor(resource, target.provider);

    let client: ExternalClient;
    let observation: Observation;
    try {
      client = await this.#connect(resource, target, name);
    } catch (error) {
      return await this.#fail(resource, Reasons.CannotConnectToProvider, error);
    }
    try {
      observation = await client.observe(resource, call);
    } catch (error) {
      return await this.#fail(resource, Reasons.CannotObserveExternalResource, error);
    }
    if (!observation.exists) return await this.#release(resource);

    if (ownershipOf(resource, observation, ownerTagsFor(resource, this.#clusterId)) === 'foreign') {
      // Never delete what is not ours; the object goes, the cloud resource stays.
      await this.#event(resource, 'Warning', Reasons.NotOwned, `Left ${this.kind} "${name}" in the cloud: it is not owned by this object.`);
      return await this.#release(resource);
    }

    try {
      await client.delete(resource, call);
    } catch (error) {
      if (error instanceof DeletionBlockedError) {
        await this.#setStatus(
          resource,
          { synced: { status: 'False', reason: Reasons.DeletionBlocked, message: Messages.deletionBlocked(error.message) } },
          { type: 'Warning', reason: Reasons.DeletionBlocked, message: Messages.deletionBlocked(error.message) },
        );
        return { requeueAfterMs: this.#deletionBlockedRetryMs };
      }
      return await this.#fail(resource, Reasons.CannotDeleteExternalResource, error);
    }

    try {
      observation = await client.observe(resource, call);
    } catch (error) {
      return await this.#fail(resource, Reasons.CannotObserveExternalResource, error);
    }
    if (observation.exists) {
      await this.#setStatus(resource, {
        ready: { status: 'False', reason: Reasons.Deleting, message: `Deleting ${this.kind} "${name}".` },
        synced: { status: 'True', reason: Reasons.ReconcileSuccess, message: 'Delete requested.' },
      });
      return { requeueAfterMs: this.#pollIntervalMs };
    }
    await this.#event(resource, 'Normal', Reasons.DeletedExternalResource, `Deleted ${this.kind} "${name}" in ${target.provider}.`);
    return await this.#release(resource);
  }

  /** Removes the outputs ConfigMap and then the finalizer: the object may go. */
  async #release(resource: ManagedResource): Promise<ReconcileOutcome> {
    const outputs = resource.spec.writeOutputsTo?.name;
    if (outputs) await this.#deps.outputs.remove(resource, outputs);
    const finalizers = (resource.metadata.finalizers ?? []).filter((f) => f !== FINALIZER);
    await this.#deps.kube.patch(resource, { finalizers });
    return {};
  }

  // ---- steps -------------------------------------------------------------

  /** ProviderConfig (spec, namespace annotation, `default`), its provider plugin and connector, and credentials. */
  async #resolveTarget(resource: ManagedResource, namespace: NamespaceInfo | undefined): Promise<Target | Blocker> {
    const configName = providerConfigNameFor(resource, namespace);
    const providerConfig = await this.#deps.lookups.providerConfig(configName);
    if (!providerConfig) return { reason: Reasons.ProviderConfigNotFound, message: Messages.providerConfigNotFound(configName) };
    const provider = providerConfig.spec.provider;
    const plugin = this.#deps.providers.get(provider);
    if (!plugin) return { reason: Reasons.ProviderNotInstalled, message: Messages.providerNotInstalled(provider) };
    const connector = plugin.connectors[this.kind];
    if (!connector) return { reason: Reasons.KindNotSupported, message: Messages.kindNotSupported(provider, this.kind) };
    let credentials: SecretData | undefined;
    const credentialsSpec = providerConfig.spec.credentials;
    if (credentialsSpec?.source === 'Secret') {
      const ref = credentialsSpec.secretRef;
      credentials = ref ? await this.#deps.lookups.secret(ref.namespace, ref.name) : undefined;
      if (!credentials) return { reason: Reasons.CredentialsSecretNotFound, message: Messages.secretNotFound(ref?.namespace ?? '', ref?.name ?? '') };
    }
    return { provider, providerConfig, credentials, connector };
  }

  /** One patch for whatever is missing of: finalizer, spec.name, external-name annotation, create-pending marker. */
  async #ensureManaged(resource: ManagedResource, externalName: string, mayCreate: boolean): Promise<ManagedResource> {
    const meta = resource.metadata;
    const patch: ManagedPatch = {};
    const annotations: Record<string, string> = {};
    if (!meta.finalizers?.includes(FINALIZER)) patch.finalizers = [...(meta.finalizers ?? []), FINALIZER];
    if (resource.spec.name !== externalName) patch.specName = externalName;
    if (meta.annotations?.[Annotations.externalName] !== externalName) annotations[Annotations.externalName] = externalName;
    if (mayCreate && !meta.annotations?.[Annotations.createPending] && !meta.annotations?.[Annotations.createSucceeded]) {
      annotations[Annotations.createPending] = this.#timestamp();
    }
    if (Object.keys(annotations).length > 0) patch.annotations = annotations;
    if (Object.keys(patch).length === 0) return resource;
    return await this.#deps.kube.patch(resource, patch);
  }

  async #connect(resource: ManagedResource, target: Target, externalName: string): Promise<ExternalClient> {
    return await target.connector.connect(resource, {
      providerConfig: target.providerConfig,
      credentials: target.credentials,
      externalName,
      ownerTags: ownerTagsFor(resource, this.#clusterId),
      recordCall: this.#cloudCallRecorder(target.provider),
    });
  }

  /** The cloud matches the spec (or is catching up): Ready from the observation, Synced True, outputs published. */
  async #succeed(resource: ManagedResource, observation: Observation, target: Target, externalName: string): Promise<ReconcileOutcome> {
    const outputsProblem = await this.#publishOutputs(resource, observation, target, externalName);
    await this.#setStatus(
      resource,
      {
        ready: readyCondition(observation),
        synced: outputsProblem ?? { status: 'True', reason: Reasons.ReconcileSuccess, message: 'The cloud resource matches the spec.' },
        atProvider: observation,
        provider: target.provider,
      },
      outputsProblem ? { type: 'Warning', ...outputsProblem } : undefined,
    );
    return observation.ready ? this.#resync(resource) : { requeueAfterMs: this.#pollIntervalMs };
  }

  /** ObserveOnly: read and report, never write to the cloud. */
  async #report(resource: ManagedResource, observation: Observation, target: Target, externalName: string): Promise<ReconcileOutcome> {
    if (!observation.exists) {
      const message = `ObserveOnly: no ${this.kind} named "${externalName}" exists in ${target.provider}; k8or will not create it.`;
      await this.#setStatus(resource, {
        ready: { status: 'False', reason: Reasons.ExternalResourceNotFound, message },
        synced: { status: 'True', reason: Reasons.Observed, message },
        provider: target.provider,
      });
      return this.#resync(resource);
    }
    const outputsProblem = await this.#publishOutputs(resource, observation, target, externalName);
    // Owner tags are k8or's business, not the spec's: an imported resource lacks them by design.
    const drift = [...(observation.diff ?? []), ...(observation.immutableDiff ?? [])].filter((d) => !d.field.startsWith('ownerTags'));
    const synced: ConditionState =
      drift.length > 0
        ? { status: 'False', reason: Reasons.DriftDetected, message: `ObserveOnly: the cloud differs from the spec in ${describeDiff(drift)}; k8or will not change it.` }
        : (outputsProblem ?? { status: 'True', reason: Reasons.Observed, message: 'ObserveOnly: the cloud resource matches the spec.' });
    await this.#setStatus(
      resource,
      { ready: readyCondition(observation), synced, atProvider: observation, provider: target.provider },
      synced.status === 'False' ? { type: 'Warning', reason: synced.reason, message: synced.message } : undefined,
    );
    return this.#resync(resource);
  }

  /** Writes the outputs ConfigMap when asked for; a problem to show in Synced, or undefined. */
  async #publishOutputs(resource: ManagedResource, observation: Observation, target: Target, externalName: string): Promise<ConditionState | undefined> {
    const configMap = resource.spec.writeOutputsTo?.name;
    if (!configMap) return undefined;
    const at = observation.atProvider ?? {};
    const location = at.location ?? ('location' in resource.spec ? resource.spec.location : undefined);
    const result = await this.#deps.outputs.publish(resource, configMap, {
      externalName,
      provider: target.provider,
      ...(location ? { location } : {}),
      ...(at.url ? { url: at.url } : {}),
      ...(at.id ? { id: at.id } : {}),
    });
    if (result !== 'foreign') return undefined;
    return {
      status: 'False',
      reason: Reasons.CannotWriteOutputs,
      message: `ConfigMap "${configMap}" exists and is not owned by this object; choose another spec.writeOutputsTo.name.`,
    };
  }

  /** A stop state the user resolves: Synced False with the reason, a Warning Event, and no retry before the resync. */
  async #block(resource: ManagedResource, blocker: Blocker): Promise<ReconcileOutcome> {
    await this.#setStatus(resource, { synced: { status: 'False', ...blocker } }, { type: 'Warning', ...blocker });
    return this.#resync(resource);
  }

  /** A failed call: Synced False with the error; retryable errors back off, terminal ones wait for the resync or a change. */
  async #fail(resource: ManagedResource, failedStep: string, error: unknown): Promise<ReconcileOutcome> {
    // A name taken by someone else is one reason whichever call found it, so users can grep for it.
    const reason = error instanceof NotOwnedError ? Reasons.NotOwned : failedStep;
    const message = errorMessage(error);
    this.#logger?.warn({ resource: `${this.kind}/${resource.metadata.namespace}/${resource.metadata.name}`, reason, err: message }, 'reconcile failed');
    await this.#setStatus(resource, { synced: { status: 'False', reason, message } }, { type: 'Warning', reason, message, always: true });
    if (error instanceof RetryableError && error.retryAfterMs !== undefined) return { requeueAfterMs: error.retryAfterMs };
    return isRetryable(error) ? { backoff: true } : this.#resync(resource);
  }

  #resync(resource: ManagedResource): ReconcileOutcome {
    return { requeueAfterMs: withJitter(resyncPeriodFor(resource, this.#resyncPeriodMs), this.#resyncJitter, this.#random) };
  }

  /**
   * Computes the new status and writes it only when it differs from the
   * stored one (a no-op resync writes nothing). The Event, if any, goes out
   * on a transition (the status changed), or every time when `always` (failed
   * calls, which the recorder aggregates so they cannot flood the API).
   * A 409 (the object changed since it was read) re-reads and retries.
   */
  async #setStatus(
    resource: ManagedResource,
    change: { ready?: ConditionState; synced?: ConditionState; atProvider?: Observation; provider?: string },
    event?: { type: EventType; reason: string; message: string; always?: boolean },
  ): Promise<void> {
    let current = resource;
    let changed = false;
    for (let attempt = 1; ; attempt++) {
      const desired: DesiredCondition[] = [];
      if (change.ready) desired.push({ type: ConditionTypes.Ready, ...change.ready });
      if (change.synced) desired.push({ type: ConditionTypes.Synced, ...change.synced });
      const next: ManagedStatus = {
        ...current.status,
        conditions: mergeConditions(current.status?.conditions, desired, current.metadata.generation, this.#timestamp()),
      };
      // Top-level observedGeneration says which spec the cloud was last brought in line with.
      if (change.atProvider || change.provider) next.observedGeneration = current.metadata.generation;
      if (change.provider) next.provider = change.provider;
      if (change.atProvider?.atProvider) next.atProvider = change.atProvider.atProvider;
      if (statusEqual(current.status, next)) break;
      try {
        await this.#deps.kube.writeStatus(current, next);
        changed = true;
        break;
      } catch (error) {
        if (!isConflict(error) || attempt >= MAX_STATUS_ATTEMPTS) throw error;
        const fresh = await this.#deps.kube.get(this.kind, current.metadata.namespace ?? '', current.metadata.name ?? '');
        if (!fresh || fresh.metadata.uid !== current.metadata.uid) return;
        current = fresh;
      }
    }
    if (event && (changed || event.always)) await this.#event(resource, event.type, event.reason, event.message);
  }

  async #event(resource: ManagedResource, type: EventType, reason: string, message: string): Promise<void> {
    await this.#deps.events.record(
      {
        apiVersion: API_VERSION,
        kind: this.kind,
        namespace: resource.metadata.namespace,
        name: resource.metadata.name ?? '',
        uid: resource.metadata.uid,
      },
      type,
      reason,
      message,
    );
  }

  #timestamp(): string {
    return this.#now().toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

function readyCondition(observation: Observation): ConditionState {
  if (observation.ready) return { status: 'True', reason: Reasons.Available, message: 'The cloud resource is available.' };
  const state = observation.atProvider?.state;
  return { status: 'False', reason: Reasons.Creating, message: `Waiting for the cloud resource to become available${state ? ` (state ${state})` : ''}.` };
}

/** `spec.versioning (wanted true, found false), spec.labels.team (...)`: what the user reads in events and conditions. */
export function describeDiff(diff: readonly FieldDiff[]): string {
  if (diff.length === 0) return 'no fields';
  return diff.map((d) => `${d.field} (wanted ${JSON.stringify(d.desired) ?? 'unset'}, found ${JSON.stringify(d.actual) ?? 'unset'})`).join(', ');
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
