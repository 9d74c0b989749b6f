import { Annotations, ConditionTypes, FINALIZER, type ManagedKindName, type ManagedResource, type ProviderConfig, type Violation } from '@k8or/api';
import type { ProviderPlugin } from '../provider/contract.js';
import { sha256Prefix48 } from '../util/sha256-prefix.js';
import { effectiveRateLimits, rateLimitViolations } from './rate-limits.js';
import { annotationIsTrue, field, isPlainObject } from './read.js';

/**
 * When each resource is checked for drift. Every check of a resource falls on
 * its slot: the instants `phase + k × interval` on the wall clock, where the
 * phase is a fixed fraction of the interval taken from the object's uid. The
 * slots of many resources are spread evenly over the interval, so checks never
 * come in bursts, and a restarted (or newly elected) operator finds every
 * resource's schedule where the last one left it, without writing anything.
 */

/** The phase of a uid, a fraction in [0, 1): the first 48 bits of its SHA-256. */
export function phaseFraction(uid: string): number {
  return sha256Prefix48(uid) / 2 ** 48;
}

/** The first slot of `uid` strictly after `nowMs` (epoch milliseconds) for checks every `intervalMs`. */
export function nextCheckAt(uid: string, intervalMs: number, nowMs: number): number {
  const offset = Math.floor(phaseFraction(uid) * intervalMs);
  return (Math.floor((nowMs - offset) / intervalMs) + 1) * intervalMs + offset;
}

/** Milliseconds from `nowMs` to the resource's next slot: in (0, intervalMs]. */
export function delayUntilNextCheck(uid: string, intervalMs: number, nowMs: number): number {
  return nextCheckAt(uid, intervalMs, nowMs) - nowMs;
}

/**
 * Milliseconds from a check made at `nowMs` to the resource's next slot, skipping a slot less
 * than a grace ahead (a second, or a tenth of a short interval): the work queue's timers run on
 * the process clock, and one that fires a hair before the slot by the wall clock must not be
 * followed by a second check at that very slot.
 */
export function delayAfterCheck(uid: string, intervalMs: number, nowMs: number): number {
  return nextCheckAt(uid, intervalMs, nowMs + Math.min(1_000, intervalMs / 10)) - nowMs;
}

/**
 * How far from its slot a drift check the budget's minute deferred may be and still be retried
 * as soon as the minute has room. One further off was scheduled at a slot of a shorter interval
 * than the one now in force (the budget lengthened it since: a shard's share fell as others
 * joined, resources were added): it waits for its next slot instead.
 */
export const DEFERRED_CHECK_SLOT_GRACE_MS = 5 * 60_000;

/**
 * Milliseconds until a drift check the budget's minute deferred (`retryAfterMs`) is tried again:
 * that, when the check is at most DEFERRED_CHECK_SLOT_GRACE_MS past a slot of `intervalMs`, the
 * interval now in force; else its next slot of `intervalMs`, so checks scheduled under a shorter
 * interval take up their new slots instead of crowding the minute.
 */
export function delayOfDeferredCheck(uid: string, intervalMs: number, nowMs: number, retryAfterMs: number): number {
  const untilNext = delayUntilNextCheck(uid, intervalMs, nowMs);
  const sinceSlot = intervalMs - untilNext;
  return sinceSlot <= DEFERRED_CHECK_SLOT_GRACE_MS ? retryAfterMs : Math.max(retryAfterMs, untilNext);
}

/**
 * Whether an object the operator finds when it starts can wait for its slot:
 * the cloud was last brought in line with its current generation (top-level
 * and conditions' observedGeneration equal its generation, Ready and Synced
 * True), it is not being deleted, it carries the finalizer, and nothing asks
 * for a look now (a `k8or.io/reconcile-requested-at` not yet handled, a pause
 * not yet recorded). Anything else is reconciled at once.
 */
export function awaitsItsSlot(resource: ManagedResource): boolean {
  const { metadata, status } = resource;
  if (metadata.deletionTimestamp || !metadata.uid || !metadata.finalizers?.includes(FINALIZER)) return false;
  if (status?.observedGeneration === undefined || status.observedGeneration !== metadata.generation) return false;
  for (const type of [ConditionTypes.Ready, ConditionTypes.Synced]) {
    const condition = status.conditions?.find((c) => c.type === type);
    if (condition?.status !== 'True') return false;
    if (condition.observedGeneration !== undefined && condition.observedGeneration !== metadata.generation) return false;
  }
  const requested = metadata.annotations?.[Annotations.reconcileRequestedAt];
  if (requested !== undefined && requested !== status.lastHandledReconcileAt) return false;
  if (annotationIsTrue(resource, Annotations.paused)) return false;
  return true;
}

/**
 * `awaitsItsSlot` for an object as read from the API server (a list or watch), not yet known to be
 * of the API's shape: false, so worked at once, for one that is not.
 */
export function readObjectAwaitsItsSlot(object: unknown): boolean {
  const status = field(object, 'status');
  const conditions = field(object, 'status', 'conditions');
  const wellFormed = isPlainObject(field(object, 'metadata')) && (status === undefined || isPlainObject(status)) && (conditions === undefined || (Array.isArray(conditions) && conditions.every(isPlainObject)));
  return wellFormed && awaitsItsSlot(object as ManagedResource);
}

/**
 * How long after the operator starts (or first sees it) the object is first
 * reconciled: 0 unless it `awaitsItsSlot`, else until its next slot.
 */
export function firstCheckDelay(resource: ManagedResource, intervalMs: number, nowMs: number): number {
  if (!awaitsItsSlot(resource)) return 0;
  return delayUntilNextCheck(resource.metadata.uid ?? '', intervalMs, nowMs);
}

// ---- the drift-check budget ------------------------------------------------

type BudgetPlugin = Pick<ProviderPlugin, 'provider' | 'rateLimits' | 'observeCalls'>;

const HOUR_MS = 3_600_000;

/** Rule identifiers of the `spec.driftCheckBudget` checks. */
export const DriftBudgetRules = {
  object: 'driftCheckBudget.object',
  exactlyOne: 'driftCheckBudget.exactlyOne',
  field: 'driftCheckBudget.field',
  callsPerHour: 'driftCheckBudget.callsPerHour.integer',
  rateLimitPercent: 'driftCheckBudget.rateLimitPercent.range',
  noRateLimits: 'driftCheckBudget.rateLimitPercent.noRateLimits',
} as const;

const BUDGET_FIELDS = new Set(['callsPerHour', 'rateLimitPercent']);

/**
 * Checks `ProviderConfig.spec.driftCheckBudget`: an object with exactly one of `callsPerHour` (an
 * integer of at least 1) and `rateLimitPercent` (an integer from 1 to 100, only for a provider
 * that declares rate limits), nothing else. Each violation names the field. The webhook and the
 * engine share it.
 */
export function driftCheckBudgetViolations(plugin: BudgetPlugin | undefined, providerConfig: unknown): Violation[] {
  const budget = field(providerConfig, 'spec', 'driftCheckBudget');
  if (budget === undefined) return [];
  const path = 'spec.driftCheckBudget';
  if (!isPlainObject(budget)) return [{ field: path, rule: DriftBudgetRules.object, message: 'must be an object with callsPerHour or rateLimitPercent' }];
  const violations: Violation[] = [];
  for (const key of Object.keys(budget)) {
    if (!BUDGET_FIELDS.has(key)) violations.push({ field: `${path}.${key}`, rule: DriftBudgetRules.field, message: 'is not a budget field; use callsPerHour or rateLimitPercent' });
  }
  const calls = budget['callsPerHour'];
  const percent = budget['rateLimitPercent'];
  if ((calls === undefined) === (percent === undefined)) {
    violations.push({ field: path, rule: DriftBudgetRules.exactlyOne, message: 'set exactly one of callsPerHour and rateLimitPercent' });
  }
  if (calls !== undefined && !(typeof calls === 'number' && Number.isInteger(calls) && calls >= 1)) {
    violations.push({ field: `${path}.callsPerHour`, rule: DriftBudgetRules.callsPerHour, message: `must be an integer of at least 1 (got ${JSON.stringify(calls)})` });
  }
  if (percent !== undefined && !(typeof percent === 'number' && Number.isInteger(percent) && percent >= 1 && percent <= 100)) {
    violations.push({ field: `${path}.rateLimitPercent`, rule: DriftBudgetRules.rateLimitPercent, message: `must be an integer from 1 to 100 (got ${JSON.stringify(percent)})` });
  } else if (percent !== undefined && plugin && Object.keys(plugin.rateLimits ?? {}).length === 0) {
    violations.push({ field: `${path}.rateLimitPercent`, rule: DriftBudgetRules.noRateLimits, message: `provider "${plugin.provider}" declares no rate limits to take a share of; use callsPerHour` });
  }
  return violations;
}

/** The cloud calls of one drift check of `kind`, by service: the provider's `observeCalls`, else one call. */
export function checkCallsOf(plugin: BudgetPlugin | undefined, kind: ManagedKindName): Readonly<Record<string, number>> {
  return plugin?.observeCalls?.[kind] ?? { '': 1 };
}

/** All the cloud calls of one check (`checkCallsOf`), whatever their service. */
export function totalCalls(calls: Readonly<Record<string, number>>): number {
  return Object.values(calls).reduce((sum, n) => sum + n, 0);
}

/** One resource whose drift checks count against its ProviderConfig's budget. */
export interface CheckedResource {
  /** Any key that tells it from the others (the engine uses kind/namespace/name). */
  key: string;
  kind: ManagedKindName;
  /** The interval it asks for: its `k8or.io/resync-period`, else the operator's default, never below the floor. */
  askedMs: number;
}

/** What the drift checks of one ProviderConfig's resources cost, at the intervals in force. */
export interface DriftCheckPlan {
  providerConfig: string;
  /**
   * The calls an hour the budget allows these resources in all (a percentage summed over the
   * services it covers), `budgetShare` of the ProviderConfig's budget; undefined without a budget.
   */
  budgetCallsPerHour: number | undefined;
  /**
   * The same budget as it is held: the calls an hour of each service it covers (`rateLimitPercent`),
   * or of all calls together under EVERY_SERVICE (`callsPerHour`); empty without a budget.
   */
  budgetByService: ReadonlyMap<string, number>;
  /**
   * The part of the ProviderConfig's budget this plan spends: 1, or a shard's share (1/N of the
   * account's budget, N the shards that may be calling the cloud), its resources the shard's own.
   */
  budgetShare: number;
  /** Which field of `spec.driftCheckBudget` set it. */
  budgetSource: 'callsPerHour' | 'rateLimitPercent' | undefined;
  resources: number;
  /** Cloud calls an hour the drift checks make at the intervals in force. */
  projectedCallsPerHour: number;
  /** The shortest interval the budget allows; 0 when it lengthens none. */
  budgetIntervalMs: number;
  /** Resources checked less often than they ask for. */
  lengthened: number;
  /** The interval in force, by CheckedResource.key. */
  intervals: ReadonlyMap<string, number>;
  /**
   * The shortest interval the budget allows each resource, by CheckedResource.key; absent where
   * it allows any. The interval in force is the larger of this and what the resource asks for
   * now, so an ask changed since the plan was worked out counts at once.
   */
  budgetFloors: ReadonlyMap<string, number>;
}

/** The interval in force for one resource, and why. */
export interface DriftCheckInterval {
  intervalMs: number;
  /** What the resource asks for: its `k8or.io/resync-period`, else the operator's default (never below the floor). */
  askedMs: number;
  /** The plan of its ProviderConfig, when the budget lengthened its interval. */
  lengthenedBy?: DriftCheckPlan;
}

/** The key of `DriftCheckPlan.budgetByService` for a budget of every call (`callsPerHour`). */
export const EVERY_SERVICE = '*';

/** One group of checks that shares a budget: all of a ProviderConfig's, or those drawing on one service. */
interface BudgetGroup {
  /** The service whose calls it counts (a rate-limited service's name), or EVERY_SERVICE. */
  service: string;
  callsPerHour: number;
  members: { key: string; askedMs: number; calls: number }[];
}

/**
 * The interval each resource of one ProviderConfig is checked at: the larger of what it asks for
 * and the shortest interval its budget allows. The budget's interval is the shortest that keeps
 * the projected calls within the budget when every resource asking for less is lengthened to it
 * (those asking for more keep theirs), rounded up to a whole second. With `rateLimitPercent`, each
 * service is a budget of its own for the checks that draw on it. This is the only place that
 * decides the interval in force; the engine, status, metrics and `k8or plan` all read it.
 *
 * `budgetShare` (in (0, 1], default 1) is the part of the budget these resources may spend: a
 * shard plans its own resources with its share of the account's budget, so that the shards'
 * checks together stay within it.
 */
export function planDriftChecks(providerConfig: ProviderConfig, plugin: BudgetPlugin | undefined, resources: readonly CheckedResource[], budgetShare = 1): DriftCheckPlan {
  if (!(budgetShare > 0 && budgetShare <= 1)) throw new RangeError(`a budget share is in (0, 1], got ${budgetShare}`);
  const configName = providerConfig.metadata.name ?? '';
  const budget = driftCheckBudgetViolations(plugin, providerConfig).length === 0 ? providerConfig.spec.driftCheckBudget : undefined;
  const callsOf = new Map(resources.map((r) => [r.key, checkCallsOf(plugin, r.kind)]));
  const total = (key: string): number => totalCalls(callsOf.get(key) ?? {});
  const groups: BudgetGroup[] = [];
  let budgetSource: DriftCheckPlan['budgetSource'];
  if (budget?.callsPerHour !== undefined) {
    budgetSource = 'callsPerHour';
    groups.push({ service: EVERY_SERVICE, callsPerHour: budget.callsPerHour * budgetShare, members: resources.map((r) => ({ key: r.key, askedMs: r.askedMs, calls: total(r.key) })) });
  } else if (budget?.rateLimitPercent !== undefined && plugin && rateLimitViolations(plugin, providerConfig).length === 0) {
    budgetSource = 'rateLimitPercent';
    for (const [service, limit] of effectiveRateLimits(plugin, providerConfig)) {
      const members = resources.flatMap((r) => {
        const calls = callsOf.get(r.key)?.[service] ?? 0;
        return calls > 0 ? [{ key: r.key, askedMs: r.askedMs, calls }] : [];
      });
      if (members.length > 0) groups.push({ service, callsPerHour: (limit.requestsPerSecond * 3600 * budget.rateLimitPercent * budgetShare) / 100, members });
    }
  }
  const intervals = new Map(resources.map((r) => [r.key, r.askedMs]));
  const budgetFloors = new Map<string, number>();
  let budgetIntervalMs = 0;
  for (const group of groups) {
    const shortest = shortestIntervalWithin(group);
    if (shortest === 0) continue;
    budgetIntervalMs = Math.max(budgetIntervalMs, shortest);
    for (const member of group.members) {
      intervals.set(member.key, Math.max(intervals.get(member.key) ?? 0, shortest));
      budgetFloors.set(member.key, Math.max(budgetFloors.get(member.key) ?? 0, shortest));
    }
  }
  let projectedCallsPerHour = 0;
  let lengthened = 0;
  for (const r of resources) {
    const interval = intervals.get(r.key) ?? r.askedMs;
    projectedCallsPerHour += (total(r.key) * HOUR_MS) / interval;
    if (interval > r.askedMs) lengthened += 1;
  }
  return {
    providerConfig: configName,
    budgetCallsPerHour: groups.length > 0 || budgetSource === 'callsPerHour' ? groups.reduce((sum, g) => sum + g.callsPerHour, 0) : undefined,
    budgetByService: new Map(groups.map((g) => [g.service, g.callsPerHour])),
    budgetSource,
    budgetShare,
    resources: resources.length,
    projectedCallsPerHour,
    budgetIntervalMs,
    lengthened,
    intervals,
    budgetFloors,
  };
}

/**
 * The shortest L such that the group's calls an hour, each member checked every max(asked, L),
 * fit its budget; 0 when they fit as asked. Members sorted by what they ask: for L between the
 * k-th and the next one's ask, the first k are checked every L and the rest as asked, so
 * L = calls of the first k × 1 h / (budget − what the rest make).
 */
function shortestIntervalWithin(group: BudgetGroup): number {
  const members = [...group.members].sort((a, b) => a.askedMs - b.askedMs);
  // What the members from k on make as asked, summed from the end so that past the last it is exactly 0.
  const restFrom = new Array<number>(members.length + 1).fill(0);
  for (let k = members.length - 1; k >= 0; k--) restFrom[k] = restFrom[k + 1]! + (members[k]!.calls * HOUR_MS) / members[k]!.askedMs;
  if (restFrom[0]! <= group.callsPerHour) return 0;
  let lengthenedCalls = 0;
  for (let k = 0; k < members.length; k++) {
    const member = members[k]!;
    lengthenedCalls += member.calls;
    const room = group.callsPerHour - restFrom[k + 1]!;
    if (room <= 0) continue;
    const interval = (lengthenedCalls * HOUR_MS) / room;
    const next = members[k + 1]?.askedMs ?? Number.POSITIVE_INFINITY;
    if (interval >= member.askedMs && interval <= next) return wholeSeconds(interval);
  }
  return wholeSeconds((lengthenedCalls * HOUR_MS) / group.callsPerHour);
}

/** Rounded up to a whole second, not counting a rounding error of the division (60,000.0000001 ms is 60 s). */
function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000 - 1e-9) * 1000;
}
