/**
 * Bucket -> Google Cloud Storage: the mapping from the portable spec, observe/diff, and
 * create/update/delete, with the real `@google-cloud/storage` client.
 */
import { isDeepStrictEqual } from 'node:util';
import { Storage, type Bucket as GcsBucket, type BucketMetadata, type CreateBucketRequest, type File } from '@google-cloud/storage';
import { OwnerTags, type Bucket, type BucketEncryption, type LifecycleRule, type PublicAccess, type StorageTier } from '@k8or/api';
import {
  DeletionBlockedError,
  NotOwnedError,
  RetryableError,
  type CallOptions,
  type ConnectionContext,
  type Connector,
  type ExternalClient,
  type FieldDiff,
  type InventoryContext,
  type InventoryItem,
  type Observation,
  type Presence,
  type ProtectionSetting,
  type ResourceIdentity,
  type SettingIssue,
} from '@k8or/core';
import { withinTimeout } from './abort.js';
import { ClientCache } from './client-cache.js';
import { answerOf, callGoogle, isNotFound } from './errors.js';
import { GcpServices, gcsServiceFor } from './rate-limits.js';
import { desiredLabels, diffLabels, labelsPatch, ownerLabelKey, ownerTagsFromLabels } from './labels.js';
import { DEFAULT_STORAGE_CLASS, gcpSettings, type GcpSettings } from './settings.js';

// --- mapping: portable spec -> GCS -------------------------------------------------------------

/** Portable storage tiers and the GCS storage classes they become. */
export const TIER_TO_STORAGE_CLASS: Record<StorageTier, string> = { InfrequentAccess: 'NEARLINE', Archive: 'ARCHIVE' };

/** One GCS lifecycle rule (the JSON API's shape). */
export interface GcsLifecycleRule {
  action: { type: 'Delete' | 'SetStorageClass' | 'AbortIncompleteMultipartUpload'; storageClass?: string };
  condition: { age?: number; daysSinceNoncurrentTime?: number; isLive?: boolean; matchesPrefix?: string[] };
}

/**
 * A portable rule as GCS rules (GCS rules have no id and no enabled flag, and one action each, so
 * one portable rule becomes several, and a disabled one none): expiration deletes live objects of
 * that age, each transition sets the storage class, noncurrent expiration deletes noncurrent
 * versions that many days after they became noncurrent, and incomplete multipart uploads are aborted.
 */
export function toGcsLifecycleRules(rule: LifecycleRule): GcsLifecycleRule[] {
  if (rule.enabled === false) return [];
  const prefix = rule.prefix ? { matchesPrefix: [rule.prefix] } : {};
  const rules: GcsLifecycleRule[] = [];
  if (rule.expirationDays !== undefined) rules.push({ action: { type: 'Delete' }, condition: { age: rule.expirationDays, isLive: true, ...prefix } });
  for (const transition of rule.transitions ?? []) {
    rules.push({ action: { type: 'SetStorageClass', storageClass: TIER_TO_STORAGE_CLASS[transition.tier] }, condition: { age: transition.days, ...prefix } });
  }
  if (rule.noncurrentVersionExpirationDays !== undefined) {
    rules.push({ action: { type: 'Delete' }, condition: { daysSinceNoncurrentTime: rule.noncurrentVersionExpirationDays, isLive: false, ...prefix } });
  }
  if (rule.abortIncompleteUploadDays !== undefined) rules.push({ action: { type: 'AbortIncompleteMultipartUpload' }, condition: { age: rule.abortIncompleteUploadDays, ...prefix } });
  return rules;
}

/** GCS storage classes back to the portable tiers; a class with no tier (COLDLINE, STANDARD) has no portable form. */
const STORAGE_CLASS_TO_TIER = new Map<string, StorageTier>(Object.entries(TIER_TO_STORAGE_CLASS).map(([tier, storageClass]) => [storageClass, tier as StorageTier]));

/** Which slot of a portable rule one GCS rule fills, or undefined when the GCS rule has no portable form. */
type RuleSlot = { expirationDays: number } | { noncurrentVersionExpirationDays: number } | { abortIncompleteUploadDays: number } | { transition: { days: number; tier: StorageTier } };

function slotOf(rule: GcsLifecycleRule): RuleSlot | undefined {
  const { matchesPrefix: _prefix, ...condition } = rule.condition;
  const keys = Object.keys(condition).sort().join(',');
  const { age, daysSinceNoncurrentTime, isLive } = condition;
  switch (rule.action.type) {
    case 'Delete':
      if (keys === 'age,isLive' && isLive === true && age !== undefined && age >= 1) return { expirationDays: age };
      if (keys === 'daysSinceNoncurrentTime,isLive' && isLive === false && daysSinceNoncurrentTime !== undefined && daysSinceNoncurrentTime >= 1) return { noncurrentVersionExpirationDays: daysSinceNoncurrentTime };
      return undefined;
    case 'SetStorageClass': {
      const tier = STORAGE_CLASS_TO_TIER.get(rule.action.storageClass ?? '');
      return keys === 'age' && tier !== undefined && age !== undefined ? { transition: { days: age, tier } } : undefined;
    }
    case 'AbortIncompleteMultipartUpload':
      return keys === 'age' && age !== undefined && age >= 1 ? { abortIncompleteUploadDays: age } : undefined;
    default:
      return undefined;
  }
}

/**
 * GCS lifecycle rules as portable rules, the inverse of toGcsLifecycleRules: rules of one prefix
 * gather into as few portable rules as their actions allow (one of each action, two transitions),
 * ids `rule-1`, `rule-2`... in order. Undefined when a rule has no portable form (another
 * condition, several prefixes, a storage class with no tier): no portable rule set matches the bucket.
 */
export function toPortableLifecycle(rules: readonly GcsLifecycleRule[]): LifecycleRule[] | undefined {
  const byPrefix = new Map<string, Omit<LifecycleRule, 'id'>[]>();
  for (const rule of canonicalRules(rules)) {
    const prefixes = rule.condition.matchesPrefix ?? [];
    const slot = slotOf(rule);
    if (slot === undefined || prefixes.length > 1 || prefixes[0] === '') return undefined;
    const prefix = prefixes[0] ?? '';
    const group = byPrefix.get(prefix) ?? [];
    byPrefix.set(prefix, group);
    const fits = (portable: Omit<LifecycleRule, 'id'>): boolean =>
      'transition' in slot ? (portable.transitions?.length ?? 0) < 2 && !portable.transitions?.some((t) => t.tier === slot.transition.tier) : Object.keys(slot).every((key) => !(key in portable));
    let portable = group.find(fits);
    if (portable === undefined) {
      portable = prefix ? { prefix } : {};
      group.push(portable);
    }
    if ('transition' in slot) portable.transitions = [...(portable.transitions ?? []), slot.transition];
    else Object.assign(portable, slot);
  }
  return [...byPrefix.values()].flat().map((rule, index) => ({ id: `rule-${index + 1}`, ...rule }));
}

/** Public access prevention as the portable setting: enforced is Blocked, anything else lets grants make objects public. */
export const portablePublicAccess = (iam: DesiredBucket['iamConfiguration']): PublicAccess => (iam.publicAccessPrevention === 'enforced' ? 'Blocked' : 'Allowed');

/** The default KMS key as the portable encryption setting. */
export const portableEncryption = (kmsKey: string | undefined): BucketEncryption => (kmsKey ? { type: 'CustomerManaged', keyId: kmsKey } : { type: 'ProviderManaged' });

/** GCS lifecycle rules in one canonical order, for comparison as a set. */
export function canonicalRules(rules: readonly GcsLifecycleRule[]): GcsLifecycleRule[] {
  const canonical = rules.map((rule) => ({
    action: { type: rule.action.type, ...(rule.action.storageClass ? { storageClass: rule.action.storageClass } : {}) },
    condition: Object.fromEntries(Object.entries(rule.condition).filter(([, value]) => value !== undefined)) as GcsLifecycleRule['condition'],
  }));
  return canonical.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
}
const sortKey = (rule: GcsLifecycleRule): string =>
  JSON.stringify([rule.action.type, rule.action.storageClass ?? '', ...Object.entries(rule.condition).sort(([a], [b]) => (a < b ? -1 : 1))]);

/** The bucket's location: spec.location, else the ProviderConfig's default; GCS reports locations in upper case. */
export const bucketLocation = (bucket: Bucket, settings: Pick<GcpSettings, 'defaultLocation'>): string => (bucket.spec.location ?? settings.defaultLocation).toUpperCase();

/** Uniform bucket-level access always on (ACLs off); public access prevention enforced unless publicAccess is Allowed. */
export function iamConfigurationFor(bucket: Bucket): { uniformBucketLevelAccess: boolean; publicAccessPrevention: 'enforced' | 'inherited' } {
  return { uniformBucketLevelAccess: true, publicAccessPrevention: (bucket.spec.publicAccess ?? 'Blocked') === 'Blocked' ? 'enforced' : 'inherited' };
}

/** The default Cloud KMS key, or undefined for Google-managed encryption. */
export const kmsKeyFor = (bucket: Bucket): string | undefined => (bucket.spec.encryption?.type === 'CustomerManaged' ? bucket.spec.encryption.keyId : undefined);

/** Every managed setting of a bucket, as the spec wants it. */
export interface DesiredBucket {
  location: string;
  storageClass: string;
  versioning: boolean;
  iamConfiguration: { uniformBucketLevelAccess: boolean; publicAccessPrevention: 'enforced' | 'inherited' };
  kmsKey: string | undefined;
  lifecycle: GcsLifecycleRule[];
  /** The lifecycle in the portable shape (the spec's rules; for a bucket, undefined when its rules have no portable form). */
  portableLifecycle: LifecycleRule[] | undefined;
  labels: Record<string, string>;
}

export function desiredBucket(bucket: Bucket, settings: Pick<GcpSettings, 'defaultLocation' | 'storageClass'>, ownerTags: Readonly<Record<string, string>>): DesiredBucket {
  return {
    location: bucketLocation(bucket, settings),
    storageClass: settings.storageClass,
    versioning: bucket.spec.versioning ?? false,
    iamConfiguration: iamConfigurationFor(bucket),
    kmsKey: kmsKeyFor(bucket),
    lifecycle: canonicalRules((bucket.spec.lifecycle ?? []).flatMap(toGcsLifecycleRules)),
    portableLifecycle: bucket.spec.lifecycle ?? [],
    labels: desiredLabels(bucket.spec.labels, ownerTags),
  };
}

/** The same settings as GCS reports them in a bucket resource. */
export function observedBucket(metadata: BucketMetadata): DesiredBucket {
  const iam = metadata.iamConfiguration;
  const lifecycle = canonicalRules((metadata.lifecycle?.rule ?? []) as GcsLifecycleRule[]);
  return {
    location: String(metadata.location ?? '').toUpperCase(),
    storageClass: String(metadata.storageClass ?? DEFAULT_STORAGE_CLASS),
    versioning: metadata.versioning?.enabled === true,
    iamConfiguration: {
      uniformBucketLevelAccess: iam?.uniformBucketLevelAccess?.enabled === true,
      publicAccessPrevention: iam?.publicAccessPrevention === 'enforced' ? 'enforced' : 'inherited',
    },
    kmsKey: metadata.encryption?.defaultKmsKeyName || undefined,
    lifecycle,
    portableLifecycle: toPortableLifecycle(lifecycle),
    labels: { ...((metadata.labels ?? {}) as Record<string, string>) },
  };
}

/**
 * What differs, by spec field: `diff` GCS can patch, `immutableDiff` it cannot (the location).
 * GCS values are compared (never their serialisation); each difference is reported in the portable
 * spec's shape (FieldDiff). Uniform bucket-level access, which k8or always turns on and the spec has
 * no field for, is the provider setting `uniformBucketLevelAccess`, as the storage class is `storageClass`.
 */
export function diffBucket(desired: DesiredBucket, actual: DesiredBucket, ownerTags: Readonly<Record<string, string>>): { diff: FieldDiff[]; immutableDiff: FieldDiff[] } {
  const diff: FieldDiff[] = [];
  const differs = (field: string, want: unknown, have: unknown, portable?: (side: DesiredBucket) => unknown): void => {
    if (!isDeepStrictEqual(want, have)) diff.push({ field, desired: portable ? portable(desired) : want, actual: portable ? portable(actual) : have });
  };
  differs('spec.versioning', desired.versioning, actual.versioning);
  differs('spec.publicAccess', desired.iamConfiguration.publicAccessPrevention, actual.iamConfiguration.publicAccessPrevention, (side) => portablePublicAccess(side.iamConfiguration));
  differs('uniformBucketLevelAccess', desired.iamConfiguration.uniformBucketLevelAccess, actual.iamConfiguration.uniformBucketLevelAccess);
  differs('spec.encryption', desired.kmsKey, actual.kmsKey, (side) => portableEncryption(side.kmsKey));
  if (!isDeepStrictEqual(desired.lifecycle, actual.lifecycle)) diff.push({ field: 'spec.lifecycle', desired: desired.portableLifecycle, actual: actual.portableLifecycle });
  differs('storageClass', desired.storageClass, actual.storageClass);
  diff.push(...diffLabels(desired.labels, actual.labels, ownerTags));
  const immutableDiff = desired.location === actual.location ? [] : [{ field: 'spec.location', desired: desired.location, actual: actual.location }];
  return { diff, immutableDiff };
}

/** The insert body: every managed setting, labels included, so the bucket never exists untagged. */
export function insertBody(desired: DesiredBucket): CreateBucketRequest {
  return {
    location: desired.location,
    storageClass: desired.storageClass,
    versioning: { enabled: desired.versioning },
    iamConfiguration: { uniformBucketLevelAccess: { enabled: desired.iamConfiguration.uniformBucketLevelAccess }, publicAccessPrevention: desired.iamConfiguration.publicAccessPrevention },
    ...(desired.kmsKey ? { encryption: { defaultKmsKeyName: desired.kmsKey } } : {}),
    ...(desired.lifecycle.length ? { lifecycle: { rule: desired.lifecycle } } : {}),
    labels: desired.labels,
  } as CreateBucketRequest;
}

/** A patch carrying only the drifted settings (null removes a setting or a label). */
export function patchBody(desired: DesiredBucket, actual: DesiredBucket, diff: readonly FieldDiff[]): Record<string, unknown> {
  const fields = new Set(diff.map((d) => (d.field.startsWith('spec.labels.') || d.field.startsWith('ownerTags.') ? 'labels' : d.field)));
  const patch: Record<string, unknown> = {};
  if (fields.has('spec.versioning')) patch['versioning'] = { enabled: desired.versioning };
  if (fields.has('spec.publicAccess') || fields.has('uniformBucketLevelAccess')) {
    // The two go together in one iamConfiguration: the one not being repaired keeps the bucket's value.
    const publicAccessPrevention = (fields.has('spec.publicAccess') ? desired : actual).iamConfiguration.publicAccessPrevention;
    const uniformBucketLevelAccess = (fields.has('uniformBucketLevelAccess') ? desired : actual).iamConfiguration.uniformBucketLevelAccess;
    patch['iamConfiguration'] = { uniformBucketLevelAccess: { enabled: uniformBucketLevelAccess }, publicAccessPrevention };
  }
  if (fields.has('spec.encryption')) patch['encryption'] = desired.kmsKey ? { defaultKmsKeyName: desired.kmsKey } : null;
  if (fields.has('spec.lifecycle')) patch['lifecycle'] = desired.lifecycle.length ? { rule: desired.lifecycle } : null;
  if (fields.has('storageClass')) patch['storageClass'] = desired.storageClass;
  if (fields.has('labels')) patch['labels'] = labelsPatch(desired.labels, actual.labels);
  return patch;
}

/**
 * The facts core decides ownership and deletion on: the bucket's identity (its timeCreated and
 * projectNumber, fixed at creation) and its protections (public access prevention, versioning, a
 * retention policy, which blocks deletion once locked).
 */
export function bucketFacts(metadata: BucketMetadata): { identity?: ResourceIdentity; protection: ProtectionSetting[] } {
  const identity = {
    ...(metadata.timeCreated ? { timeCreated: new Date(metadata.timeCreated).toISOString() } : {}),
    ...(metadata.projectNumber !== undefined ? { projectNumber: String(metadata.projectNumber) } : {}),
  };
  const retention = metadata.retentionPolicy;
  return {
    ...(Object.keys(identity).length > 0 ? { identity } : {}),
    protection: [
      { field: 'spec.publicAccess', enabled: metadata.iamConfiguration?.publicAccessPrevention === 'enforced' },
      { field: 'spec.versioning', enabled: metadata.versioning?.enabled === true },
      { field: 'retentionPolicy', enabled: Number(retention?.retentionPeriod ?? 0) > 0, blocksDeletion: retention?.isLocked === true },
    ],
  };
}

/** atProvider: the self link, location, gs:// URL and creation time. */
export function bucketAtProvider(name: string, metadata: BucketMetadata): { id: string; location: string; url: string; createdTime?: string } {
  return {
    id: metadata.selfLink ?? `https://www.googleapis.com/storage/v1/b/${name}`,
    location: String(metadata.location ?? ''),
    url: `gs://${name}`,
    ...(metadata.timeCreated ? { createdTime: new Date(metadata.timeCreated).toISOString() } : {}),
  };
}

/** The reason a bucket's lifecycle is left out of the diff's `actual`: rules the portable spec cannot express. */
function nonPortableLifecycle(rules: readonly GcsLifecycleRule[]): SettingIssue {
  const foreign = rules.filter((rule) => slotOf(rule) === undefined || (rule.condition.matchesPrefix?.length ?? 0) > 1);
  return {
    field: 'spec.lifecycle',
    problem: 'unreadable',
    message: `the bucket's lifecycle has rules with no portable form (${JSON.stringify(foreign)}): only Delete by age of live objects or days noncurrent, SetStorageClass to NEARLINE or ARCHIVE by age, and AbortIncompleteMultipartUpload by age, each with at most one matchesPrefix, map to spec.lifecycle`,
  };
}

// --- the client ---------------------------------------------------------------------------------

/** Object generations deleted at once while emptying a bucket for forceDelete. */
const DELETE_CONCURRENCY = 16;

/** One GCS bucket's client: observe, create, update, delete. Fresh per reconcile. */
export class GcsBucketClient implements ExternalClient<Bucket> {
  readonly #storage: Storage;
  readonly #context: ConnectionContext;
  readonly #settings: GcpSettings;
  readonly #requestTimeoutMs: number;
  /** What each observation read (metageneration and settings), so update patches exactly against it. */
  readonly #reads = new WeakMap<Observation, { metageneration: string; actual: DesiredBucket }>();

  constructor(storage: Storage, context: ConnectionContext, settings: GcpSettings, requestTimeoutMs: number = REQUEST_TIMEOUT_MS) {
    this.#storage = storage;
    this.#context = context;
    this.#settings = settings;
    this.#requestTimeoutMs = requestTimeoutMs;
  }

  get #bucket(): GcsBucket {
    return this.#storage.bucket(this.#context.externalName);
  }

  /** One request (the client makes one attempt per call), recorded, bounded by the request timeout and the call's signal, classified. */
  #call<T>(call: CallOptions, operation: string, run: (bucket: GcsBucket) => Promise<T>): Promise<T> {
    return callGoogle(this.#context, { service: gcsServiceFor(operation), signal: call.signal }, operation, () => withinTimeout(this.#requestTimeoutMs, () => run(this.#bucket)));
  }

  /**
   * The bucket resource, or undefined on a definite 404. A 403 is an error, never absence: another
   * project's bucket (NotOwnedError, see #explainDenial) or a denial of this project's own.
   */
  async #read(call: CallOptions): Promise<BucketMetadata | undefined> {
    try {
      const [metadata] = await this.#call(call, 'buckets.get', (bucket) => bucket.getMetadata());
      return metadata;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      if (answerOf(error).status === 403) await this.#explainDenial(error, call);
      throw error;
    }
  }

  /**
   * After a 403 on the bucket: GCS answers 403 both for another project's bucket and for missing
   * permissions on one's own. When this project's bucket list can be read and the name is not in
   * it, another project owns the name (NotOwnedError: nothing of this object's is there). Otherwise
   * the denial stands as it is.
   */
  async #explainDenial(denied: unknown, call: CallOptions): Promise<void> {
    const name = this.#context.externalName;
    let pageToken: string | undefined;
    try {
      do {
        const query = { prefix: name, maxResults: 1000, autoPaginate: false, ...(pageToken ? { pageToken } : {}) };
        const [page, next] = await callGoogle(this.#context, { service: GcpServices.gcsBucketMetadata, signal: call.signal }, 'buckets.list', () =>
          withinTimeout(this.#requestTimeoutMs, () => this.#storage.getBuckets(query)),
        );
        if (page.some((listed) => listed.name === name)) return;
        pageToken = (next as { pageToken?: string } | null | undefined)?.pageToken || undefined;
      } while (pageToken);
    } catch {
      return;
    }
    const message = denied instanceof Error ? denied.message : String(denied);
    throw new NotOwnedError(`${message}; Cloud Storage bucket "${name}" exists but is not in project ${this.#settings.project}'s bucket list: another project owns the name`, {
      code: 'forbidden',
      cause: denied,
    });
  }

  #desired(bucket: Bucket): DesiredBucket {
    return desiredBucket(bucket, this.#settings, this.#context.ownerTags);
  }

  async observe(bucket: Bucket, call: CallOptions): Promise<Observation> {
    const metadata = await this.#read(call);
    if (metadata === undefined) return { exists: false, upToDate: false, ready: false };
    const actual = observedBucket(metadata);
    const { diff, immutableDiff } = diffBucket(this.#desired(bucket), actual, this.#context.ownerTags);
    const observation: Observation = {
      exists: true,
      ready: true,
      upToDate: diff.length === 0,
      diff,
      immutableDiff,
      atProvider: bucketAtProvider(this.#context.externalName, metadata),
      // GCS always has labels: `{}` means none of k8or's, so the bucket is someone else's.
      ownerTags: ownerTagsFromLabels(actual.labels, this.#context.ownerTags),
      ...bucketFacts(metadata),
      ...(actual.portableLifecycle === undefined ? { settingIssues: [nonPortableLifecycle(actual.lifecycle)] } : {}),
    };
    this.#reads.set(observation, { metageneration: String(metadata.metageneration), actual });
    return observation;
  }

  /** Existence and owner labels: observe's one buckets.get (labels come with it), no settings compared. */
  async probe(_bucket: Bucket, call: CallOptions): Promise<Presence> {
    const metadata = await this.#read(call);
    if (metadata === undefined) return { exists: false };
    return { exists: true, ownerTags: ownerTagsFromLabels(observedBucket(metadata).labels, this.#context.ownerTags), ...bucketFacts(metadata) };
  }

  /**
   * Deletion policy Retain: one patch that removes k8or's owner labels (the user's labels and every
   * setting stay), so another cluster or object can adopt the bucket. A missing bucket, or one
   * without owner labels, has none to remove.
   */
  async release(_bucket: Bucket, call: CallOptions): Promise<void> {
    const metadata = await this.#read(call);
    if (metadata === undefined) return;
    const labels = observedBucket(metadata).labels;
    const owned = Object.keys(ownerTagsFromLabels(labels, this.#context.ownerTags)).length > 0;
    if (!owned) return;
    const ownerKeys = new Set([...Object.values(OwnerTags), ...Object.keys(this.#context.ownerTags)].map(ownerLabelKey));
    const kept = Object.fromEntries(Object.entries(labels).filter(([key]) => !ownerKeys.has(key)));
    try {
      await this.#call(call, 'buckets.patch', (gcs) => gcs.setMetadata({ labels: labelsPatch(kept, labels) } as BucketMetadata, { ifMetagenerationMatch: Number(metadata.metageneration) }));
    } catch (error) {
      if (isNotFound(error)) return;
      if (answerOf(error).status !== 412) throw error;
      throw new RetryableError(`buckets.patch: Cloud Storage bucket "${this.#context.externalName}" changed since it was read (412 conditionNotMet); releasing it again`, { code: 'conditionNotMet', cause: error });
    }
  }

  /**
   * buckets.insert with every setting and the owner labels in the one call. A 409 means the name
   * exists: ours when its owner labels are ours (a repeated create), else NotOwnedError.
   */
  async create(bucket: Bucket, call: CallOptions): Promise<void> {
    const desired = this.#desired(bucket);
    try {
      await this.#call(call, 'buckets.insert', () => this.#storage.createBucket(this.#context.externalName, insertBody(desired)));
    } catch (error) {
      if (answerOf(error).status !== 409) throw error;
      // Only a 403 says "another project's"; a throttled or failed read is retried, never a verdict.
      const existing = await this.#read(call).catch((readError: unknown) => {
        if (readError instanceof NotOwnedError || answerOf(readError).status === 403) return undefined;
        throw readError;
      });
      const found = existing ? ownerTagsFromLabels(observedBucket(existing).labels, this.#context.ownerTags) : {};
      if (existing && isDeepStrictEqual(found, { ...this.#context.ownerTags })) return;
      throw new NotOwnedError(
        `buckets.insert: the Cloud Storage bucket name "${this.#context.externalName}" is taken ${existing ? 'by a bucket without k8or\'s owner labels for this object' : 'by another project'} (409 conflict)`,
        { code: 'conflict', cause: error },
      );
    }
  }

  /**
   * One patch with only the drifted settings, conditional on the metageneration the observation
   * saw: a concurrent change (412) is retried after a fresh observe rather than overwritten. The
   * patch is computed from the spec it is given against what the observation read, so a protection
   * the engine holds (given with the bucket's own value) is left as it is.
   */
  async update(bucket: Bucket, observation: Observation, call: CallOptions): Promise<void> {
    let read = this.#reads.get(observation);
    if (read === undefined) {
      // An observation this client did not make: read the bucket now and patch against that.
      const metadata = await this.#read(call);
      if (metadata === undefined) throw new RetryableError(`Cloud Storage bucket "${this.#context.externalName}" is gone; it will be created again`, { code: 'notFound' });
      read = { metageneration: String(metadata.metageneration), actual: observedBucket(metadata) };
    }
    const { metageneration, actual } = read;
    const desired = this.#desired(bucket);
    // The labels go with every update: adoption and an interrupted create need the owner labels written.
    // What still differs between the spec given and what was read (the observation's own diff was made against the object's spec).
    const { diff } = diffBucket(desired, actual, this.#context.ownerTags);
    const patch = { ...patchBody(desired, actual, diff), labels: labelsPatch(desired.labels, actual.labels) };
    try {
      await this.#call(call, 'buckets.patch', (gcs) => gcs.setMetadata(patch as BucketMetadata, { ifMetagenerationMatch: Number(metageneration) }));
    } catch (error) {
      if (answerOf(error).status !== 412) throw error;
      throw new RetryableError(`buckets.patch: Cloud Storage bucket "${this.#context.externalName}" changed since it was observed (412 conditionNotMet); observing again`, {
        code: 'conditionNotMet',
        cause: error,
      });
    }
  }

  /**
   * buckets.delete. With forceDelete, every object generation (noncurrent ones too) goes first;
   * without, a non-empty bucket stops with DeletionBlockedError. Missing is success.
   */
  async delete(bucket: Bucket, call: CallOptions): Promise<void> {
    if (bucket.spec.forceDelete) await this.#empty(call);
    try {
      await this.#call(call, 'buckets.delete', (gcs) => gcs.delete());
    } catch (error) {
      if (isNotFound(error)) return;
      if (answerOf(error).status !== 409) throw error;
      throw new DeletionBlockedError(
        `Cloud Storage bucket "${this.#context.externalName}" is not empty (409 conflict: BucketNotEmpty); set spec.forceDelete: true to delete its objects with it, or deletionPolicy: Retain to keep it`,
        { code: 'BucketNotEmpty', cause: error },
      );
    }
  }

  /**
   * Deletes every generation of every object, page by page, following each page's token: GCS may
   * answer a page with no object and a nextPageToken, and only a page without a token ends a pass.
   * A pass that deleted anything is followed by another, until one finds the bucket empty.
   */
  async #empty(call: CallOptions): Promise<void> {
    let deleted = 0;
    let pageToken: string | undefined;
    for (;;) {
      let files: File[];
      let next: { pageToken?: string } | null | undefined;
      try {
        const query = { versions: true, maxResults: 1000, autoPaginate: false, ...(pageToken ? { pageToken } : {}) };
        [files, next] = await this.#call(call, 'objects.list', (gcs) => gcs.getFiles(query));
      } catch (error) {
        if (isNotFound(error)) return;
        throw error;
      }
      for (let i = 0; i < files.length; i += DELETE_CONCURRENCY) {
        await Promise.all(
          files.slice(i, i + DELETE_CONCURRENCY).map(async (file) => {
            try {
              await this.#call(call, 'objects.delete', (gcs) => gcs.file(file.name, { generation: file.metadata.generation }).delete());
            } catch (error) {
              if (!isNotFound(error)) throw error;
            }
          }),
        );
      }
      deleted += files.length;
      pageToken = next?.pageToken || undefined;
      if (pageToken) continue;
      if (deleted === 0) return;
      deleted = 0;
    }
  }
}

// --- the connector ------------------------------------------------------------------------------

/**
 * How long one GCS request may take before the call ends with ETIMEDOUT (retryable): the same bound
 * as an Azure attempt's (providers/azure/src/attempt-timeout.ts). The Storage client bounds nothing
 * itself (`withinTimeout`), so without it a stalled request held the call until the reconcile's
 * deadline (2 minutes by default); the engine retries with its backoff, as the client makes one
 * attempt per call.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Internal options of the Bucket connector; none is a user-facing setting. */
export interface GcsConnectorOptions {
  /** How long one request may take; REQUEST_TIMEOUT_MS when absent. Tests shorten it. */
  requestTimeoutMs?: number;
}

function newStorage(settings: GcpSettings): Storage {
  const storage = new Storage({
    projectId: settings.project,
    ...(settings.storageEndpoint ? { apiEndpoint: settings.storageEndpoint.replace(/\/+$/, '') } : {}),
    ...(settings.serviceAccountKey ? { credentials: settings.serviceAccountKey, useAuthWithCustomEndpoint: true } : {}),
    // The engine retries with its own backoff (and its deadline); a client retry loop would hide throttling from it.
    retryOptions: { autoRetry: false },
  });
  // A key from a Secret signs its own JWTs (as the GAPIC clients do): no token exchange round trip.
  if (settings.serviceAccountKey) storage.authClient.useJWTAccessWithScope = true;
  return storage;
}

const clients = new ClientCache<Storage>(newStorage, () => undefined);

/** A Bucket connector; `options` are internal (tests shorten the request timeout). */
export function gcsBucketConnector(options: GcsConnectorOptions = {}): Connector<Bucket> {
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  return {
    /** Builds (or reuses) the Storage client for the ProviderConfig's project, endpoint and credentials. */
    connect(_bucket: Bucket, context: ConnectionContext): Promise<ExternalClient<Bucket>> {
      const settings = gcpSettings(context.providerConfig, context.credentials, 'Bucket');
      return Promise.resolve(new GcsBucketClient(clients.get(settings), context, settings, requestTimeoutMs));
    },

    /**
     * Every bucket of the ProviderConfig's project (buckets.list, every page), with its location and
     * versioning. One call per page, so each page takes its rate-limit token (the client's own paging
     * would send the later pages unpaced).
     */
    async list(context: InventoryContext, call: CallOptions): Promise<InventoryItem<Bucket>[]> {
      const storage = clients.get(gcpSettings(context.providerConfig, context.credentials, 'Bucket'));
      const buckets: GcsBucket[] = [];
      let pageToken: string | undefined;
      do {
        const query = { autoPaginate: false, ...(pageToken ? { pageToken } : {}) };
        const [page, next] = await callGoogle(context, { service: GcpServices.gcsBucketMetadata, signal: call.signal }, 'buckets.list', () =>
          withinTimeout(requestTimeoutMs, () => storage.getBuckets(query)),
        );
        buckets.push(...page);
        pageToken = (next as { pageToken?: string } | null | undefined)?.pageToken;
      } while (pageToken);
      return buckets.map((listed) => ({
        externalName: listed.name,
        spec: { location: String(listed.metadata.location ?? '').toLowerCase(), versioning: listed.metadata.versioning?.enabled === true },
      }));
    },
  };
}

export const bucketConnector: Connector<Bucket> = gcsBucketConnector();

/** Forgets every cached Storage client. */
export async function destroyStorageClients(): Promise<void> {
  await clients.closeAll();
}
