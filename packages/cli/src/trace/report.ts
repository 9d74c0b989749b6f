import type { Condition, DriftEntry, KindName } from '@k8or/api';
import type { Ownership, OwnershipDecision, ProtectionSetting } from '@k8or/core';
import type { ObjectEvent } from '../cluster/reads.js';

/** Everything `k8or trace` found about one object: the facts behind its tree and its `-o json`. */
export interface TraceReport {
  object: TracedObject;
  conditions: TracedCondition[];
  /** Absent for a ProviderConfig itself. */
  providerConfig?: TracedProviderConfig;
  credentials?: TracedCredentials;
  /** The cloud resource, read live (managed kinds only). */
  cloud?: TracedCloud;
  /** status.drift: where the cloud last differed from the spec. */
  drift?: DriftEntry[];
  schedule?: TracedSchedule;
  events: ObjectEvent[];
  outputs?: TracedOutputs;
  /** Each problem found, with the one thing to do about it. */
  problems: Problem[];
}

export interface TracedObject {
  kind: KindName;
  namespace?: string;
  name: string;
  uid?: string;
  generation?: number;
  observedGeneration?: number;
  /** The k8or annotations that change what the engine does (paused, adopt, protect, deletion-policy, resync-period...). */
  annotations: Record<string, string>;
  managementPolicy?: string;
  deletionPolicy?: string;
  /** Set while the object is being deleted: since when, and which finalizers still hold it. */
  deleting?: { since: string; finalizers: string[] };
  /** The engine's create markers: never, pending (outcome unknown), failed (refused), created. */
  creation?: string;
  /** spec.deletionProtection, where the kind has it (Tables): whether the spec itself asks for the protection. */
  deletionProtection?: boolean;
}

export interface TracedCondition {
  type: string;
  status: Condition['status'];
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface TracedProviderConfig {
  name: string;
  /** How it was chosen: spec.providerConfigRef, the namespace's annotation, or the cluster default. */
  chosenBy: 'spec' | 'namespace-annotation' | 'cluster-default';
  found: boolean;
  provider?: string;
  /** An installed provider package serves it (in this CLI: the operator loads the same packages). */
  installed?: boolean;
  conditions?: TracedCondition[];
  /** Where it points now, per kind (core's cloudTargetFor). */
  target?: Record<string, string>;
  /** Where the object's cloud resource was created (status.target). */
  recordedTarget?: Record<string, string>;
  /** True when the recorded target and the current one agree on every key both have. */
  targetMatches?: boolean;
  /** For a ProviderConfig traced itself: the target of each kind its provider serves. */
  targets?: Partial<Record<string, Record<string, string>>>;
}

export interface TracedCredentials {
  source: string;
  /** The Secret the ProviderConfig names: never its values, only whether it is there and the names of its keys. */
  secret?: { namespace: string; name: string; found: boolean; keys?: string[] };
}

export interface TracedCloud {
  externalName?: string;
  /** Whether the live read was made: `done`, `skipped` (with why), or `failed` (with the error). */
  read: 'done' | 'skipped' | 'failed';
  why?: string;
  /** For a skipped read: what stopped it. */
  skippedBecause?: 'providerconfig-missing' | 'provider-not-installed' | 'kind-not-supported' | 'credentials-missing' | 'target-changed' | 'invalid-providerconfig';
  errorCode?: string;
  exists?: boolean;
  ready?: boolean;
  ownerTags?: Record<string, string>;
  identity?: { recorded?: Record<string, string>; found?: Record<string, string>; comparison: 'same' | 'different' | 'unknown' };
  /** Whose the resource is, as core's ownership module decides it from these facts. */
  ownership?: { verdict: Ownership; proof?: OwnershipDecision['proof']; message?: string };
  protection?: ProtectionSetting[];
  /** Where the cloud differs from the spec right now. */
  diff?: DriftEntry[];
  immutableDiff?: DriftEntry[];
}

export interface TracedSchedule {
  /** `paused`: no check at all; `observe-only`: checks report, never write. */
  mode: 'manage' | 'observe-only' | 'paused';
  /** The drift-check period in force, in ms, and where it comes from. */
  periodMs: number;
  period: string;
  source: 'annotation' | 'operator-default';
  /** A `k8or.io/resync-period` value the engine ignores, and why. */
  ignoredAnnotation?: { value: string; why: string };
}

export interface TracedOutputs {
  configMap: string;
  found: boolean;
  data?: Record<string, string>;
}

export interface Problem {
  /** A short stable name: `not-owned`, `credentials-refused`, `target-changed`, `deletion-blocked`... */
  code: string;
  what: string;
  /** The one thing to do about it. */
  todo: string;
}
