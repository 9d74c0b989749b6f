import { isDeepStrictEqual } from 'node:util';
import {
  API_VERSION,
  ConditionTypes,
  FINALIZER,
  Annotations,
  formatViolations,
  type DeletionPolicy,
  type DriftEntry,
  type ManagedKindName,
  type ManagedResource,
  type ManagedStatus,
  type ProviderConfig,
  type ProviderName,
} from '@k8or/api';
import type { Logger } from 'pino';
import type {
  ApplyResult,
  CallOptions,
  CloudCallRecorder,
  CloudTarget,
  Connector,
  ExternalClient,
  FieldDiff,
  NamingRules,
  Observation,
  Presence,
  ProviderPlugin,
  ResourceIdentity,
  SettingIssue,
} from '../provider/contract.js';
import { DeletionBlockedError, NotOwnedError, RetryableError, isRetryable } from '../provider/errors.js';
import { isConflict } from '../kube/rest.js';
import { deletionActionFor } from '../policy/deletion-policy.js';
import { providerConfigFor } from '../policy/provider-config-choice.js';
import { decideDeletion, decideOwnership, mayManage, ownerTagsFor, ownerTagsNotReadYet, refuseCreate } from '../policy/ownership.js';
import { createOutcomeOf, creationStateOf } from '../policy/creation.js';
import { claimOrder } from '../policy/claim-order.js';
import { appliedProtectionOf, protectionChangeAsked } from '../policy/protection-asked.js';
import { cloudResourceKey, cloudTargetFor, sameCloudTarget } from '../policy/cloud-target.js';
import { externalNameConflict } from '../policy/immutability.js';
import { driftDigest, heldDriftApproved, isResync, sortDrift, specDigest } from '../policy/drift.js';
import { DEFAULT_RESYNC_FLOOR_MS, DEFAULT_RESYNC_PERIOD_MS, formatGoDuration, parseGoDuration, resyncPeriodFor } from '../policy/resync.js';
import { awaitsItsSlot, checkCallsOf, delayAfterCheck, delayOfDeferredCheck, driftCheckBudgetViolations, type DriftCheckInterval } from '../policy/drift-schedule.js';
import type { DriftCheckAdmission, DriftCheckGate } from '../policy/drift-check-gate.js';
import { externalNameFor, namingRulesFor } from '../policy/naming.js';
import { providerSettingsViolations } from '../policy/settings.js';
import { rateLimitViolations } from '../policy/rate-limits.js';
import type { CloudRateLimits } from '../cloud-rate-limit/cloud-rate-limits.js';
import { annotationIsTrue } from '../policy/read.js';
import { mergeConditions, statusEqual, withoutConditions, type DesiredCondition } from './conditions.js';
import { progressConditions } from './progress.js';
import { ReconcileDeadline } from './deadline.js';
import type { ConfigLookups, EventRecorder, EventType, ManagedPatch, ManagedResourceClient, NamespaceInfo, OutputsWriter, ProviderPlugins, SecretData } from './ports.js';
import { Messages, Reasons } from './reasons.js';
import {
  CLOUD_WRITE_MESSAGE,
  changesOfCreate,
  changesOfDiff,
  changesOfRelease,
  redactChanges,
  writeEventMessage,
  type CloudWriteOperation,
  type CloudWriteRecord,
  type FieldChange,
} from './write-record.js';
import { secretNeedles } from '../redact.js';

/** A condition's status, reason and message; the type is set where it is used. */
type ConditionState = Omit<DesiredCondition, 'type'>;

/** Which object to reconcile. */
export interface ReconcileRequest {
  namespace: string;
  name: string;
  /**
   * Aborts the reconcile: its cloud and API calls fail and no new one starts.
   * The engine aborts it when it stops or loses leadership.
   */
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
  /** The look after `requeueAfterMs` is the resource's next drift check: it waits behind changes (`QueueLane`). */
  driftCheck?: boolean;
}

export interface ReconcilerOptions {
  /** Written into owner tags and folded into default external names; tells this cluster's resources from another's. */
  clusterId: string;
  /** Used when neither the resource nor its namespace names a policy. Default `Delete`. */
  defaultDeletionPolicy?: DeletionPolicy;
  /** Drift-check period when the resource has no `k8or.io/resync-period`. Default 1 h. */
  resyncPeriodMs?: number;
  /** The shortest resync period, whatever an annotation says. Default 10 s. */
  resyncFloorMs?: number;
  /** How soon to look again while the cloud finishes creating or deleting. Default 5 s. */
  pollIntervalMs?: number;
  /** How soon to look again at a blocked deletion. Default 60 s. */
  deletionBlockedRetryMs?: number;
  /**
   * Deadline of one reconcile: its cloud and API calls are aborted after it has run this long, not
   * counting its waits for rate-limit tokens. Default 2 min.
   */
  reconcileTimeoutMs?: number;
  /** Wraps each cloud call for metrics; given the provider name. */
  cloudCallRecorder?: (provider: string) => CloudCallRecorder;
  /**
   * The drift-check interval in force for a resource (the engine's DriftCheckPlanner, which fits
   * each ProviderConfig's drift-check budget). Default: what the resource asks for.
   */
  driftCheckInterval?: (kind: ManagedKindName, resource: ManagedResource) => DriftCheckInterval;
  /** Told of each cloud call a drift check (the observe of a resource in sync) makes, for metrics. */
  driftCheckCall?: (provider: string, providerConfig: string) => void;
  /** Holds drift checks to each ProviderConfig's budget over every sliding minute; none: every check goes at its slot. */
  driftCheckGate?: DriftCheckGate;
  /** Paces each cloud call to its ProviderConfig's rate limit for the service it names. Without it, calls are not paced. */
  cloudRateLimits?: CloudRateLimits;
  logger?: Logger;
  now?: () => Date;
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
  naming: NamingRules;
  plugin: ProviderPlugin;
  /** Where a client built from this ProviderConfig points (policy/cloud-target.ts). */
  cloudTarget: CloudTarget;
}

/** A reason the engine cannot go on that the user (not a retry) resolves. */
interface Blocker {
  reason: string;
  message: string;
}

/**
 * One reconcile's signals: `signal` (given to the provider) aborts at the
 * deadline or on stop; `stop` only when the engine stops or loses leadership,
 * so a reconcile past its deadline can still record why in status.
 */
interface Run extends CallOptions {
  stop: AbortSignal;
  /** Stops the deadline's clock while a call waits for a rate-limit token; returns what starts it again. */
  pauseDeadline: () => () => void;
  /** True while the pass's first observe of a resource in sync runs: its calls are a drift check's. */
  driftCheck?: boolean;
}

const passThrough: CloudCallRecorder = (_operation, call) => call();
const MAX_STATUS_ATTEMPTS = 5;

/**
 * The managed-resource reconcile algorithm for one kind. `reconcile` reads top
 * to bottom as the lifecycle: get, paused?, deleting?, resolve ProviderConfig
 * and credentials, finalizer and external name, connect, observe, then create,
 * update or nothing, then status. Every effect goes through the ports in
 * ReconcilerDeps; every decision is made here or in ../policy.
 */
export class ManagedReconciler {
  readonly kind: ManagedKindName;
  readonly #deps: ReconcilerDeps;
  readonly #clusterId: string;
  readonly #defaultDeletionPolicy: DeletionPolicy;
  readonly #resyncPeriodMs: number;
  readonly #resyncFloorMs: number;
  readonly #pollIntervalMs: number;
  readonly #deletionBlockedRetryMs: number;
  readonly #reconcileTimeoutMs: number;
  readonly #cloudCallRecorder: (provider: string) => CloudCallRecorder;
  readonly #cloudRateLimits: CloudRateLimits | undefined;
  readonly #driftCheckInterval: ((kind: ManagedKindName, resource: ManagedResource) => DriftCheckInterval) | undefined;
  readonly #driftCheckCall: ((provider: string, providerConfig: string) => void) | undefined;
  readonly #driftCheckGate: DriftCheckGate | undefined;
  readonly #logger: Logger | undefined;
  readonly #now: () => Date;

  constructor(kind: ManagedKindName, deps: ReconcilerDeps, options: ReconcilerOptions) {
    this.kind = kind;
    this.#deps = deps;
    this.#clusterId = options.clusterId;
    this.#defaultDeletionPolicy = options.defaultDeletionPolicy ?? 'Delete';
    this.#resyncPeriodMs = options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
    this.#resyncFloorMs = options.resyncFloorMs ?? DEFAULT_RESYNC_FLOOR_MS;
    this.#pollIntervalMs = options.pollIntervalMs ?? 5_000;
    this.#deletionBlockedRetryMs = options.deletionBlockedRetryMs ?? 60_000;
    this.#reconcileTimeoutMs = options.reconcileTimeoutMs ?? 120_000;
    this.#cloudCallRecorder = options.cloudCallRecorder ?? (() => passThrough);
    this.#cloudRateLimits = options.cloudRateLimits;
    this.#driftCheckInterval = options.driftCheckInterval;
    this.#driftCheckCall = options.driftCheckCall;
    this.#driftCheckGate = options.driftCheckGate;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * One pass of the algorithm. A write refused because the object changed
   * since it was read (409: another writer, or a cached copy that was behind)
   * ends the pass with `backoff`: the next pass reads the object again, and
   * nothing was decided on the stale copy.
   */
  async reconcile(request: ReconcileRequest): Promise<ReconcileOutcome> {
    const deadline = new ReconcileDeadline(this.#reconcileTimeoutMs);
    try {
      return await this.#reconcile(request, deadline);
    } catch (error) {
      if (!isConflict(error)) throw error;
      this.#logger?.debug({ resource: `${this.kind}/${request.namespace}/${request.name}` }, 'object changed since it was read; reconciling again');
      return { backoff: true };
    } finally {
      deadline.clear();
    }
  }

  async #reconcile(request: ReconcileRequest, deadline: ReconcileDeadline): Promise<ReconcileOutcome> {
    const stop = request.signal ?? new AbortController().signal;
    const call: Run = { signal: AbortSignal.any([stop, deadline.signal]), stop, pauseDeadline: () => deadline.pause() };
    let resource = await this.#deps.kube.get(this.kind, request.namespace, request.name, call.stop);
    if (!resource) return {};

    if (annotationIsTrue(resource, Annotations.paused)) {
      await this.#setStatus(resource, call, { synced: { status: 'False', reason: Reasons.Paused, message: Messages.paused } });
      return {};
    }

    const namespace = await this.#deps.lookups.namespace(request.namespace);
    if (resource.metadata.deletionTimestamp) return await this.#finalize(resource, namespace, call);

    const target = await this.#resolveTarget(resource, namespace);
    if ('reason' in target) return await this.#block(resource, call, target);

    const conflict = externalNameConflict(resource);
    if (conflict) return await this.#block(resource, call, { reason: Reasons.ImmutableFieldChanged, message: formatViolations([conflict]) });
    const externalName = this.#externalName(resource, target);
    const observeOnly = resource.spec.managementPolicy === 'ObserveOnly';

    // Both checks before any cloud call: a moved target or an older object naming the same
    // resource means this object must not touch the cloud at all.
    const moved = this.#targetMoved(resource, target);
    if (moved) return await this.#block(resource, call, moved);
    const older = await this.#olderClaimant(resource, target, externalName);
    if (older) return await this.#block(resource, call, older);

    let client: ExternalClient;
    try {
      client = await this.#connect(resource, target, externalName, call);
    } catch (error) {
      return await this.#fail(resource, call, Reasons.CannotConnectToProvider, error);
    }

    // Observe reads only, so it may come before the finalizer.
    let observation: Observation;
    call.driftCheck = awaitsItsSlot(resource);
    // A drift check that would overfill its ProviderConfig's budget minute waits for room (or, far off its slot, for its next slot): requeued, nothing recorded.
    const admission = call.driftCheck ? this.#admitDriftCheck(target) : undefined;
    if (admission && !admission.admitted) {
      call.driftCheck = false;
      return { requeueAfterMs: delayOfDeferredCheck(resource.metadata.uid ?? '', this.checkIntervalMs(resource), this.#now().getTime(), admission.retryAfterMs) };
    }
    try {
      observation = await client.observe(resource, call);
    } catch (error) {
      return await this.#fail(resource, call, Reasons.CannotObserveExternalResource, error);
    } finally {
      call.driftCheck = false;
      admission?.done();
    }

    // Finalizer and external name in one patch before any cloud write, so a
    // crash from here on always leaves the name the cloud resource has (or
    // will have). With them, for a resource about to be created, the
    // create-pending marker: the create's outcome is unknown until create-succeeded or
    // create-failed replaces it. A resource found later under a pending marker is ours only if
    // ownership is proven (policy/ownership.ts): pending alone proves nothing.
    const aboutToCreate = !observeOnly && !observation.exists;
    // A resource these credentials can give no identity could never be proven ours at its delete:
    // under deletion policy Delete none is made: only the condition is written (no finalizer, no marker).
    const refused = aboutToCreate ? refuseCreate(deletionActionFor(resource, namespace, this.#defaultDeletionPolicy), this.kind, client.identityUnavailable) : undefined;
    if (refused) return await this.#block(resource, call, { reason: Reasons.IdentityUnavailable, message: refused });
    // An earlier create whose outcome is unknown may still land (a call held past its deadline): a
    // refusal of this one then proves nothing about the name, and create-pending stays.
    const earlierCreateUnknown = creationStateOf(resource) === 'pending';
    resource = await this.#ensureManaged(resource, externalName, aboutToCreate, call);

    if (observeOnly) return await this.#report(resource, call, observation, target, externalName);

    if (!observation.exists) {
      resource = await this.#recordProtectionToCreate(resource, call);
      let applied: ApplyResult | void;
      try {
        call.signal.throwIfAborted();
        applied = await client.create(resource, call);
      } catch (error) {
        if (createOutcomeOf(error) === 'refused' && !earlierCreateUnknown) {
          // Definitely refused: nothing of ours is there. Recorded, so no later pass takes what it finds under the name for ours.
          call.stop.throwIfAborted();
          resource = await this.#deps.kube.patch(resource, { annotations: { [Annotations.createFailed]: this.#timestamp(), [Annotations.createPending]: null } }, call.stop);
        }
        return await this.#fail(resource, call, Reasons.CannotCreateExternalResource, error);
      }
      const createdFrom = resource;
      resource = await this.#deps.kube.patch(resource, { annotations: { [Annotations.createSucceeded]: this.#timestamp() } }, call.stop);
      // The patch returns the object as it is now: a spec edited since the create was decided is
      // not what the cloud got, so this pass reports on the spec it created from and stamps that
      // generation; the next pass applies the newer one as the user's ask (protections included).
      const appliedGeneration = createdFrom.metadata.generation;
      if (resource.metadata.generation !== appliedGeneration) resource = { ...resource, spec: createdFrom.spec } as ManagedResource;
      // The identity of what this create made: the one the create reports, else the observe's.
      // Null where neither has one, so the identity of a resource made before under the name (since
      // deleted, or this create would have failed) never stays to make this one look replaced.
      const created = { target: target.cloudTarget, identity: applied?.identity ?? null };
      const createdObject = resource;
      const announce = (ownerTags: Readonly<Record<string, string>> | undefined) =>
        this.#recordWrite(createdObject, call, target, externalName, {
          operation: 'create',
          type: 'Normal',
          reason: Reasons.CreatedExternalResource,
          lead: `Created ${this.kind} "${externalName}" in ${target.provider}`,
          changes: changesOfCreate(createdObject, ownerTags),
        });
      try {
        observation = await client.observe(resource, call);
      } catch (error) {
        // Whether this kind keeps tags is unknown without the observe: the create was given them.
        await announce(ownerTagsFor(resource, this.#clusterId));
        // The identity is recorded even so: a later pass proves the resource ours with it.
        return await this.#fail(resource, call, Reasons.CannotObserveExternalResource, error, created);
      }
      // The Event is written meanwhile with the status, not in the worker's way. An existing
      // resource without ownerTags is a kind the cloud keeps no tags for: none were written.
      const announced = announce(observation.ownerTags === undefined ? undefined : ownerTagsFor(resource, this.#clusterId));
      try {
        // What this observe found may already be another's (ours deleted and the name taken in
        // between): judged as any later pass would, with only what this create made recorded.
        // Where neither tags nor an identity from the create can say so (a cloud without tags for the
        // kind whose create reports nothing), this observe's identity is the evidence to record.
        const judged = created.identity !== null || observation.ownerTags !== undefined;
        const found = judged ? decideOwnership(withIdentity(resource, created.identity), observation, ownerTagsFor(resource, this.#clusterId), externalName) : { ownership: 'ours' as const };
        if (found.ownership === 'unproven' && ownerTagsNotReadYet(resource, observation)) {
          // Not usable yet, its tags unread (a DynamoDB table CREATING): reported as it is. Whose it
          // is, a later pass decides from the tags, so the identity seen now is not recorded.
          const { identity: _unproven, ...seen } = observation;
          return await this.#succeed(resource, call, seen, target, externalName, { applyIssues: applied?.settingIssues, record: true, created, appliedGeneration });
        }
        if (!mayManage(found.ownership)) {
          await this.#setStatus(resource, call, { target: created.target, identity: created.identity });
          const reason = found.ownership === 'replaced' ? Reasons.ExternalResourceReplaced : Reasons.NotOwned;
          return await this.#block(resource, call, { reason, message: found.message ?? Messages.notOwned(externalName) });
        }
        return await this.#succeed(resource, call, observation, target, externalName, { applyIssues: applied?.settingIssues, record: true, created, appliedGeneration });
      } finally {
        await announced;
      }
    }

    const decision = decideOwnership(resource, observation, ownerTagsFor(resource, this.#clusterId), externalName);
    if (decision.ownership === 'unproven' && ownerTagsNotReadYet(resource, observation)) {
      // Created by k8or and not usable yet (tags unread): reported as it is, nothing written, nothing recorded.
      if (creationStateOf(resource) === 'created') {
        const { identity: _unproven, ...seen } = observation;
        return await this.#succeed(resource, call, seen, target, externalName, {});
      }
      const waiting = { status: 'False' as const, reason: Reasons.Creating, message: Messages.ownerTagsNotReadYet(externalName) };
      await this.#setStatus(resource, call, { ready: waiting, synced: waiting });
      return { requeueAfterMs: this.#pollIntervalMs };
    }
    if (!mayManage(decision.ownership)) {
      const reason = decision.ownership === 'replaced' ? Reasons.ExternalResourceReplaced : Reasons.NotOwned;
      return await this.#block(resource, call, { reason, message: decision.message ?? Messages.notOwned(externalName) });
    }
    // Before any takeover is recorded: a resource the cloud cannot bring to the spec is not taken.
    if (observation.immutableDiff && observation.immutableDiff.length > 0) {
      return await this.#block(resource, call, {
        reason: Reasons.ImmutableFieldChanged,
        message: `The cloud cannot change ${describeDiff(observation.immutableDiff)} in place; restore the previous value or create a new resource.`,
      });
    }

    if (!resource.metadata.annotations?.[Annotations.createSucceeded]) {
      const [reason, why] =
        decision.ownership === 'finish-create'
          ? [Reasons.FinishedInterruptedCreate, 'a create with an unknown outcome, under a name k8or generated for this object']
          : decision.ownership === 'adopt'
            ? [Reasons.AdoptedExternalResource, 'k8or.io/adopt is set']
            : [Reasons.RecoveredExternalResource, decision.proof === 'identity' ? 'its identity matches the one recorded at creation' : "carries this object's owner tags"];
      // Guarded: taking over is decided on the missing marker, which a copy that is behind may lack.
      const annotations: Record<string, string | null> = { [Annotations.createSucceeded]: this.#timestamp() };
      if (resource.metadata.annotations?.[Annotations.createFailed]) annotations[Annotations.createFailed] = null;
      resource = await this.#deps.kube.patch(resource, { annotations, guarded: true }, call.stop);
      await this.#event(resource, call, 'Normal', reason, `Took over existing ${this.kind} "${externalName}" in ${target.provider} (${why}).`);
    }

    const diff = observation.diff ?? [];
    const held = this.#heldProtection(resource, observation);
    // Only a resync's drift is the policy's: a new generation is the user asking for the spec. Every
    // setting the provider compares is, spec field or not (a Bigtable column family); k8or's own owner tags are not.
    const policyDrift = isResync(resource)
      ? sortDrift(resource.spec.driftPolicy, diff.filter((d) => !held.includes(d) && !d.field.startsWith('ownerTags.')))
      : { repair: [], report: [], hold: [] };
    const approved = heldDriftApproved(resource, policyDrift.hold);
    const kept = [...policyDrift.report, ...(approved ? [] : policyDrift.hold)];
    // Not written this pass: protections the cloud has on, and drift the policy reports or holds.
    const leftAlone = [...held, ...kept];
    const repairable = diff.filter((d) => !leftAlone.includes(d));
    // Adopting, finishing a create, and an owner proven by identity alone write our owner tags, which is update's job even when the settings match.
    const tagsToWrite = decision.ownership !== 'ours' || (observation.ownerTags !== undefined && decision.proof !== 'owner-tags');
    // A spec field left alone goes to update with the cloud's value in the spec; one that is not a spec field, out of the diff update is given.
    const [leftInSpec, leftOutsideSpec] = [leftAlone.filter((d) => d.field.startsWith('spec.')), leftAlone.filter((d) => !d.field.startsWith('spec.'))];
    const sendable = leftInSpec.every((d) => settableSpecPath(d.field));
    const mustUpdate = sendable && (repairable.length > 0 || (!observation.upToDate && leftAlone.length === 0) || tagsToWrite);
    let applyIssues: SettingIssue[] | undefined;
    if (mustUpdate) {
      try {
        call.signal.throwIfAborted();
        // What is left alone goes to the provider as the cloud has it, so update leaves it be.
        const given = leftInSpec.length > 0 ? withCloudValues(resource, leftInSpec) : resource;
        const seen = leftOutsideSpec.length > 0 ? { ...observation, diff: diff.filter((d) => !leftOutsideSpec.includes(d)) } : observation;
        applyIssues = (await client.update(given, seen, call))?.settingIssues;
      } catch (error) {
        return await this.#fail(resource, call, Reasons.CannotUpdateExternalResource, error);
      }
      const named = `${this.kind} "${externalName}"`;
      if (approved) {
        // An approval is for one repair: the same difference found again later needs a new one.
        resource = await this.#deps.kube.patch(resource, { annotations: { [Annotations.approveDrift]: null } }, call.stop);
        await this.#recordWrite(resource, call, target, externalName, {
          operation: 'update',
          type: 'Normal',
          reason: Reasons.RepairedApprovedDrift,
          lead: `Repaired approved drift in ${named}`,
          changes: changesOfDiff(policyDrift.hold),
        });
      }
      const unapproved = repairable.filter((d) => !(approved && policyDrift.hold.includes(d)));
      if (unapproved.length > 0 || !approved) {
        // Spec unchanged since the last successful reconcile means the cloud moved: drift.
        const drift = unapproved.length > 0 && resource.status?.observedGeneration === resource.metadata.generation;
        await this.#recordWrite(resource, call, target, externalName, {
          operation: 'update',
          type: drift ? 'Warning' : 'Normal',
          reason: drift ? Reasons.RepairedDrift : Reasons.UpdatedExternalResource,
          // No field named: owner tags of a kind without tags, or settings the provider did not list.
          lead: drift ? `Repaired drift in ${named}` : unapproved.length > 0 ? `Updated ${named}` : `Updated ${named} (settings the provider did not name)`,
          changes: changesOfDiff(unapproved),
        });
      }
      try {
        observation = await client.observe(resource, call);
      } catch (error) {
        return await this.#fail(resource, call, Reasons.CannotObserveExternalResource, error);
      }
    }

    const leftModes = new Map<string, LeftAlone>([
      ...held.map((d): [string, LeftAlone] => [d.field, 'Protected']),
      ...policyDrift.report.map((d): [string, LeftAlone] => [d.field, 'Report']),
      ...(approved ? [] : policyDrift.hold).map((d): [string, LeftAlone] => [d.field, 'Hold']),
    ]);
    return await this.#succeed(resource, call, observation, target, externalName, { applyIssues, leftAlone: leftModes, record: true });
  }

  /**
   * What the create is about to apply, on record in `status.appliedProtection` before it is sent:
   * a create whose answer is lost (a crash, a timeout) still leaves on record the spec values it
   * applied, so a later generation that lowers a protection the create turned on is the user's
   * ask (`protectionChangeAsked`), not a guess. Every top-level spec field is recorded (which are
   * protections, only an observe of the resource tells); the first observe after the create
   * replaces the record with the protections it reports.
   */
  async #recordProtectionToCreate(resource: ManagedResource, call: Run): Promise<ManagedResource> {
    const toCreate = appliedProtectionOf(resource, Object.keys(resource.spec ?? {}).map((key) => `spec.${key}`));
    if (isDeepStrictEqual(resource.status?.appliedProtection, toCreate)) return resource;
    call.stop.throwIfAborted();
    // Guarded by the resourceVersion: a copy that is behind gets 409, and no create is sent from it.
    return await this.#deps.kube.writeStatus(resource, { ...resource.status, appliedProtection: toCreate }, call.stop);
  }

  /**
   * The diff entries that must not be repaired because they would lower a protection the cloud
   * has on: an enabled ProtectionSetting whose field is the entry's field or a prefix of it. Only
   * a change of the spec's value at that field since it was last applied is the user asking
   * (`protectionChangeAsked`); a new generation that edits another field asks nothing of it.
   */
  #heldProtection(resource: ManagedResource, observation: Observation): FieldDiff[] {
    const on = (observation.protection ?? []).filter((p) => p.enabled && !protectionChangeAsked(resource, p.field)).map((p) => p.field);
    return (observation.diff ?? []).filter((d) => on.some((field) => d.field === field || d.field.startsWith(`${field}.`) || d.field.startsWith(`${field}[`)));
  }

  /** The condition for an object whose ProviderConfig now resolves to another target than the one recorded at creation, else undefined. */
  #targetMoved(resource: ManagedResource, target: Target): Blocker | undefined {
    const recorded = resource.status?.target;
    if (!recorded || sameCloudTarget(recorded, target.cloudTarget)) return undefined;
    return { reason: Reasons.TargetChanged, message: Messages.targetChanged(describeTarget(recorded), describeTarget(target.cloudTarget)) };
  }

  /**
   * One object per cloud resource: the condition for this object when another that comes first
   * (`claimOrder`: it holds the resource, or is older) names the same cloud resource key, else undefined.
   */
  async #olderClaimant(resource: ManagedResource, target: Target, externalName: string): Promise<Blocker | undefined> {
    const others = this.#deps.kube.withExternalName?.(this.kind, externalName) ?? [];
    const mine = cloudResourceKey(target.cloudTarget, this.kind, externalName);
    for (const other of others.sort(claimOrder)) {
      if (other.metadata.uid === resource.metadata.uid || claimOrder(other, resource) >= 0) continue;
      const otherTarget = await this.#cloudTargetOf(other);
      if (otherTarget && cloudResourceKey(otherTarget, this.kind, externalName) === mine) {
        return { reason: Reasons.DuplicateCloudResource, message: Messages.duplicate(this.kind, `${other.metadata.namespace}/${other.metadata.name}`, externalName) };
      }
    }
    return undefined;
  }

  /** Another object's target: the one recorded in its status, else where its ProviderConfig points now. */
  async #cloudTargetOf(other: ManagedResource): Promise<CloudTarget | undefined> {
    if (other.status?.target) return other.status.target;
    const resolved = await this.#resolveTarget(other, await this.#deps.lookups.namespace(other.metadata.namespace ?? ''));
    return 'reason' in resolved ? undefined : resolved.cloudTarget;
  }

  // ---- deletion ----------------------------------------------------------

  async #finalize(resource: ManagedResource, namespace: NamespaceInfo | undefined, call: Run): Promise<ReconcileOutcome> {
    if (!resource.metadata.finalizers?.includes(FINALIZER)) return {};
    const observeOnly = resource.spec.managementPolicy === 'ObserveOnly';
    const policy = deletionActionFor(resource, namespace, this.#defaultDeletionPolicy);
    const externalName = resource.spec.name ?? resource.metadata.annotations?.[Annotations.externalName] ?? '';

    if (policy === 'Retain') return await this.#retain(resource, namespace, call, observeOnly, externalName);
    const state = creationStateOf(resource);
    // No create was ever sent (no marker: an object that never got past its checks, a duplicate
    // of an older one), or the only create was definitely refused: nothing of ours is in the
    // cloud, whatever is under the name is someone else's, and the object goes without a cloud call.
    if ((state === 'never' || state === 'failed') && !resource.status?.identity) return await this.#release(resource, call);

    const target = await this.#resolveTarget(resource, namespace);
    if ('reason' in target) return await this.#block(resource, call, target);
    // Deleting at another target would delete another resource, or none while ours stays.
    const moved = this.#targetMoved(resource, target);
    if (moved) return await this.#block(resource, call, { reason: moved.reason, message: `${moved.message} Or set the deletion policy Retain to let the object go and leave the resource.` });
    const name = this.#externalName(resource, target);

    let client: ExternalClient;
    let presence: Presence;
    try {
      client = await this.#connect(resource, target, name, call);
    } catch (error) {
      return await this.#fail(resource, call, Reasons.CannotConnectToProvider, error);
    }
    try {
      presence = await this.#presence(client, resource, call);
    } catch (error) {
      if (error instanceof NotOwnedError) return await this.#leaveForeign(resource, call, name, error.message);
      // A 403 or a timeout is not absence: the finalizer stays until the cloud answers.
      return await this.#fail(resource, call, Reasons.CannotObserveExternalResource, error);
    }
    if (!presence.exists) {
      // Gone since an earlier pass asked for the delete (the cloud finished it later): that delete is ours to announce.
      if (resource.status?.conditions?.some((c) => c.type === ConditionTypes.Ready && c.reason === Reasons.Deleting)) {
        await this.#announceDeleted(resource, call, name, target);
      }
      return await this.#release(resource, call);
    }

    // Only what evidence proves ours is deleted; an adoption asked for but never recorded is not
    // proof, and neither is k8or's record of its own create alone.
    const verdict = decideDeletion(decideOwnership(resource, presence, ownerTagsFor(resource, this.#clusterId), name), this.kind, name);
    if (verdict.action === 'leave') return await this.#leaveForeign(resource, call, name, verdict.message);
    if (verdict.action === 'block') return await this.#deletionBlocked(resource, call, verdict.message);

    // A delete never removes a protection: a resource protected from deletion stays, and says why.
    const protectedBy = (presence.protection ?? []).filter((p) => p.enabled && p.blocksDeletion).map((p) => p.field);
    if (protectedBy.length > 0) return await this.#deletionBlocked(resource, call, Messages.protectedFromDeletion(protectedBy.join(', ')));

    try {
      call.signal.throwIfAborted();
      await client.delete(resource, call);
    } catch (error) {
      if (error instanceof DeletionBlockedError) return await this.#deletionBlocked(resource, call, error.message);
      return await this.#fail(resource, call, Reasons.CannotDeleteExternalResource, error);
    }

    // Both reads are needed: the first decides whose the resource is before anything is deleted;
    // this one is the fresh "gone" the finalizer waits for, since a delete that returned was only
    // accepted (DynamoDB and Bigtable finish later). The object itself is not read again: the
    // release below is guarded by the resourceVersion this pass decided on.
    try {
      presence = await this.#presence(client, resource, call);
    } catch (error) {
      return await this.#fail(resource, call, Reasons.CannotObserveExternalResource, error);
    }
    if (presence.exists) {
      await this.#setStatus(resource, call, {
        ready: { status: 'False', reason: Reasons.Deleting, message: `Deleting ${this.kind} "${name}".` },
        synced: { status: 'True', reason: Reasons.ReconcileSuccess, message: 'Delete requested.' },
      });
      return { requeueAfterMs: this.#pollIntervalMs };
    }
    await this.#announceDeleted(resource, call, name, target);
    return await this.#release(resource, call);
  }

  async #deletionBlocked(resource: ManagedResource, call: Run, detail: string): Promise<ReconcileOutcome> {
    const blocked = { status: 'False' as const, reason: Reasons.DeletionBlocked, message: Messages.deletionBlocked(detail) };
    await this.#setStatus(resource, call, { ready: blocked, synced: blocked }, { type: 'Warning', reason: blocked.reason, message: blocked.message });
    return { requeueAfterMs: this.#deletionBlockedRetryMs };
  }

  /**
   * Deletion policy Retain: the cloud resource stays, and k8or lets go of it. For a managed
   * resource proven ours, the provider's `release` removes our owner tags so another cluster or
   * object can adopt it; nothing else in the cloud is touched. Where that cannot be done (the
   * ProviderConfig is gone or moved, the provider has no `release`, the cloud refuses), the object
   * still goes: Retain never holds a finalizer for a terminal reason. A retryable failure is
   * retried.
   */
  async #retain(resource: ManagedResource, namespace: NamespaceInfo | undefined, call: Run, observeOnly: boolean, externalName: string): Promise<ReconcileOutcome> {
    let released: { target: Target; changes: FieldChange[] } | undefined;
    const state = creationStateOf(resource);
    if (!observeOnly && externalName && (state === 'created' || state === 'pending')) {
      const target = await this.#resolveTarget(resource, namespace);
      if (!('reason' in target) && !this.#targetMoved(resource, target)) {
        try {
          const client = await this.#connect(resource, target, externalName, call);
          if (client.release) {
            const presence = await this.#presence(client, resource, call);
            const ours = ownerTagsFor(resource, this.#clusterId);
            const decision = presence.exists ? decideOwnership(resource, presence, ours, externalName) : undefined;
            if (decision?.ownership === 'ours' || decision?.ownership === 'finish-create') {
              call.signal.throwIfAborted();
              await client.release(resource, call);
              released = { target, changes: changesOfRelease(presence.ownerTags, ours) };
            }
          }
        } catch (error) {
          if (isRetryable(error)) return await this.#fail(resource, call, Reasons.CannotDeleteExternalResource, error);
          this.#logger?.warn({ resource: `${this.kind}/${resource.metadata.namespace}/${resource.metadata.name}`, err: errorMessage(error) }, 'could not release ownership on Retain');
        }
      }
    }
    const why = observeOnly ? 'managementPolicy ObserveOnly' : 'deletion policy Retain';
    const left = `Left ${this.kind} "${externalName}" in the cloud (${why})`;
    if (released) {
      await this.#recordWrite(resource, call, released.target, externalName, {
        operation: 'release',
        type: 'Normal',
        reason: Reasons.RetainedExternalResource,
        lead: `${left}; removed this object's owner tags so it can be adopted`,
        changes: released.changes,
      });
    } else {
      await this.#event(resource, call, 'Normal', Reasons.RetainedExternalResource, `${left}.`);
    }
    return await this.#release(resource, call);
  }

  /**
   * Existence and owner tags, all the delete path needs: the provider's `probe` where it has one (a
   * few calls instead of every setting's read), else `observe`. Errors pass through unchanged.
   */
  async #presence(client: ExternalClient, resource: ManagedResource, call: Run): Promise<Presence> {
    return client.probe ? await client.probe(resource, call) : await client.observe(resource, call);
  }

  /** The delete's record, once the cloud confirms the resource gone (a delete may finish after the call returned). */
  async #announceDeleted(resource: ManagedResource, call: Run, name: string, target: Target): Promise<void> {
    await this.#recordWrite(resource, call, target, name, {
      operation: 'delete',
      type: 'Normal',
      reason: Reasons.DeletedExternalResource,
      lead: `Deleted ${this.kind} "${name}" in ${target.provider}`,
      changes: [],
    });
  }

  /** Never delete what is not ours: the object goes, the cloud resource stays. */
  async #leaveForeign(resource: ManagedResource, call: Run, name: string, why?: string): Promise<ReconcileOutcome> {
    await this.#event(resource, call, 'Warning', Reasons.NotOwned, `Left ${this.kind} "${name}" in the cloud: it is not owned by this object.${why ? ` ${why}` : ''}`);
    return await this.#release(resource, call);
  }

  /** Removes the outputs ConfigMap and then the finalizer: the object may go. */
  async #release(resource: ManagedResource, call: Run): Promise<ReconcileOutcome> {
    call.stop.throwIfAborted();
    const outputs = resource.spec.writeOutputsTo?.name;
    if (outputs) await this.#deps.outputs.remove(resource, outputs, call.stop);
    const finalizers = (resource.metadata.finalizers ?? []).filter((f) => f !== FINALIZER);
    await this.#deps.kube.patch(resource, { finalizers }, call.stop);
    return {};
  }

  // ---- steps -------------------------------------------------------------

  /** ProviderConfig (spec, namespace annotation, `default`), its provider plugin, connector, naming rules and settings, and credentials. */
  async #resolveTarget(resource: ManagedResource, namespace: NamespaceInfo | undefined): Promise<Target | Blocker> {
    const configName = providerConfigFor(resource, namespace).name;
    const providerConfig = await this.#deps.lookups.providerConfig(configName);
    if (!providerConfig) return { reason: Reasons.ProviderConfigNotFound, message: Messages.providerConfigNotFound(configName) };
    const provider = providerConfig.spec.provider;
    const plugin = this.#deps.providers.get(provider);
    if (!plugin) return { reason: Reasons.ProviderNotInstalled, message: Messages.providerNotInstalled(provider) };
    // The connectors are typed per kind; the engine holds the kind's resources as the union.
    const connector = plugin.connectors[this.kind] as Connector | undefined;
    if (!connector) return { reason: Reasons.KindNotSupported, message: Messages.kindNotSupported(provider, this.kind) };
    const invalidSettings = [...providerSettingsViolations(plugin, providerConfig), ...rateLimitViolations(plugin, providerConfig), ...driftCheckBudgetViolations(plugin, providerConfig)];
    if (invalidSettings.length > 0) {
      return { reason: Reasons.InvalidProviderSettings, message: Messages.invalidSettings(configName, formatViolations(invalidSettings).replace(/\n/g, '; ')) };
    }
    let credentials: SecretData | undefined;
    const credentialsSpec = providerConfig.spec.credentials;
    if (credentialsSpec?.source === 'Secret') {
      const ref = credentialsSpec.secretRef;
      credentials = ref ? await this.#deps.lookups.secret(ref.namespace, ref.name) : undefined;
      if (!credentials) return { reason: Reasons.CredentialsSecretNotFound, message: Messages.secretNotFound(ref?.namespace ?? '', ref?.name ?? '') };
    }
    const cloudTarget = cloudTargetFor(plugin, this.kind, providerConfig, credentials);
    return { provider, providerConfig, credentials, connector, naming: namingRulesFor(plugin, this.kind), plugin, cloudTarget };
  }

  #externalName(resource: ManagedResource, target: Target): string {
    // The object always has a namespace and a name here (it was read from the API server).
    return externalNameFor(resource, target.naming, this.#clusterId) ?? '';
  }

  /** One patch for whatever is missing of: finalizer, spec.name, external-name annotation, and (about to create) the create-pending marker. */
  async #ensureManaged(resource: ManagedResource, externalName: string, aboutToCreate: boolean, call: Run): Promise<ManagedResource> {
    const meta = resource.metadata;
    const patch: ManagedPatch = {};
    const annotations: Record<string, string | null> = {};
    if (!meta.finalizers?.includes(FINALIZER)) patch.finalizers = [...(meta.finalizers ?? []), FINALIZER];
    if (resource.spec.name !== externalName) patch.specName = externalName;
    if (meta.annotations?.[Annotations.externalName] !== externalName) annotations[Annotations.externalName] = externalName;
    if (aboutToCreate && !meta.annotations?.[Annotations.createPending]) annotations[Annotations.createPending] = this.#timestamp();
    // A new create is about to be sent: the last refusal no longer describes it.
    if (aboutToCreate && meta.annotations?.[Annotations.createFailed]) annotations[Annotations.createFailed] = null;
    if (Object.keys(annotations).length > 0) patch.annotations = annotations;
    if (Object.keys(patch).length === 0) return resource;
    call.stop.throwIfAborted();
    // Guarded: the create-pending marker says "the name was free when we looked", so it is
    // written only on the object as read; a copy that is behind gets 409, never a create.
    patch.guarded = true;
    return await this.#deps.kube.patch(resource, patch, call.stop);
  }

  async #connect(resource: ManagedResource, target: Target, externalName: string, call: Run): Promise<ExternalClient> {
    return await target.connector.connect(resource, {
      providerConfig: target.providerConfig,
      credentials: target.credentials,
      externalName,
      ownerTags: ownerTagsFor(resource, this.#clusterId),
      recordCall: this.#recorder(target, call),
    });
  }

  #admitDriftCheck(target: Target): DriftCheckAdmission | undefined {
    if (!this.#driftCheckGate) return undefined;
    return this.#driftCheckGate.admit(target.provider, target.providerConfig.metadata.name ?? '', checkCallsOf(target.plugin, this.kind));
  }

  /**
   * Metrics around each call, and outside them (so a call's duration excludes its wait) the
   * ProviderConfig's rate limit, whose waits stop the reconcile's deadline (ReconcileDeadline).
   */
  #recorder(target: Target, call: Run): CloudCallRecorder {
    const metered = this.#cloudCallRecorder(target.provider);
    const counted = this.#driftCheckCall;
    const configName = target.providerConfig.metadata.name ?? '';
    const record: CloudCallRecorder = counted
      ? async (operation, run, options) => {
          if (call.driftCheck) counted(target.provider, configName);
          return await metered(operation, run, options);
        }
      : metered;
    return this.#cloudRateLimits ? this.#cloudRateLimits.recorder(target.plugin, target.providerConfig, record, call.pauseDeadline, () => (call.driftCheck ? 'background' : 'change')) : record;
  }

  /**
   * The cloud as the last observe found it, after this pass's create or update (or none
   * needed): Ready from the observation, Synced True only when that observe shows no
   * difference from the spec. Otherwise Synced False: settings a provider could not apply or
   * read (SettingsNotApplied), a change the cloud does not show yet (ChangesPending, looked at
   * again within `pollIntervalMs`), a protection held (ProtectionHeld). With `record`, the
   * target and the cloud's identity of the resource go into status (proof of ownership later).
   */
  async #succeed(
    resource: ManagedResource,
    call: Run,
    observation: Observation,
    target: Target,
    externalName: string,
    options: {
      applyIssues?: readonly SettingIssue[] | undefined;
      leftAlone?: ReadonlyMap<string, LeftAlone>;
      record?: boolean;
      /** The generation whose spec the cloud was brought in line with, where the object has moved on since. */
      appliedGeneration?: number | undefined;
      /** This pass created the resource: what the create reported of it (status.identity replaced, not kept). */
      created?: { identity: ResourceIdentity | null };
    },
  ): Promise<ReconcileOutcome> {
    const outputsProblem = await this.#publishOutputs(resource, call, observation, target, externalName);
    const issues = distinctIssues([...(options.applyIssues ?? []), ...(observation.settingIssues ?? [])]);
    const leftAlone = options.leftAlone ?? new Map<string, LeftAlone>();
    const diff = observation.diff ?? [];
    const left = (mode: LeftAlone) => diff.filter((d) => leftAlone.get(d.field) === mode);
    const [held, reported, holding] = [left('Protected'), left('Report'), left('Hold')];
    const pending = diff.filter((d) => !leftAlone.has(d.field));
    const converging = pending.length > 0 || (!observation.upToDate && pending.length === diff.length);
    const digest = holding.length > 0 ? driftDigest(holding) : null;
    let problem: ConditionState | undefined;
    if (issues.length > 0) problem = { status: 'False', reason: Reasons.SettingsNotApplied, message: Messages.settingsNotApplied(describeIssues(issues)) };
    else if (converging) {
      const fields = pending.length > 0 ? describeDiff(pending) : 'settings the provider did not name';
      problem = { status: 'False', reason: Reasons.ChangesPending, message: Messages.changesPending(fields, Math.max(1, Math.round(this.#pollIntervalMs / 1000))) };
    } else if (held.length > 0) problem = { status: 'False', reason: Reasons.ProtectionHeld, message: Messages.protectionHeld(describeDiff(held)) };
    else if (digest) {
      problem = { status: 'False', reason: Reasons.DriftHeld, message: Messages.driftHeld(describeDiff(holding), this.kind, resource.metadata.name ?? '', digest) };
    } else if (reported.length > 0) problem = { status: 'False', reason: Reasons.DriftReported, message: Messages.driftReported(describeDiff(reported)) };
    else problem = outputsProblem;
    await this.#setStatus(
      resource,
      call,
      {
        ready: readyCondition(observation),
        synced: problem ?? { status: 'True', reason: Reasons.ReconcileSuccess, message: 'The cloud resource matches the spec.' },
        atProvider: observation,
        provider: target.provider,
        drift: [...pending.map((d) => driftEntry(d)), ...[...held, ...reported, ...holding].map((d) => driftEntry(d, leftAlone.get(d.field)))],
        heldDriftDigest: digest,
        driftCheckInterval: this.#resyncPeriod(resource),
        appliedSpecDigest: specDigest(resource.spec as unknown as Record<string, unknown>),
        appliedProtection: appliedProtectionOf(resource, (observation.protection ?? []).map((p) => p.field)),
        ...(options.appliedGeneration !== undefined ? { generation: options.appliedGeneration } : {}),
        ...(options.record ? { target: target.cloudTarget, ...this.#identityToRecord(observation, options.created) } : {}),
      },
      // A change still on its way is no warning: it is looked at again within seconds.
      problem && problem.reason !== Reasons.ChangesPending ? { type: 'Warning', ...problem } : undefined,
    );
    await this.#announceInterval(resource, call);
    if (converging || !observation.ready) return { requeueAfterMs: this.#pollIntervalMs };
    return this.#resync(resource);
  }

  /** The identity change for status: the one found, else (just created) the create's, or its removal; else unchanged. */
  #identityToRecord(observation: Observation, created: { identity: ResourceIdentity | null } | undefined): { identity?: ResourceIdentity | null } {
    if (observation.identity) return { identity: observation.identity };
    return created ? { identity: created.identity } : {};
  }

  /** ObserveOnly: read and report (conditions, Events and status.drift), never write to the cloud. */
  async #report(resource: ManagedResource, call: Run, observation: Observation, target: Target, externalName: string): Promise<ReconcileOutcome> {
    if (!observation.exists) {
      const message = `ObserveOnly: no ${this.kind} named "${externalName}" exists in ${target.provider}; k8or will not create it.`;
      await this.#setStatus(resource, call, {
        ready: { status: 'False', reason: Reasons.ExternalResourceNotFound, message },
        synced: { status: 'True', reason: Reasons.Observed, message },
        provider: target.provider,
        drift: [],
        heldDriftDigest: null,
        driftCheckInterval: this.#resyncPeriod(resource),
      });
      await this.#announceInterval(resource, call);
      return this.#resync(resource);
    }
    const outputsProblem = await this.#publishOutputs(resource, call, observation, target, externalName);
    // Owner tags are k8or's business, not the spec's: an imported resource lacks them by design.
    const drift = [...(observation.diff ?? []), ...(observation.immutableDiff ?? [])].filter((d) => !d.field.startsWith('ownerTags'));
    const issues = observation.settingIssues ?? [];
    const synced: ConditionState =
      drift.length > 0
        ? { status: 'False', reason: Reasons.DriftDetected, message: `ObserveOnly: the cloud differs from the spec in ${describeDiff(drift)}; k8or will not change it.` }
        : issues.length > 0
          ? { status: 'False', reason: Reasons.SettingsNotApplied, message: `ObserveOnly: these settings could not be read: ${describeIssues(issues)}` }
          : (outputsProblem ?? { status: 'True', reason: Reasons.Observed, message: 'ObserveOnly: the cloud resource matches the spec.' });
    await this.#setStatus(
      resource,
      call,
      {
        ready: readyCondition(observation),
        synced,
        atProvider: observation,
        provider: target.provider,
        drift: drift.map((d) => driftEntry(d)),
        heldDriftDigest: null,
        driftCheckInterval: this.#resyncPeriod(resource),
      },
      synced.status === 'False' ? { type: 'Warning', reason: synced.reason, message: synced.message } : undefined,
    );
    await this.#announceInterval(resource, call);
    return this.#resync(resource);
  }

  /** Writes the outputs ConfigMap when asked for; a problem to show in Synced, or undefined. */
  async #publishOutputs(resource: ManagedResource, call: Run, observation: Observation, target: Target, externalName: string): Promise<ConditionState | undefined> {
    const configMap = resource.spec.writeOutputsTo?.name;
    if (!configMap) return undefined;
    call.stop.throwIfAborted();
    const at = observation.atProvider ?? {};
    const location = at.location ?? ('location' in resource.spec ? resource.spec.location : undefined);
    const result = await this.#deps.outputs.publish(resource, configMap, {
      externalName,
      provider: target.provider,
      ...(location ? { location } : {}),
      ...(at.url ? { url: at.url } : {}),
      ...(at.id ? { id: at.id } : {}),
    }, call.stop);
    if (result !== 'foreign') return undefined;
    return {
      status: 'False',
      reason: Reasons.CannotWriteOutputs,
      message: `ConfigMap "${configMap}" exists and is not owned by this object; choose another spec.writeOutputsTo.name.`,
    };
  }

  /**
   * A stop state the user resolves: Synced False with the reason, a Warning
   * Event, and no retry before the resync. Ready turns False with the same
   * reason, unless the cloud resource is known to be available (a blocker on
   * a working resource leaves it working).
   */
  async #block(resource: ManagedResource, call: Run, blocker: Blocker): Promise<ReconcileOutcome> {
    const state: ConditionState = { status: 'False', ...blocker };
    await this.#setStatus(resource, call, { ready: this.#readyAfterFailure(resource, state), synced: state }, { type: 'Warning', ...blocker });
    return this.#resync(resource);
  }

  /**
   * A failed call: Synced False with the error, and Ready False with it unless
   * the resource was available (so `kubectl wait --for=condition=Ready` ends
   * with the reason rather than hanging). Retryable errors back off; terminal
   * ones wait for the resync or a change.
   */
  async #fail(resource: ManagedResource, call: Run, failedStep: string, error: unknown, created?: { target: CloudTarget; identity: ResourceIdentity | null }): Promise<ReconcileOutcome> {
    // A name taken by someone else is one reason whichever call found it, so users can grep for it.
    const reason = error instanceof NotOwnedError ? Reasons.NotOwned : failedStep;
    const message = errorMessage(error);
    this.#logger?.warn({ resource: `${this.kind}/${resource.metadata.namespace}/${resource.metadata.name}`, reason, err: message }, 'reconcile failed');
    // Stopped or lost leadership: write nothing more, another worker (or leader) takes over.
    call.stop.throwIfAborted();
    const state: ConditionState = { status: 'False', reason, message };
    const retrying = isRetryable(error);
    await this.#setStatus(resource, call, { ready: this.#readyAfterFailure(resource, state), synced: state, retrying, ...created }, { type: 'Warning', reason, message, always: true });
    if (error instanceof RetryableError && error.retryAfterMs !== undefined) return { requeueAfterMs: error.retryAfterMs };
    return retrying ? { backoff: true } : this.#resync(resource);
  }

  /** Ready after a failure: unchanged while the resource is known to be available, else False with the failure's reason. */
  #readyAfterFailure(resource: ManagedResource, failure: ConditionState): ConditionState | undefined {
    const ready = resource.status?.conditions?.find((c) => c.type === ConditionTypes.Ready);
    return ready?.status === 'True' ? undefined : failure;
  }

  /** The next drift check at the resource's slot (policy/drift-schedule.ts). */
  #resync(resource: ManagedResource): ReconcileOutcome {
    return { requeueAfterMs: delayAfterCheck(resource.metadata.uid ?? '', this.checkIntervalMs(resource), this.#now().getTime()), driftCheck: true };
  }

  /** The drift-check interval in force for the resource. */
  checkIntervalMs(resource: ManagedResource): number {
    return this.#interval(resource).intervalMs;
  }

  #interval(resource: ManagedResource): DriftCheckInterval {
    if (this.#driftCheckInterval) return this.#driftCheckInterval(this.kind, resource);
    const asked = resyncPeriodFor(resource, this.#resyncPeriodMs, this.#resyncFloorMs);
    return { intervalMs: asked, askedMs: asked };
  }

  /** The drift-check interval in force for the resource, as status shows it. */
  #resyncPeriod(resource: ManagedResource): string {
    return formatGoDuration(this.checkIntervalMs(resource));
  }

  /**
   * An Event when the budget starts lengthening the interval status shows: the user asked for more
   * checks than the ProviderConfig's drift-check budget allows. Once, not at every later change of
   * the lengthened interval (it moves as resources come and go), which status shows.
   */
  async #announceInterval(before: ManagedResource, call: Run): Promise<void> {
    const interval = this.#interval(before);
    const plan = interval.lengthenedBy;
    const shown = formatGoDuration(interval.intervalMs);
    const previous = before.status?.driftCheckInterval !== undefined ? parseGoDuration(before.status.driftCheckInterval) : undefined;
    if (!plan || (previous !== undefined && previous > interval.askedMs)) return;
    const field = `spec.driftCheckBudget.${plan.budgetSource ?? 'callsPerHour'}`;
    const budget = `${Math.round(plan.budgetCallsPerHour ?? 0)} calls an hour (${plan.budgetShare < 1 ? `this shard's 1/${Math.round(1 / plan.budgetShare)} of ${field}` : field})`;
    await this.#event(before, call, 'Normal', Reasons.DriftCheckIntervalLengthened, Messages.driftCheckIntervalLengthened(this.kind, shown, formatGoDuration(interval.askedMs), plan.providerConfig, budget, plan.resources, plan.budgetShare < 1));
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
    call: Run,
    change: {
      ready?: ConditionState | undefined;
      synced?: ConditionState;
      atProvider?: Observation;
      provider?: string;
      drift?: readonly DriftEntry[];
      /** The digest of drift held for approval; null: nothing held. */
      heldDriftDigest?: string | null;
      /** The drift-check period in force, as a Go duration. */
      driftCheckInterval?: string;
      appliedSpecDigest?: string;
      appliedProtection?: Record<string, string>;
      target?: CloudTarget;
      /** Null: remove the recorded identity. */
      identity?: ResourceIdentity | null;
      /** The pass ended on a failed call that is retried: Reconciling rather than Stalled. */
      retrying?: boolean;
      /** The generation this status speaks for, when not the object's current one (a spec edited during the create). */
      generation?: number | undefined;
    },
    event?: { type: EventType; reason: string; message: string; always?: boolean },
  ): Promise<void> {
    let current = resource;
    let changed = false;
    for (let attempt = 1; ; attempt++) {
      const generation = change.generation ?? current.metadata.generation;
      const desired: DesiredCondition[] = [];
      if (change.ready) desired.push({ type: ConditionTypes.Ready, ...change.ready });
      if (change.synced) desired.push({ type: ConditionTypes.Synced, ...change.synced });
      let conditions = mergeConditions(current.status?.conditions, desired, generation, this.#timestamp());
      if (change.synced) {
        const progress = progressConditions({
          ready: conditions.find((c) => c.type === ConditionTypes.Ready),
          synced: change.synced,
          deleting: Boolean(current.metadata.deletionTimestamp),
          retrying: change.retrying ?? false,
        });
        conditions = mergeConditions(withoutConditions(conditions, progress.remove), progress.set, generation, this.#timestamp());
      }
      const next: ManagedStatus = { ...current.status, conditions };
      // Top-level observedGeneration says which spec the cloud was last brought in line with.
      if (change.atProvider || change.provider) next.observedGeneration = generation;
      if (change.provider) next.provider = change.provider;
      if (change.atProvider?.atProvider) next.atProvider = change.atProvider.atProvider;
      if (change.drift) {
        if (change.drift.length > 0) next.drift = [...change.drift];
        else delete next.drift;
        next.driftCount = change.drift.length;
      }
      if (change.heldDriftDigest) next.heldDriftDigest = change.heldDriftDigest;
      else if (change.heldDriftDigest === null) delete next.heldDriftDigest;
      if (change.driftCheckInterval) next.driftCheckInterval = change.driftCheckInterval;
      if (change.appliedSpecDigest) next.appliedSpecDigest = change.appliedSpecDigest;
      if (change.appliedProtection && Object.keys(change.appliedProtection).length > 0) next.appliedProtection = change.appliedProtection;
      const requested = current.metadata.annotations?.[Annotations.reconcileRequestedAt];
      if (requested !== undefined) next.lastHandledReconcileAt = requested;
      if (change.target) next.target = { ...change.target };
      if (change.identity) next.identity = { ...change.identity };
      else if (change.identity === null) delete next.identity;
      if (statusEqual(current.status, next)) break;
      call.stop.throwIfAborted();
      try {
        await this.#deps.kube.writeStatus(current, next, call.stop);
        changed = true;
        break;
      } catch (error) {
        if (!isConflict(error) || attempt >= MAX_STATUS_ATTEMPTS) throw error;
        const fresh = await this.#deps.kube.get(this.kind, current.metadata.namespace ?? '', current.metadata.name ?? '', call.stop);
        if (!fresh || fresh.metadata.uid !== current.metadata.uid) return;
        // The spec changed meanwhile: this status was decided on the old one and must not be
        // stamped with the new generation. The pass ends (409: reconcile again) and the next
        // one decides on the new spec.
        if (fresh.metadata.generation !== current.metadata.generation) throw error;
        current = fresh;
      }
    }
    if (event && (changed || event.always)) await this.#event(resource, call, event.type, event.reason, event.message);
  }

  /**
   * Puts one cloud write on record (write-record.ts): a structured log line with every change
   * whole, and an Event with the same changes, short. Credential values of the target's Secret,
   * URL query strings and values under sensitive keys are redacted from both.
   */
  async #recordWrite(
    resource: ManagedResource,
    call: Run,
    target: Target,
    externalName: string,
    write: { operation: CloudWriteOperation; type: EventType; reason: string; lead: string; changes: readonly FieldChange[] },
  ): Promise<void> {
    const changes = redactChanges(write.changes, secretNeedles(Object.values(target.credentials ?? {})));
    const record: CloudWriteRecord = {
      object: `${resource.metadata.namespace ?? ''}/${resource.metadata.name ?? ''}`,
      kind: this.kind,
      provider: target.provider,
      providerConfig: target.providerConfig.metadata.name ?? '',
      externalName,
      operation: write.operation,
      reason: write.reason,
      changes,
    };
    this.#logger?.info(record, CLOUD_WRITE_MESSAGE);
    await this.#event(resource, call, write.type, write.reason, writeEventMessage(write.lead, changes));
  }

  async #event(resource: ManagedResource, call: Run, type: EventType, reason: string, message: string): Promise<void> {
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
      // Like every API write, an Event follows the engine's stop (a lost Lease), not the cloud calls' deadline: the Event that explains a deadline must still be written.
      call.stop,
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

/** A diff entry as status.drift shows it: field, the values where set, and what k8or does with it. */
function driftEntry(diff: FieldDiff, mode?: DriftEntry['mode']): DriftEntry {
  return {
    field: diff.field,
    ...(diff.desired !== undefined ? { desired: diff.desired } : {}),
    ...(diff.actual !== undefined ? { actual: diff.actual } : {}),
    ...(mode ? { mode } : {}),
  };
}

/** Why a difference is not written this pass: a protection held, or the drift policy. */
type LeftAlone = 'Protected' | 'Report' | 'Hold';


/** `spec.versioning (wanted true, found false), spec.labels.team (...)`: what the user reads in events and conditions. */
export function describeDiff(diff: readonly FieldDiff[]): string {
  if (diff.length === 0) return 'no fields';
  return diff.map((d) => `${d.field} (wanted ${JSON.stringify(d.desired) ?? 'unset'}, found ${JSON.stringify(d.actual) ?? 'unset'})`).join(', ');
}

/**
 * One issue per field and problem: the write and the observe right after it
 * often report the same setting, and the user should read it once.
 */
export function distinctIssues(issues: readonly SettingIssue[]): SettingIssue[] {
  const seen = new Map<string, SettingIssue>();
  for (const issue of issues) {
    const key = `${issue.problem}\u0000${issue.field}`;
    if (!seen.has(key)) seen.set(key, issue);
  }
  return [...seen.values()];
}

/** `spec.pointInTimeRecovery (not applied: ...)`, one per setting. */
export function describeIssues(issues: readonly SettingIssue[]): string {
  return issues.map((i) => `${i.field} (${i.problem === 'unapplied' ? 'not applied' : 'cannot be read'}: ${i.message})`).join(', ');
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/** A copy of the resource with `identity` as its recorded one (none for null). */
function withIdentity(resource: ManagedResource, identity: ResourceIdentity | null): ManagedResource {
  const { identity: _recorded, ...status } = resource.status ?? {};
  return { ...resource, status: identity ? { ...status, identity: { ...identity } } : status } as ManagedResource;
}

/** Older first: creationTimestamp, then uid (the engine's one-object-per-cloud-resource rule). */

/** `aws region=eu-west-1 endpoint=...`: a target as a user reads it (never holds credentials). */
function describeTarget(target: Readonly<Record<string, string>>): string {
  const parts = Object.entries(target)
    .filter(([key, value]) => key !== 'provider' && value !== '')
    .map(([key, value]) => `${key}=${value}`);
  return `${target.provider ?? 'the cloud'} (${parts.join(', ') || 'defaults'})`;
}

/** A plain `spec.a.b` path, which a copy of the spec can take a value at. */
function settableSpecPath(field: string): boolean {
  return /^spec(\.[A-Za-z_$][\w$]*)+$/.test(field);
}

/** A copy of the resource whose spec holds the cloud's value at each held field (FieldDiff.actual is in the spec's shape). */
function withCloudValues(resource: ManagedResource, held: readonly FieldDiff[]): ManagedResource {
  const copy = structuredClone(resource);
  for (const d of held) {
    const path = d.field.split('.').slice(1);
    let node = copy.spec as Record<string, unknown>;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    const last = path[path.length - 1] ?? '';
    if (d.actual === undefined) delete node[last];
    else node[last] = structuredClone(d.actual);
  }
  return copy;
}
