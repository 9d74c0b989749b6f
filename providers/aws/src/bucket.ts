/**
 * Bucket -> Amazon S3: the mapping from the portable spec, observe/diff, and create/update/delete.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketLifecycleCommand,
  DeleteBucketTaggingCommand,
  DeleteObjectsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
  ListBucketsCommand,
  ListObjectVersionsCommand,
  PutBucketEncryptionCommand,
  PutBucketLifecycleConfigurationCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutPublicAccessBlockCommand,
  S3Client,
  type BucketLocationConstraint,
  type LifecycleRule as S3LifecycleRule,
  type PublicAccessBlockConfiguration,
  type ServerSideEncryptionByDefault,
  type TransitionStorageClass,
} from '@aws-sdk/client-s3';
import { isDeepStrictEqual } from 'node:util';
import { type Bucket, type BucketEncryption, type LifecycleRule, type ProviderConfig, type PublicAccess, type StorageTier } from '@k8or/api';
import { DeletionBlockedError, NotOwnedError, type CallOptions, type ConnectionContext, type Connector, type ExternalClient, type FieldDiff, type InventoryContext, type InventoryItem, type Observation, type Presence, type ProtectionSetting, type ResourceIdentity } from '@k8or/core';
import { ClientCache } from './client-cache.js';
import { clientSettings, DEFAULT_REGION, endpointFor } from './config.js';
import { afterEffect, callAws, hasCode, isAccessDenied } from './errors.js';
import { takeTokenPerAttempt } from './retry-tokens.js';
import { retryWithoutQuota } from './retry-strategy.js';
import { AwsServices, s3ServiceFor } from './rate-limits.js';
import { carriesOwnerTags, desiredTags, diffTags, fromTagList, ownerTagKeys, ownerTagsIn, toTagList } from './tags.js';

// --- mapping: portable spec -> S3 ---------------------------------------------------------------

/** Portable storage tiers and the S3 storage classes they become. */
export const TIER_TO_STORAGE_CLASS: Record<StorageTier, TransitionStorageClass> = { InfrequentAccess: 'STANDARD_IA', Archive: 'GLACIER' };

/** The region a bucket lives in: spec.location, else the ProviderConfig's region, else us-east-1. */
export function bucketRegion(bucket: Bucket, providerConfig: ProviderConfig): string {
  return bucket.spec.location ?? providerConfig.spec.region ?? DEFAULT_REGION;
}

/** S3's default encryption for the spec: SSE-S3 (AES256), or SSE-KMS with the customer's key. */
export function encryptionFor(bucket: Bucket): ServerSideEncryptionByDefault {
  const encryption = bucket.spec.encryption;
  return encryption?.type === 'CustomerManaged' ? { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: encryption.keyId } : { SSEAlgorithm: 'AES256' };
}

/** All four Block Public Access settings on for Blocked, all off for Allowed. */
export function publicAccessBlockFor(publicAccess: PublicAccess): PublicAccessBlockConfiguration {
  const block = publicAccess === 'Blocked';
  return { BlockPublicAcls: block, IgnorePublicAcls: block, BlockPublicPolicy: block, RestrictPublicBuckets: block };
}

/** A portable lifecycle rule as an S3 rule. */
export function toS3LifecycleRule(rule: LifecycleRule): S3LifecycleRule {
  return {
    ID: rule.id,
    Status: rule.enabled === false ? 'Disabled' : 'Enabled',
    Filter: { Prefix: rule.prefix ?? '' },
    ...(rule.expirationDays !== undefined ? { Expiration: { Days: rule.expirationDays } } : {}),
    ...(rule.transitions?.length
      ? { Transitions: [...rule.transitions].sort((a, b) => a.days - b.days).map((t) => ({ Days: t.days, StorageClass: TIER_TO_STORAGE_CLASS[t.tier] })) }
      : {}),
    ...(rule.noncurrentVersionExpirationDays !== undefined ? { NoncurrentVersionExpiration: { NoncurrentDays: rule.noncurrentVersionExpirationDays } } : {}),
    ...(rule.abortIncompleteUploadDays !== undefined ? { AbortIncompleteMultipartUpload: { DaysAfterInitiation: rule.abortIncompleteUploadDays } } : {}),
  };
}

/** An S3 rule in the portable shape, for comparison; storage classes without a portable tier keep their S3 name. */
export function fromS3LifecycleRule(rule: S3LifecycleRule): LifecycleRule {
  const tierOf = (storageClass: string | undefined): string =>
    Object.entries(TIER_TO_STORAGE_CLASS).find(([, value]) => value === storageClass)?.[0] ?? storageClass ?? '';
  const prefix = rule.Filter?.Prefix ?? rule.Prefix ?? '';
  return normalizeRule({
    id: rule.ID ?? '',
    enabled: rule.Status === 'Enabled',
    ...(prefix ? { prefix } : {}),
    ...(rule.Expiration?.Days !== undefined ? { expirationDays: rule.Expiration.Days } : {}),
    ...(rule.NoncurrentVersionExpiration?.NoncurrentDays !== undefined ? { noncurrentVersionExpirationDays: rule.NoncurrentVersionExpiration.NoncurrentDays } : {}),
    ...(rule.AbortIncompleteMultipartUpload?.DaysAfterInitiation !== undefined
      ? { abortIncompleteUploadDays: rule.AbortIncompleteMultipartUpload.DaysAfterInitiation }
      : {}),
    ...(rule.Transitions?.length ? { transitions: rule.Transitions.map((t) => ({ days: t.Days ?? 0, tier: tierOf(t.StorageClass) as StorageTier })) } : {}),
  });
}

/**
 * What in S3 lifecycle rules the portable spec cannot express (a rule without an ID, a tag or size
 * filter, an expiry by date or of delete markers, a noncurrent transition, a storage class with no
 * tier), or undefined when every rule maps to spec.lifecycle.
 */
export function nonPortableLifecycle(rules: readonly S3LifecycleRule[]): string | undefined {
  const tiers: readonly string[] = Object.values(TIER_TO_STORAGE_CLASS);
  const reasons = rules.flatMap((rule) => {
    const name = `rule ${JSON.stringify(rule.ID ?? '')}`;
    const filter = rule.Filter;
    return [
      !rule.ID ? `${name} has no ID` : undefined,
      filter?.Tag || filter?.And || filter?.ObjectSizeGreaterThan !== undefined || filter?.ObjectSizeLessThan !== undefined ? `${name} filters by tag or size` : undefined,
      rule.Expiration?.Date || rule.Expiration?.ExpiredObjectDeleteMarker === true ? `${name} expires by date or expires delete markers` : undefined,
      rule.NoncurrentVersionTransitions?.length || rule.NoncurrentVersionExpiration?.NewerNoncurrentVersions !== undefined ? `${name} moves or keeps noncurrent versions` : undefined,
      rule.Transitions?.some((t) => t.Date !== undefined || !tiers.includes(t.StorageClass ?? '')) ? `${name} transitions by date or to a storage class with no portable tier` : undefined,
    ].filter((reason): reason is string => reason !== undefined);
  });
  return reasons.length ? reasons.join('; ') : undefined;
}

/** S3 default encryption as the portable setting: a KMS key named is CustomerManaged; SSE-S3, the AWS managed key and none are ProviderManaged (the nearest). */
export function portableEncryption(sse: ServerSideEncryptionByDefault | undefined): BucketEncryption {
  return sse?.KMSMasterKeyID ? { type: 'CustomerManaged', keyId: sse.KMSMasterKeyID } : { type: 'ProviderManaged' };
}

/** Fills defaults, drops unset fields and orders transitions, so equal rules compare equal whatever their key order. */
export function normalizeRule(rule: LifecycleRule): LifecycleRule {
  const { prefix, transitions, enabled, ...rest } = rule;
  const set = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)) as Omit<LifecycleRule, 'prefix' | 'transitions' | 'enabled'>;
  return {
    ...set,
    enabled: enabled ?? true,
    ...(prefix ? { prefix } : {}),
    ...(transitions?.length ? { transitions: [...transitions].sort((a, b) => a.days - b.days).map(({ days, tier }) => ({ days, tier })) } : {}),
  };
}

const sortedRules = (rules: readonly LifecycleRule[]): LifecycleRule[] => rules.map(normalizeRule).sort((a, b) => a.id.localeCompare(b.id));

// --- observe: S3 -> comparable settings -----------------------------------------------------------

/** The managed settings of one bucket, as S3 reports them. */
export interface ObservedBucket {
  region: string;
  versioning: boolean;
  /** Blocked (all four on), Allowed (all off or none configured), or the four values when mixed. */
  publicAccess: PublicAccess | PublicAccessBlockConfiguration;
  encryption: ServerSideEncryptionByDefault | undefined;
  lifecycle: LifecycleRule[];
  /** Why the lifecycle rules have no portable form (a rule the spec cannot express), else undefined. */
  lifecycleNotPortable?: string | undefined;
  /** Empty when the bucket has no tag set at all. */
  tags: Record<string, string>;
}

export function publicAccessOf(block: PublicAccessBlockConfiguration | undefined): PublicAccess | PublicAccessBlockConfiguration {
  const values = [block?.BlockPublicAcls, block?.IgnorePublicAcls, block?.BlockPublicPolicy, block?.RestrictPublicBuckets].map((v) => v === true);
  if (values.every(Boolean)) return 'Blocked';
  if (!values.some(Boolean)) return 'Allowed';
  return block ?? {};
}

/**
 * Every managed setting that differs between the spec and S3, with spec field paths. Values are
 * compared structurally in their portable shape: key order (kubectl and Go servers sort keys) never
 * makes a difference.
 */
export function diffBucket(bucket: Bucket, observed: ObservedBucket, ownerTags: Readonly<Record<string, string>>): FieldDiff[] {
  const diff: FieldDiff[] = [];
  const compare = (field: string, desired: unknown, actual: unknown): void => {
    if (!isDeepStrictEqual(desired, actual)) diff.push({ field, desired, actual });
  };
  compare('spec.versioning', bucket.spec.versioning ?? false, observed.versioning);
  // A mix of the four Block Public Access settings is reported as Allowed, its nearest portable value (not all blocked).
  const publicAccess = bucket.spec.publicAccess ?? 'Blocked';
  if (!isDeepStrictEqual(publicAccess, observed.publicAccess)) diff.push({ field: 'spec.publicAccess', desired: publicAccess, actual: typeof observed.publicAccess === 'string' ? observed.publicAccess : 'Allowed' });
  const actualEncryption = observed.encryption && {
    SSEAlgorithm: observed.encryption.SSEAlgorithm,
    ...(observed.encryption.KMSMasterKeyID ? { KMSMasterKeyID: observed.encryption.KMSMasterKeyID } : {}),
  };
  if (!isDeepStrictEqual(encryptionFor(bucket), actualEncryption)) diff.push({ field: 'spec.encryption', desired: bucket.spec.encryption ?? { type: 'ProviderManaged' }, actual: portableEncryption(actualEncryption) });
  const lifecycle = sortedRules(observed.lifecycle);
  if (observed.lifecycleNotPortable !== undefined || !isDeepStrictEqual(sortedRules(bucket.spec.lifecycle ?? []), lifecycle)) {
    diff.push({ field: 'spec.lifecycle', desired: bucket.spec.lifecycle ?? [], actual: observed.lifecycleNotPortable === undefined ? lifecycle : undefined });
  }
  diff.push(...diffTags(desiredTags(bucket.spec.labels, ownerTags), observed.tags, ownerTagKeys(ownerTags)));
  return diff;
}

/** The bucket's protections as found: a public access block (any of the four settings on) and versioning. Neither blocks deletion. */
export function bucketProtection(observed: Pick<ObservedBucket, 'publicAccess' | 'versioning'>): ProtectionSetting[] {
  return [
    { field: 'spec.publicAccess', enabled: observed.publicAccess !== 'Allowed' },
    { field: 'spec.versioning', enabled: observed.versioning },
  ];
}

/**
 * atProvider for a bucket: its ARN, region and URL (path-style under an endpoint override, whose
 * user info and query string are never published).
 */
export function bucketAtProvider(name: string, region: string, endpoint: string | undefined): { id: string; location: string; url: string } {
  const base = endpoint && URL.canParse(endpoint) ? ((u) => `${u.protocol}//${u.host}${u.pathname}`)(new URL(endpoint)) : endpoint?.replace(/[?#].*$/, '');
  const url = base ? `${base.replace(/\/+$/, '')}/${name}` : `https://${name}.s3.${region}.amazonaws.com`;
  return { id: `arn:aws:s3:::${name}`, location: region, url };
}

// --- the client ---------------------------------------------------------------------------------

/** One S3 bucket's client: observe, create, update, delete. */
export class S3BucketClient implements ExternalClient<Bucket> {
  readonly #s3: S3Client;
  readonly #context: ConnectionContext;
  readonly #region: string;
  readonly #endpoint: string | undefined;

  constructor(s3: S3Client, context: ConnectionContext, region: string, endpoint: string | undefined) {
    this.#s3 = s3;
    this.#context = context;
    this.#region = region;
    this.#endpoint = endpoint;
  }

  get #name(): string {
    return this.#context.externalName;
  }

  /** One SDK call, recorded and classified, aborted with the engine's signal. */
  #call<T>(call: CallOptions, operation: string, send: (s3: S3Client, abort: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    return callAws(this.#context, { service: s3ServiceFor(operation), signal: call.signal }, operation, () => send(this.#s3, { abortSignal: call.signal }));
  }

  /** The call's result, or undefined when AWS answers one of `codes` (a setting never configured, a resource already gone...). */
  async #callOrUndefined<T>(
    call: CallOptions,
    operation: string,
    codes: string[],
    send: (s3: S3Client, abort: { abortSignal: AbortSignal }) => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await this.#call(call, operation, send);
    } catch (error) {
      if (hasCode(error, ...codes)) return undefined;
      throw error;
    }
  }

  /**
   * GetBucketLocation doubles as the existence check: unlike HeadBucket it answers with an error
   * code. Only NoSuchBucket (or a bare 404) is absence. S3 answers AccessDenied both for another
   * account's bucket and for missing permissions on one's own, so a denial is told apart by
   * whether the account lists the name; it is never taken for "does not exist".
   */
  async #locate(call: CallOptions): Promise<string | undefined> {
    const Bucket = this.#name;
    let location;
    try {
      location = await this.#callOrUndefined(call, 'GetBucketLocation', ['NoSuchBucket', 'NotFound'], (s3, abort) => s3.send(new GetBucketLocationCommand({ Bucket }), abort));
    } catch (error) {
      if (isAccessDenied(error)) await this.#explainDenial(error, call);
      throw error;
    }
    if (location === undefined) return undefined;
    const constraint = location.LocationConstraint as string | undefined;
    // Legacy answers: empty for us-east-1, "EU" for eu-west-1.
    return !constraint ? 'us-east-1' : constraint === 'EU' ? 'eu-west-1' : constraint;
  }

  /**
   * After an AccessDenied on the bucket: when this account may list its buckets and the name is not
   * among them, another account owns it (NotOwnedError). Otherwise the denial stands as it is.
   */
  async #explainDenial(denied: unknown, call: CallOptions): Promise<void> {
    const Bucket = this.#name;
    let listed: boolean;
    try {
      const page = await this.#call(call, 'ListBuckets', (s3, abort) => s3.send(new ListBucketsCommand({ Prefix: Bucket, MaxBuckets: 1000 }), abort));
      if (page.ContinuationToken) return;
      listed = (page.Buckets ?? []).some((b) => b.Name === Bucket);
    } catch {
      return;
    }
    if (listed) return;
    const message = denied instanceof Error ? denied.message : String(denied);
    throw new NotOwnedError(`${message}; S3 bucket "${Bucket}" exists but is not in this account's bucket list: another AWS account owns the name`, {
      code: 'AccessDenied',
      cause: denied,
    });
  }

  async #read(region: string, call: CallOptions): Promise<ObservedBucket> {
    const Bucket = this.#name;
    const [versioning, publicAccessBlock, encryption, lifecycle, tagging] = await Promise.all([
      this.#call(call, 'GetBucketVersioning', (s3, abort) => s3.send(new GetBucketVersioningCommand({ Bucket }), abort)),
      this.#callOrUndefined(call, 'GetPublicAccessBlock', ['NoSuchPublicAccessBlockConfiguration'], (s3, abort) => s3.send(new GetPublicAccessBlockCommand({ Bucket }), abort)),
      this.#callOrUndefined(call, 'GetBucketEncryption', ['ServerSideEncryptionConfigurationNotFoundError'], (s3, abort) => s3.send(new GetBucketEncryptionCommand({ Bucket }), abort)),
      this.#callOrUndefined(call, 'GetBucketLifecycleConfiguration', ['NoSuchLifecycleConfiguration'], (s3, abort) =>
        s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket }), abort),
      ),
      this.#callOrUndefined(call, 'GetBucketTagging', ['NoSuchTagSet'], (s3, abort) => s3.send(new GetBucketTaggingCommand({ Bucket }), abort)),
    ]);
    return {
      region,
      versioning: versioning.Status === 'Enabled',
      publicAccess: publicAccessOf(publicAccessBlock?.PublicAccessBlockConfiguration),
      encryption: encryption?.ServerSideEncryptionConfiguration?.Rules?.[0]?.ApplyServerSideEncryptionByDefault,
      lifecycle: (lifecycle?.Rules ?? []).map(fromS3LifecycleRule),
      lifecycleNotPortable: nonPortableLifecycle(lifecycle?.Rules ?? []),
      tags: tagging ? fromTagList(tagging.TagSet) : {},
    };
  }

  /**
   * The bucket's identity: its CreationDate from ListBuckets (page by page, from the name on), the
   * one value S3 fixes at creation; undefined where this account does not list the name or may not
   * list its buckets (identity is then unknown, never an error of its own).
   */
  async #identity(call: CallOptions): Promise<ResourceIdentity | undefined> {
    const Bucket = this.#name;
    let ContinuationToken: string | undefined;
    try {
      do {
        const page = await this.#call(call, 'ListBuckets', (s3, abort) => s3.send(new ListBucketsCommand({ Prefix: Bucket, MaxBuckets: 1000, ...(ContinuationToken ? { ContinuationToken } : {}) }), abort));
        const listed = page.Buckets?.find((b) => b.Name === Bucket);
        if (listed) return listed.CreationDate ? { creationDate: listed.CreationDate.toISOString() } : undefined;
        ContinuationToken = page.ContinuationToken;
      } while (ContinuationToken);
    } catch (error) {
      if (isAccessDenied(error)) return undefined;
      throw error;
    }
    return undefined;
  }

  async observe(bucket: Bucket, call: CallOptions): Promise<Observation> {
    const region = await this.#locate(call);
    if (region === undefined) return { exists: false, upToDate: false, ready: false };
    const [observed, identity] = await Promise.all([this.#read(region, call), this.#identity(call)]);
    const diff = diffBucket(bucket, observed, this.#context.ownerTags);
    const immutableDiff = region === this.#region ? [] : [{ field: 'spec.location', desired: this.#region, actual: region }];
    return {
      exists: true,
      ready: true,
      upToDate: diff.length === 0,
      diff,
      immutableDiff,
      atProvider: bucketAtProvider(this.#name, region, this.#endpoint),
      // S3 buckets have tags: a bucket without any is reported with none ({}), never as "unknown".
      ownerTags: ownerTagsIn(observed.tags, ownerTagKeys(this.#context.ownerTags)),
      ...(identity ? { identity } : {}),
      protection: bucketProtection(observed),
      ...(observed.lifecycleNotPortable === undefined ? {} : { settingIssues: [{ field: 'spec.lifecycle', problem: 'unreadable' as const, message: `the bucket's lifecycle has no portable form: ${observed.lifecycleNotPortable}` }] }),
    };
  }

  /**
   * Existence and owner tags in one call, GetBucketTagging: NoSuchTagSet is a bucket without tags,
   * NoSuchBucket is absence. A denial is explained as observe explains it (another account's bucket
   * is NotOwnedError), else thrown. A bare 404 (an endpoint that names no code) is taken for
   * neither: observe's own existence check decides, so the probe never says "gone" where observe
   * would not, and a bucket whose tags it cannot read is an error, never unowned.
   */
  async probe(_bucket: Bucket, call: CallOptions): Promise<Presence> {
    const Bucket = this.#name;
    let tags: Record<string, string>;
    try {
      tags = fromTagList((await this.#call(call, 'GetBucketTagging', (s3, abort) => s3.send(new GetBucketTaggingCommand({ Bucket }), abort))).TagSet);
    } catch (error) {
      if (hasCode(error, 'NoSuchBucket')) return { exists: false };
      if (!hasCode(error, 'NoSuchTagSet')) {
        if (isAccessDenied(error)) await this.#explainDenial(error, call);
        if (hasCode(error, 'NotFound') && (await this.#locate(call)) === undefined) return { exists: false };
        throw error;
      }
      tags = {};
    }
    // No protection of a bucket blocks its deletion (emptying is forceDelete's): the probe reads none.
    const identity = await this.#identity(call);
    return { exists: true, ownerTags: ownerTagsIn(tags, ownerTagKeys(this.#context.ownerTags)), ...(identity ? { identity } : {}) };
  }

  /**
   * Deletion policy Retain: the bucket's tag set without k8or's owner tags (PutBucketTagging, or
   * DeleteBucketTagging when nothing else is left), so another cluster or object can adopt it.
   * The labels and every other setting stay. A missing bucket or tag set has none to remove.
   */
  async release(_bucket: Bucket, call: CallOptions): Promise<void> {
    const Bucket = this.#name;
    let tagging;
    try {
      tagging = await this.#callOrUndefined(call, 'GetBucketTagging', ['NoSuchTagSet'], (s3, abort) => s3.send(new GetBucketTaggingCommand({ Bucket }), abort));
    } catch (error) {
      if (hasCode(error, 'NoSuchBucket')) return;
      throw error;
    }
    const tags = fromTagList(tagging?.TagSet);
    const owned = ownerTagKeys(this.#context.ownerTags);
    if (!Object.keys(tags).some((key) => owned.includes(key))) return;
    const TagSet = toTagList(Object.fromEntries(Object.entries(tags).filter(([key]) => !owned.includes(key))));
    if (TagSet.length === 0) {
      await this.#callOrUndefined(call, 'DeleteBucketTagging', ['NoSuchBucket'], (s3, abort) => s3.send(new DeleteBucketTaggingCommand({ Bucket }), abort));
      return;
    }
    await this.#callOrUndefined(call, 'PutBucketTagging', ['NoSuchBucket'], (s3, abort) => s3.send(new PutBucketTaggingCommand({ Bucket, Tagging: { TagSet } }), abort));
  }

  /**
   * CreateBucket in the bucket's region (us-east-1 takes no LocationConstraint) with the owner tags
   * and labels in the same call (CreateBucketConfiguration.Tags), then every managed setting.
   *
   * The settings go on only once the bucket is known to be this object's: S3 answers
   * BucketAlreadyOwnedByYou for a bucket this account already has (and 200 in us-east-1), which may
   * be someone else's. So create reads the tags back; without exactly our owner tags it hands the
   * decision to the engine (a RetryableError: the next observe finds the bucket and applies the
   * ownership check, the adopt annotation or the interrupted-create recovery) and writes nothing.
   */
  async create(bucket: Bucket, call: CallOptions): Promise<void> {
    const Bucket = this.#name;
    const CreateBucketConfiguration = {
      ...(this.#region === 'us-east-1' ? {} : { LocationConstraint: this.#region as BucketLocationConstraint }),
      Tags: toTagList(desiredTags(bucket.spec.labels, this.#context.ownerTags)),
    };
    const created = await this.#callOrUndefined(call, 'CreateBucket', ['BucketAlreadyOwnedByYou'], (s3, abort) =>
      s3.send(new CreateBucketCommand({ Bucket, CreateBucketConfiguration }), abort),
    );
    // From here on a bucket may be ours, made by this call: a failure no longer means nothing happened.
    let found: Record<string, string>;
    try {
      const tags = await this.#callOrUndefined(call, 'GetBucketTagging', ['NoSuchTagSet'], (s3, abort) => s3.send(new GetBucketTaggingCommand({ Bucket }), abort));
      found = fromTagList(tags?.TagSet);
    } catch (error) {
      throw created === undefined ? error : afterEffect(error);
    }
    if (!carriesOwnerTags(found, this.#context.ownerTags)) {
      // Outside us-east-1 a 200 is a bucket made just now: an endpoint that dropped the tags gets them right after.
      const madeNow = created !== undefined && this.#region !== 'us-east-1' && Object.keys(ownerTagsIn(found, ownerTagKeys(this.#context.ownerTags))).length === 0;
      if (!madeNow) {
        // A 200 in us-east-1 may also be a bucket this call made on an endpoint that dropped its tags: the
        // outcome is unknown, unless the bucket carries another owner's tags (this call would have written ours).
        const anotherOwner = Object.keys(ownerTagsIn(found, ownerTagKeys(this.#context.ownerTags))).length > 0;
        throw this.#notOurs(created === undefined ? 'BucketAlreadyOwnedByYou' : '200 in us-east-1 (its answer for a bucket the account already had, too)', created === undefined || anotherOwner);
      }
    }
    try {
      if (!carriesOwnerTags(found, this.#context.ownerTags)) await this.#putTags(bucket, call);
      await this.#putPublicAccess(bucket, call);
      await this.#putEncryption(bucket, call);
      if (bucket.spec.versioning) await this.#putVersioning(bucket, call);
      if (bucket.spec.lifecycle?.length) await this.#putLifecycle(bucket, call);
    } catch (error) {
      throw afterEffect(error);
    }
  }

  /**
   * A bucket this account already had, without this object's owner tags: someone else's (another
   * tool, or another object of this cluster), made between the observe that found the name free and
   * this create. Never written to; the engine reports it, and `k8or.io/adopt` takes it over.
   */
  #notOurs(answer: string, noEffect: boolean): NotOwnedError {
    return new NotOwnedError(
      `CreateBucket answered ${answer}: S3 bucket "${this.#name}" exists in this account without this object's owner tags, so k8or leaves it alone (set k8or.io/adopt: "true" to take it over)`,
      { code: 'BucketAlreadyOwnedByYou', noEffect },
    );
  }

  /**
   * Repairs each setting the observation found different, to the spec it is given, and only those.
   * A protection the engine holds (a resync never lowers one) comes with the cloud's value in that
   * spec: a setting whose spec value is what the bucket has (in the portable shape; a partial
   * public access block counts as Allowed) is left as it is.
   */
  async update(bucket: Bucket, observation: Observation, call: CallOptions): Promise<void> {
    const diff = observation.diff ?? [];
    const drifted = (prefix: string): boolean => diff.some(({ field }) => field === prefix || field.startsWith(`${prefix}.`));
    const toChange = (field: string, wanted: unknown): boolean => diff.some((d) => d.field === field && !isDeepStrictEqual(wanted, d.actual));
    if (drifted('spec.labels') || drifted('ownerTags')) await this.#putTags(bucket, call);
    if (toChange('spec.publicAccess', bucket.spec.publicAccess ?? 'Blocked')) await this.#putPublicAccess(bucket, call);
    if (drifted('spec.encryption')) await this.#putEncryption(bucket, call);
    if (toChange('spec.versioning', bucket.spec.versioning ?? false)) await this.#putVersioning(bucket, call);
    if (drifted('spec.lifecycle')) await this.#putLifecycle(bucket, call);
  }

  /**
   * DeleteBucket. A non-empty bucket is emptied first only with forceDelete (every object version
   * and delete marker); otherwise S3's BucketNotEmpty becomes DeletionBlockedError. Missing is success.
   */
  async delete(bucket: Bucket, call: CallOptions): Promise<void> {
    const Bucket = this.#name;
    if (bucket.spec.forceDelete) await this.#empty(call);
    try {
      await this.#callOrUndefined(call, 'DeleteBucket', ['NoSuchBucket'], (s3, abort) => s3.send(new DeleteBucketCommand({ Bucket }), abort));
    } catch (error) {
      if (!hasCode(error, 'BucketNotEmpty')) throw error;
      throw new DeletionBlockedError(
        `S3 bucket "${Bucket}" is not empty (BucketNotEmpty); set spec.forceDelete: true to delete its objects with it, or deletionPolicy: Retain to keep it`,
        { code: 'BucketNotEmpty', cause: error },
      );
    }
  }

  /** Deletes every object version and delete marker, 1,000 at a time, page by page. */
  async #empty(call: CallOptions): Promise<void> {
    const Bucket = this.#name;
    for (;;) {
      const page = await this.#callOrUndefined(call, 'ListObjectVersions', ['NoSuchBucket'], (s3, abort) => s3.send(new ListObjectVersionsCommand({ Bucket, MaxKeys: 1000 }), abort));
      if (page === undefined) return;
      const entries = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]
        .filter((v) => v.Key !== undefined)
        .map((v) => ({ Key: v.Key as string, ...(v.VersionId ? { VersionId: v.VersionId } : {}) }));
      if (entries.length === 0) return;
      // Deleting what was listed shrinks the listing, so the next page starts from the top again.
      for (let i = 0; i < entries.length; i += 1000) {
        const Objects = entries.slice(i, i + 1000);
        const result = await this.#call(call, 'DeleteObjects', (s3, abort) => s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects, Quiet: true } }), abort));
        const failed = result.Errors?.[0];
        if (failed) throw new DeletionBlockedError(`could not delete "${failed.Key}" from S3 bucket "${Bucket}": ${failed.Code}: ${failed.Message}`, { code: failed.Code });
      }
    }
  }

  async #putTags(bucket: Bucket, call: CallOptions): Promise<void> {
    const TagSet = toTagList(desiredTags(bucket.spec.labels, this.#context.ownerTags));
    await this.#call(call, 'PutBucketTagging', (s3, abort) => s3.send(new PutBucketTaggingCommand({ Bucket: this.#name, Tagging: { TagSet } }), abort));
  }

  async #putPublicAccess(bucket: Bucket, call: CallOptions): Promise<void> {
    const PublicAccessBlockConfiguration = publicAccessBlockFor(bucket.spec.publicAccess ?? 'Blocked');
    await this.#call(call, 'PutPublicAccessBlock', (s3, abort) => s3.send(new PutPublicAccessBlockCommand({ Bucket: this.#name, PublicAccessBlockConfiguration }), abort));
  }

  async #putEncryption(bucket: Bucket, call: CallOptions): Promise<void> {
    const Rules = [{ ApplyServerSideEncryptionByDefault: encryptionFor(bucket), BucketKeyEnabled: bucket.spec.encryption?.type === 'CustomerManaged' }];
    await this.#call(call, 'PutBucketEncryption', (s3, abort) => s3.send(new PutBucketEncryptionCommand({ Bucket: this.#name, ServerSideEncryptionConfiguration: { Rules } }), abort));
  }

  /** Versioning can only be suspended, never removed, once enabled: false means Suspended. */
  async #putVersioning(bucket: Bucket, call: CallOptions): Promise<void> {
    const Status = bucket.spec.versioning ? 'Enabled' : 'Suspended';
    await this.#call(call, 'PutBucketVersioning', (s3, abort) => s3.send(new PutBucketVersioningCommand({ Bucket: this.#name, VersioningConfiguration: { Status } }), abort));
  }

  async #putLifecycle(bucket: Bucket, call: CallOptions): Promise<void> {
    const rules = bucket.spec.lifecycle ?? [];
    if (rules.length === 0) {
      await this.#call(call, 'DeleteBucketLifecycle', (s3, abort) => s3.send(new DeleteBucketLifecycleCommand({ Bucket: this.#name }), abort));
      return;
    }
    const LifecycleConfiguration = { Rules: rules.map(toS3LifecycleRule) };
    await this.#call(call, 'PutBucketLifecycleConfiguration', (s3, abort) => s3.send(new PutBucketLifecycleConfigurationCommand({ Bucket: this.#name, LifecycleConfiguration }), abort));
  }
}

// --- the connector ------------------------------------------------------------------------------

const clients = new ClientCache((settings) => takeTokenPerAttempt(new S3Client({ ...settings, followRegionRedirects: true, retryStrategy: retryWithoutQuota(settings.maxAttempts) })));

/** Builds (or reuses) the S3 client for the bucket's region and the ProviderConfig's endpoint and credentials. */
export const bucketConnector: Connector<Bucket> = {
  async connect(bucket: Bucket, context: ConnectionContext): Promise<ExternalClient<Bucket>> {
    const region = bucketRegion(bucket, context.providerConfig);
    const s3 = clients.get(clientSettings(context.providerConfig, context.credentials, 'Bucket', region));
    return new S3BucketClient(s3, context, region, endpointFor(context.providerConfig, 'Bucket'));
  },

  /** Every bucket of the account (ListBuckets, all regions), with its region (GetBucketLocation) as spec.location. */
  async list(context: InventoryContext, call: CallOptions): Promise<InventoryItem<Bucket>[]> {
    const region = context.providerConfig.spec.region ?? DEFAULT_REGION;
    const s3 = clients.get(clientSettings(context.providerConfig, context.credentials, 'Bucket', region));
    const abort = { abortSignal: call.signal };
    const paced = { service: AwsServices.s3Buckets, signal: call.signal };
    const items: InventoryItem<Bucket>[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await callAws(context, paced, 'ListBuckets', () => s3.send(new ListBucketsCommand({ ...(ContinuationToken ? { ContinuationToken } : {}) }), abort));
      for (const listed of page.Buckets ?? []) {
        const Bucket = listed.Name;
        if (!Bucket) continue;
        const location = listed.BucketRegion ?? (await callAws(context, paced, 'GetBucketLocation', () => s3.send(new GetBucketLocationCommand({ Bucket }), abort))).LocationConstraint;
        items.push({ externalName: Bucket, spec: { location: location || DEFAULT_REGION } });
      }
      ContinuationToken = page.ContinuationToken;
    } while (ContinuationToken);
    return items;
  },
};

/** Closes every cached S3 client (their keep-alive sockets). */
export function destroyS3Clients(): void {
  clients.destroyAll();
}
