import type { AtProvider, CloudProvider, ManagedKindName, ManagedResource, ProviderConfig, Violation } from '@k8or/api';

/** One managed setting that differs between the spec and the cloud. */
export interface FieldDiff {
  /** Spec path, such as `spec.versioning`. */
  field: string;
  desired: unknown;
  actual: unknown;
}

/** What `observe` found. */
export interface Observation {
  /** The cloud resource exists under the external name. */
  exists: boolean;
  /** Every managed setting matches the spec (`diff` is empty). */
  upToDate: boolean;
  /** The resource is usable (for example a DynamoDB table is ACTIVE). */
  ready: boolean;
  atProvider?: AtProvider;
  /** What differs, for update, events and ObserveOnly reports. */
  diff?: FieldDiff[];
  /**
   * Owner tags found on the resource; undefined where the cloud has no tags.
   * The engine compares them with its own before it updates, adopts or deletes.
   */
  ownerTags?: Record<string, string>;
  /** The cloud cannot update these differences in place (immutable settings); reported as a terminal condition. */
  immutableDiff?: FieldDiff[];
}

/**
 * The four calls of a provider for one kind, bound to one resource's cloud client.
 *
 * None of the calls may block on long cloud operations: start the operation and
 * return; the engine observes again later. Every call must be idempotent: the
 * engine may repeat any of them after a crash or a retry. `observe` reads only.
 */
export interface ExternalClient<R extends ManagedResource = ManagedResource> {
  observe(resource: R): Promise<Observation>;
  /** Create the resource under `connection.externalName` with the owner tags. */
  create(resource: R): Promise<void>;
  /**
   * Bring the cloud in line with the spec, owner tags included; `observation`
   * is the one that found the diff. The engine also calls it to adopt a
   * resource (`k8or.io/adopt`) whose settings already match, so it must
   * (re)write the owner tags where the cloud has tags.
   */
  update(resource: R, observation: Observation): Promise<void>;
  /** Delete the resource. Missing is success. Throws DeletionBlockedError rather than lose data. */
  delete(resource: R): Promise<void>;
}

/** Counts and times one cloud call; providers wrap every SDK call in it for metrics. */
export type CloudCallRecorder = <T>(operation: string, call: () => Promise<T>) => Promise<T>;

/** What a connector is given to build a client. */
export interface ConnectionContext {
  providerConfig: ProviderConfig;
  /** Secret data (decoded) when credentials.source is Secret; undefined otherwise. */
  credentials: Readonly<Record<string, string>> | undefined;
  /** The decided external name (never empty: the engine persists it before connecting for create). */
  externalName: string;
  /** Tags to write on the resource so k8or can recognise it as its own. */
  ownerTags: Readonly<Record<string, string>>;
  recordCall: CloudCallRecorder;
}

/** Turns a resource plus its ProviderConfig and credentials into a client. */
export interface Connector<R extends ManagedResource = ManagedResource> {
  connect(resource: R, context: ConnectionContext): Promise<ExternalClient<R>>;
}

/** The outcome of a provider's pure validation of one object. */
export interface ValidationResult {
  violations: Violation[];
  /** Portability warnings: portable fields this cloud cannot honour. */
  warnings: string[];
}

/** Pure rules a provider exports for the webhook and `k8or validate`. */
export interface ProviderValidation {
  validate(kind: ManagedKindName, resource: ManagedResource, providerConfig: ProviderConfig | undefined): ValidationResult;
  /** Rules on the ProviderConfig itself (region names, endpoint forms). */
  validateProviderConfig?(providerConfig: ProviderConfig): ValidationResult;
}

/** Everything one installed provider package contributes. */
export interface ProviderPlugin {
  /** The value of ProviderConfig.spec.provider this plugin serves. */
  provider: CloudProvider;
  /** npm package name, for logs and status. */
  packageName: string;
  connectors: Partial<Record<ManagedKindName, Connector>>;
  validation: ProviderValidation;
}
