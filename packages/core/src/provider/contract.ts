import type { AtProvider, JSONSchemaProps, ManagedKindName, ManagedResource, ManagedResourceOf, ProviderConfig, ProviderName, Violation } from '@k8or/api';

/**
 * Options every provider call receives as its last argument.
 *
 * `signal` aborts when the reconcile's deadline passes, when the engine stops,
 * and when it loses leadership (another replica may already be writing). A
 * provider passes it to every SDK call (AWS SDK v3: `client.send(command, {
 * abortSignal: call.signal })`; Google and Azure clients take it the same way)
 * and starts no cloud write once it is aborted. An aborted call rejects; the
 * engine counts that as retryable.
 */
export interface CallOptions {
  signal: AbortSignal;
}

/**
 * One managed setting that differs between the spec and the cloud. Values, never their serialisation.
 *
 * For a `spec.*` field, `desired` and `actual` are both in the portable spec's shape: `actual` is
 * exactly what the spec would hold to match the cloud (`k8or import` copies it into a manifest).
 * A cloud value with no portable form is reported as its nearest portable value (an approximation,
 * which may then equal `desired` while the native values differ; update brings the cloud to the
 * spec's form), or left out (`actual` undefined) with the reason in a SettingIssue of the
 * observation: never a native value. Fields outside `spec` (`ownerTags.<key>`, a provider setting
 * such as `storageClass`) hold that setting's own values.
 */
export interface FieldDiff {
  /** Spec path, such as `spec.versioning` or `spec.lifecycle[0]`; owner tags as `ownerTags.<key>`; a provider setting by its name. */
  field: string;
  desired: unknown;
  actual: unknown;
}

/**
 * A managed setting the provider could not bring in line or could not read on
 * this backend (an emulator without the API, a feature the account lacks, a
 * read denied for that one setting). The engine never says the cloud matches
 * the spec while any is reported: Synced turns False with reason
 * `SettingsNotApplied` naming each field. Never skip a setting in silence.
 */
export interface SettingIssue {
  /** Spec path of the setting, such as `spec.pointInTimeRecovery`. */
  field: string;
  /** `unapplied`: the write failed or the backend cannot do it; `unreadable`: its current value cannot be read. */
  problem: 'unapplied' | 'unreadable';
  /** What happened, for the condition message (the cloud's code and message where there is one). */
  message: string;
}

/**
 * The cloud's own identity of one resource: values the cloud assigns at creation and never
 * changes, so a resource deleted and made again under the same name has another (a DynamoDB
 * TableId; a GCS bucket's timeCreated and projectNumber; an S3 bucket's CreationDate; an Azure
 * container's creation time; a Bigtable table's creation time where the API has one). Keys are
 * the provider's own, stable across versions (`tableId`, `timeCreated`, ...). Values compare as
 * strings, exactly. Never credentials, never a URL with a query string.
 */
export type ResourceIdentity = Readonly<Record<string, string>>;

/**
 * One protection setting as found in the cloud. Protections only go up on their own: the engine
 * never lowers one in drift repair (a diff on `field` while `enabled` is held, reported and not
 * repaired, unless a new generation of the spec asks for it), and a delete never removes one.
 */
export interface ProtectionSetting {
  /**
   * The spec path of the portable setting it belongs to (`spec.deletionProtection`,
   * `spec.publicAccess`, `spec.versioning`), so the engine can match it with a FieldDiff of the
   * same field (or a prefix of it); else a provider setting's name (`retentionPolicy`, `softDelete`).
   */
  field: string;
  /** The protection is on in the cloud. */
  enabled: boolean;
  /**
   * While enabled, the resource must not be deleted (deletion protection, a locked retention
   * policy): the engine's delete stops with DeletionBlocked naming `field` and never calls `delete`.
   */
  blocksDeletion?: boolean;
}

/** What `observe` found. */
export interface Observation {
  /**
   * The cloud resource exists under the external name. `false` only on a
   * definite not-found answer: a 403, a timeout or any other error is thrown,
   * never reported as absence (the engine would create again, or release the
   * finalizer of a resource that still exists).
   */
  exists: boolean;
  /** Every managed setting matches the spec: `diff` is empty. */
  upToDate: boolean;
  /** The resource is usable (for example a DynamoDB table is ACTIVE). */
  ready: boolean;
  atProvider?: AtProvider;
  /**
   * What differs, one entry per managed field, for update, Events and the
   * ObserveOnly drift report. Compare values structurally: key order, and
   * defaults the cloud fills in, are no difference.
   */
  diff?: FieldDiff[];
  /**
   * Every k8or owner tag found on the resource, in the portable `k8or.io/*`
   * form: all of k8or's owner tag keys (OwnerTags), whichever
   * ConnectionContext.ownerTags expects (`k8or import` expects none and still
   * must see a resource k8or manages). `undefined` means this cloud (or this
   * backend) has no tags for this kind: ownership then rests on `identity`
   * (recorded at creation) alone. `{}` means tags exist and none is k8or's:
   * proof of nothing (someone else's, or ours with its tags removed: the
   * identity tells).
   */
  ownerTags?: Record<string, string>;
  /** Differences the cloud cannot update in place (immutable settings); reported as a terminal condition. */
  immutableDiff?: FieldDiff[];
  /** Managed settings that could not be read here; see SettingIssue. */
  settingIssues?: SettingIssue[];
  /**
   * The cloud's own identity of the resource (see ResourceIdentity), when it exists. The engine
   * records it in `status.identity` when it created the resource (or proved it its own) and
   * compares it on every later observe and probe: a different identity means the resource was
   * replaced, and the engine stops. Undefined where the API offers none.
   */
  identity?: ResourceIdentity;
  /**
   * Every protection setting the cloud has for this kind, on or off (deletion protection, a
   * public access block, versioning, retention), as found. Facts only: the engine decides.
   * Undefined where the provider does not report them yet.
   */
  protection?: ProtectionSetting[];
}

/**
 * What `probe` found: whether the resource exists and whose it is, with exactly the meaning of the
 * same fields of Observation (`exists: false` only on a definite not-found; `ownerTags` undefined
 * only where this cloud has no tags for this kind). `identity` and `protection` as in Observation:
 * the delete path compares the identity and stops on a protection that blocks deletion, so a
 * probe reports them where observe does.
 */
export type Presence = Pick<Observation, 'exists' | 'ownerTags' | 'identity' | 'protection'>;

/** What `create` and `update` may report besides success. */
export interface ApplyResult {
  /** Settings the call could not apply (the rest was applied); see SettingIssue. */
  settingIssues?: SettingIssue[];
  /**
   * From `create` only: the identity the provider gave the resource in the create itself (a marker
   * it named, such as a Bigtable table's marker family), as observe will report it. The engine
   * records it with the create, so an observe that fails right after cannot leave the resource
   * without the proof that it is this object's.
   */
  identity?: ResourceIdentity;
}

/**
 * The four calls of a provider for one kind, bound to one resource's cloud
 * client (a fresh client per reconcile: never shared between two).
 *
 * - None blocks on a long cloud operation: start it and return; the engine
 *   observes again later.
 * - Every call is idempotent: the engine may repeat any of them after a crash,
 *   a timeout or a retry.
 * - `observe` reads only.
 * - Errors are classified (errors.ts): RetryableError (throttling, 5xx,
 *   network, an aborted call), TerminalError (invalid, access denied),
 *   NotOwnedError (the name is someone else's), DeletionBlockedError.
 */
export interface ExternalClient<R extends ManagedResource = ManagedResource> {
  observe(resource: R, call: CallOptions): Promise<Observation>;
  /**
   * Optional: a lighter observe for the delete path, which needs only existence and the owner tags
   * (S3: one GetBucketTagging instead of six reads). It answers what `observe` would for those two
   * fields, with the cloud's fewest calls, and classifies errors exactly as `observe` does: a 403 or
   * a timeout throws (never `exists: false`), and where `observe` throws NotOwnedError, so does
   * `probe`. It reads only, and runs every SDK call through `recordCall` as `observe` does. Without
   * it, the engine calls `observe`.
   */
  probe?(resource: R, call: CallOptions): Promise<Presence>;
  /**
   * Create the resource under `ConnectionContext.externalName`, with the owner
   * tags in the create call itself wherever the cloud accepts tags at create
   * (S3 CreateBucketConfiguration.Tags, DynamoDB CreateTable Tags, GCS bucket
   * labels, ...), so no crash or denial can leave an untagged resource: tags
   * written atomically are what proves a create with an unknown outcome ours.
   * Where the cloud cannot, tag right after; an untagged resource found later
   * proves nothing, and the engine finishes such a create (by `update`) only
   * under a name it generated for this object. A name that exists and is
   * someone else's is NotOwnedError, never success: "already exists" is
   * success only when the owner tags are ours. Classify failures by effect
   * (ProviderError.noEffect): a refusal before any effect (a 4xx, a throttle)
   * is recorded as create-failed; anything else leaves the outcome unknown.
   */
  create(resource: R, call: CallOptions): Promise<ApplyResult | void>;
  /**
   * Bring the cloud in line with the spec, owner tags included; `observation`
   * is the one that found the diff. The engine also calls it to adopt a
   * resource (`k8or.io/adopt`), to finish a create whose outcome was unknown,
   * and for a resource proven ours by its identity whose tags are gone, whose
   * settings may already match, so it must (re)write the owner tags where the
   * cloud has tags. The engine never asks it to lower a protection on a
   * resync: a held field arrives with the cloud's value in the spec.
   */
  update(resource: R, observation: Observation, call: CallOptions): Promise<ApplyResult | void>;
  /**
   * Delete the resource. Missing is success. Throws DeletionBlockedError
   * rather than lose data, and never turns a protection off to get through
   * (deletion protection, a retention policy): the engine stops first on a
   * reported protection with `blocksDeletion`, and the cloud's refusal is the
   * provider's DeletionBlockedError. Returning means the delete was accepted; the engine
   * removes its finalizer only after a fresh `probe` (or `observe`) says `exists: false`.
   */
  delete(resource: R, call: CallOptions): Promise<void>;
  /**
   * Optional: release ownership, for deletion policy Retain: remove this object's owner tags
   * (at least `k8or.io/managed-by`; or set it to another value where a cloud cannot remove a
   * tag) so that another cluster or object can adopt the resource. Changes nothing else, and
   * never a protection. Missing resource or tags is success. The engine calls it only for a
   * resource proven its own.
   */
  release?(resource: R, call: CallOptions): Promise<void>;
  /**
   * Optional fact, for a kind its cloud keeps no owner tags for: why a resource this client creates
   * can hold no identity, because its credentials may neither set nor read it (an Azure table
   * through an account SAS: "an account SAS may neither set nor read a table's access policies").
   * In words for a condition; undefined where the identity can be made and read. k8or then has
   * nothing but its own record of the create to tell its resource from one made again under the
   * name, so the engine never deletes such a resource and refuses to create one under deletion
   * policy Delete (policy/ownership.ts).
   */
  readonly identityUnavailable?: string;
}

/** Which of the plugin's rate-limited services one cloud call draws on, and under which signal. */
export interface CloudCallOptions {
  /** A key of `ProviderPlugin.rateLimits`: the call takes one token of this ProviderConfig's bucket for it. */
  service: string;
  /** The call's signal: waiting for a token ends (the call rejects, retryable) when it aborts. */
  signal: AbortSignal;
}

/**
 * The engine's gate around one cloud call: it waits for a token of the
 * ProviderConfig's rate limit for `options.service` (see
 * `ProviderPlugin.rateLimits`), then counts and times the call for metrics.
 * Providers run every SDK call through it, naming the service; a plugin that
 * declares rate limits must name one of them on every call (the conformance
 * kit checks it). The call's outcome passes through unchanged.
 */
export type CloudCallRecorder = <T>(operation: string, call: () => Promise<T>, options?: CloudCallOptions) => Promise<T>;

/**
 * The pace a provider keeps to by default for one control-plane service of its
 * cloud (per ProviderConfig: one account, project or storage account), based on
 * the cloud's published limit. `ProviderConfig.spec.rateLimits.<service>`
 * overrides either number.
 */
export interface CloudServiceRateLimit {
  /** Sustained calls per second (> 0; fractions allowed). */
  requestsPerSecond: number;
  /** Calls that may go at once after a quiet spell (>= 1). */
  burst: number;
  /** The calls it covers and the published limit the default rests on, for docs and `k8or` output. */
  description: string;
}

/** What a connector is given to build a client. */
export interface ConnectionContext {
  /** The ProviderConfig, its `spec.settings` already checked against the plugin's `settingsSchema`. */
  providerConfig: ProviderConfig;
  /** Secret data (decoded) when credentials.source is Secret; undefined otherwise. */
  credentials: Readonly<Record<string, string>> | undefined;
  /** The decided external name (never empty: the engine persists it before connecting for create). */
  externalName: string;
  /** Tags to write on the resource so k8or can recognise it as its own (`k8or.io/*` keys). */
  ownerTags: Readonly<Record<string, string>>;
  /** Wrap every SDK call in it. */
  recordCall: CloudCallRecorder;
}

/** Turns a resource plus its ProviderConfig and credentials into a client. Reads nothing from the cloud. */
export interface Connector<R extends ManagedResource = ManagedResource> {
  connect(resource: R, context: ConnectionContext): Promise<ExternalClient<R>>;
  /**
   * Optional, for `k8or import`: every resource of this kind that the
   * ProviderConfig's account holds where the ProviderConfig points (its
   * region, project or storage account). Reads only, never writes; takes the
   * same classified errors as `observe` (a denied list is an error, never an
   * empty answer). Each item gives the external name and, as the portable
   * spec, what the list calls tell at no extra cost, including the kind's
   * required fields (a Table's keys), so a manifest built from it is valid.
   */
  list?(context: InventoryContext, call: CallOptions): Promise<InventoryItem<R>[]>;
}

/** What `Connector.list` is given: the account, with no resource yet. */
export type InventoryContext = Pick<ConnectionContext, 'providerConfig' | 'credentials' | 'recordCall'>;

/** One cloud resource found by `Connector.list`. */
export interface InventoryItem<R extends ManagedResource = ManagedResource> {
  externalName: string;
  /** Its settings in the portable spec's terms, as far as the listing tells them. */
  spec: Partial<R['spec']>;
}

/** A connector per kind, typed by the kind, so a provider's connectors need no casts. */
export type ProviderConnectors = { [K in ManagedKindName]?: Connector<ManagedResourceOf<K>> };

/** What a default external name is made from. */
export interface DefaultNameInput {
  /** The engine's cluster id (unique per installation). */
  clusterId: string;
  namespace: string;
  /** metadata.name of the object. */
  name: string;
  /**
   * metadata.uid of the object, when known (the engine gives it; admission may not have one yet).
   * A rule that folds `perObjectNameToken(uid)` (`@k8or/core/policy`) into the name makes it
   * proof of ownership for a kind without tags: a create with an unknown outcome (a timeout, a
   * crash) under such a name is finished by the engine, where otherwise it stops for a user to
   * adopt. Optional: a rule may ignore it.
   */
  uid?: string;
}

/**
 * A cloud's naming rules for one kind: the webhook validates `spec.name` with
 * them, and the webhook and the engine default it with them.
 */
export interface NamingRules {
  /** Violations of the cloud's rules for an external name, reported under `field`. */
  validate(name: string, field: string): Violation[];
  /**
   * The external name when the user gave none. It must pass `validate`, and
   * be unique per cluster: fold `clusterId` into it (a short hash, see
   * `shortHash` in @k8or/api), since names of global namespaces (S3, GCS)
   * collide across installations otherwise; and never truncate without a hash,
   * so two long names cannot collide. The engine persists the name before the
   * first create, so later changes to this rule never rename a resource.
   */
  defaultName(input: DefaultNameInput): string;
  /**
   * True when `defaultName` folds `perObjectNameToken(uid)` into the name, so that the name
   * proves ownership of a kind without tags. Such a default is decided only once the object has
   * a uid: by the engine before its first create, never at admission (an object has no uid yet
   * when it is admitted), and `k8or plan` shows it as decided at create.
   */
  perObjectName?: boolean;
}

/** The outcome of a provider's pure validation of one object. */
export interface ValidationResult {
  violations: Violation[];
  /** Portability warnings: portable fields this cloud cannot honour. */
  warnings: string[];
}

/** Pure rules a provider exports for the webhook and `k8or validate`. */
export interface ProviderValidation {
  /** Rules on the spec beyond the naming rules (the webhook checks `spec.name` with `ProviderPlugin.naming`). */
  validate(kind: ManagedKindName, resource: ManagedResource, providerConfig: ProviderConfig | undefined): ValidationResult;
  /** Rules on the ProviderConfig itself (region names, endpoint forms), beyond `settingsSchema`. */
  validateProviderConfig?(providerConfig: ProviderConfig): ValidationResult;
}

/**
 * Where a client of a ProviderConfig points: a plain record of the parts that tell one cloud
 * namespace of resources from another (aws `{ provider, region, endpoint, accountId? }`; gcp
 * `{ provider, project, instance?, endpoint }`; azure `{ provider, storageAccount, endpoint }`).
 * Two targets are the same when every key both have holds the same value (a key only one has is
 * no difference, so a provider may add parts later): emit every key always, '' for the cloud's
 * default. Never credentials: rotating keys to the same account keeps the target.
 */
export type CloudTarget = Readonly<Record<string, string>>;

/** Everything one installed provider package contributes. */
export interface ProviderPlugin {
  /**
   * The value of ProviderConfig.spec.provider this plugin serves: any DNS
   * label (`aws`, `gcp`, `azure`, or a third party's `foo`).
   */
  provider: ProviderName;
  /** npm package name, for logs and status. */
  packageName: string;
  connectors: ProviderConnectors;
  /** Naming rules per kind it manages. A kind without them gets `genericNamingRules` (lowercase letters, digits, hyphens, at most 63). */
  naming?: { [K in ManagedKindName]?: NamingRules };
  /**
   * JSON schema (an object schema, in the CRD's structural subset) of
   * `ProviderConfig.spec.settings` for this provider. The webhook and the
   * engine validate settings with it (ajv); CRD generation lists its
   * properties under `spec.settings` so `kubectl explain` shows them.
   */
  settingsSchema?: JSONSchemaProps;
  /**
   * The control-plane services this provider's calls hit, by name (a lowercase
   * DNS label such as `dynamodb-control-plane`), each with its default rate and
   * burst. The engine keeps one token bucket per ProviderConfig and service,
   * and every call names its service in `recordCall`. Without it, calls are not
   * paced.
   */
  rateLimits?: Readonly<Record<string, CloudServiceRateLimit>>;
  /**
   * The cloud calls one drift check of a resource in sync makes, per kind, by the service each
   * draws on (a key of `rateLimits`; any label where the plugin declares none): what a reconcile
   * that finds nothing to do sends through `recordCall` (Bucket on S3: `{ 's3-buckets': 7 }`).
   * The engine projects each ProviderConfig's drift-check calls from it and fits them to
   * `spec.driftCheckBudget`; the conformance kit checks it against the calls it records. A kind
   * without it counts one call per check.
   */
  observeCalls?: { [K in ManagedKindName]?: Readonly<Record<string, number>> };
  validation: ProviderValidation;
  /**
   * Optional, pure (no cloud call): the target a client for `kind` built from this
   * ProviderConfig (and credentials) points at, see CloudTarget. Include every part that moves
   * the client to another set of resources (the region or endpoint for the kind, an account id
   * the settings name, a Bigtable instance); leave out what does not (credentials, timeouts,
   * rate limits). Emit every key always ('' for the cloud's default). The engine adds
   * `provider`. Without it, the engine uses `defaultCloudTarget`.
   * Read it with `cloudTargetFor` (`@k8or/core/policy`).
   */
  targetOf?(kind: ManagedKindName, providerConfig: ProviderConfig, credentials: Readonly<Record<string, string>> | undefined): Record<string, string>;
}
