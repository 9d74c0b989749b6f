/**
 * Bucket -> Amazon S3: the mapping from the portable spec, observe/diff, and create/update/delete.
 */
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketLifecycleCommand,
  DeleteObjectsCommand,
  GetBucketEncryptionCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  GetPublicAccessBlockCommand,
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
import { OwnerTags, type Bucket, type LifecycleRule, type ProviderConfig, type PublicAccess, type StorageTier } from '@k8or/api';
import { DeletionBlockedError, type CallOptions, type ConnectionContext, type Connector, type ExternalClient, type FieldDiff, type Observation } from '@k8or/core';
import { ClientCache } from './client-cache.js';
import { clientSettings, DEFAULT_REGION, endpointFor } from './config.js';
import { callAws, hasCode } from './errors.js';
import { desiredTags, diffTags, fromTagList, ownerTagsIn, toTagList } from './tags.js';

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

/** Fills defaults and orders transitions, so equal rules compare equal. */
export function normalizeRule(rule: LifecycleRule): LifecycleRule {
  const { prefix, transitions, enabled, ...rest } = rule;
  return {
    ...rest,
    enabled: enabled ?? true,
    ...(prefix ? { prefix } : {}),
    ...(transitions?.length ? { transitions: [...transitions].sort((a, b) => a.days - b.days) } : {}),
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
  /** Undefined when the bucket has no tag set at all. */
  tags: Record<string, string> | undefined;
}

export function publicAccessOf(block: PublicAccessBlockConfiguration | undefined): PublicAccess | PublicAccessBlockConfiguration {
  const values = [block?.BlockPublicAcls, block?.IgnorePublicAcls, block?.BlockPublicPolicy, block?.RestrictPublicBuckets].map((v) => v === true);
  if (values.every(Boolean)) return 'Blocked';
  if (!values.some(Boolean)) return 'Allowed';
  return block ?? {};
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Every managed setting that differs between the spec and S3, with spec field paths. */
export function diffBucket(bucket: Bucket, observed: ObservedBucket, ownerTags: Readonly<Record<string, string>>): FieldDiff[] {
  const diff: FieldDiff[] = [];
  const desiredVersioning = bucket.spec.versioning ?? false;
  if (desiredVersioning !== observed.versioning) diff.push({ field: 'spec.versioning', desired: desiredVersioning, actual: observed.versioning });
  const desiredPublicAccess = bucket.spec.publicAccess ?? 'Blocked';
  if (!sameJson(desiredPublicAccess, observed.publicAccess)) diff.push({ field: 'spec.publicAccess', desired: desiredPublicAccess, actual: observed.publicAccess });
  const desiredEncryption = encryptionFor(bucket);
  const actualEncryption = observed.encryption && {
    SSEAlgorithm: observed.encryption.SSEAlgorithm,
    ...(observed.encryption.KMSMasterKeyID ? { KMSMasterKeyID: observed.encryption.KMSMasterKeyID } : {}),
  };
  if (!sameJson(desiredEncryption, actualEncryption)) diff.push({ field: 'spec.encryption', desired: desiredEncryption, actual: actualEncryption });
  const desiredLifecycle = sortedRules(bucket.spec.lifecycle ?? []);
  const actualLifecycle = sortedRules(observed.lifecycle);
  if (!sameJson(desiredLifecycle, actualLifecycle)) diff.push({ field: 'spec.lifecycle', desired: desiredLifecycle, actual: actualLifecycle });
  diff.push(...diffTags(desiredTags(bucket.spec.labels, ownerTags), observed.tags ?? {}, ownerTagKeys(ownerTags)));
  return diff;
}

const ownerTagKeys = (ownerTags: Readonly<Record<string, string>>): string[] => [...new Set([...Object.values(OwnerTags), ...Object.keys(ownerTags)])];

/** atProvider for a bucket: its ARN, region and URL (path-style under an endpoint override). */
export function bucketAtProvider(name: string, region: string, endpoint: string | undefined): { id: string; location: string; url: string } {
  const url = endpoint ? `${endpoint.replace(/\/+$/, '')}/${name}` : `https://${name}.s3.${region}.amazonaws.com`;
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
    return callAws(this.#context, operation, () => send(this.#s3, { abortSignal: call.signal }));
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
   * code. S3 answers AccessDenied both for another account's bucket and for missing permissions,
   * so both report "not found" here and create tells them apart (BucketAlreadyExists / AccessDenied).
   */
  async #locate(call: CallOptions): Promise<string | undefined> {
    const Bucket = this.#name;
    const location = await this.#callOrUndefined(call, 'GetBucketLocation', ['NoSuchBucket', 'NotFound', 'AccessDenied', 'Forbidden'], (s3, abort) =>
      s3.send(new GetBucketLocationCommand({ Bucket }), abort),
    );
    if (location === undefined) return undefined;
    const constraint = location.LocationConstraint as string | undefined;
    // Legacy answers: empty for us-east-1, "EU" for eu-west-1.
    return !constraint ? 'us-east-1' : constraint === 'EU' ? 'eu-west-1' : constraint;
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
      tags: tagging ? fromTagList(tagging.TagSet) : undefined,
    };
  }

  async observe(bucket: Bucket, call: CallOptions): Promise<Observation> {
    const region = await this.#locate(call);
    if (region === undefined) return { exists: false, upToDate: false, ready: false };
    const observed = await this.#read(region, call);
    const diff = diffBucket(bucket, observed, this.#context.ownerTags);
    const immutableDiff = region === this.#region ? [] : [{ field: 'spec.location', desired: this.#region, actual: region }];
    return {
      exists: true,
      ready: true,
      upToDate: diff.length === 0,
      diff,
      immutableDiff,
      atProvider: bucketAtProvider(this.#name, region, this.#endpoint),
      // A bucket without any tag set is judged by the engine's own create record, as on a cloud without tags.
      ownerTags: observed.tags === undefined ? undefined : ownerTagsIn(observed.tags, ownerTagKeys(this.#context.ownerTags)),
    };
  }

  /**
   * CreateBucket in the bucket's region (us-east-1 takes no LocationConstraint), then the owner tags
   * first, then every managed setting. BucketAlreadyOwnedByYou is success: create may be repeated.
   */
  async create(bucket: Bucket, call: CallOptions): Promise<void> {
    const Bucket = this.#name;
    const configuration = this.#region === 'us-east-1' ? {} : { CreateBucketConfiguration: { LocationConstraint: this.#region as BucketLocationConstraint } };
    await this.#callOrUndefined(call, 'CreateBucket', ['BucketAlreadyOwnedByYou'], (s3, abort) => s3.send(new CreateBucketCommand({ Bucket, ...configuration }), abort));
    await this.#putTags(bucket, call);
    await this.#putPublicAccess(bucket, call);
    await this.#putEncryption(bucket, call);
    if (bucket.spec.versioning) await this.#putVersioning(bucket, call);
    if (bucket.spec.lifecycle?.length) await this.#putLifecycle(bucket, call);
  }

  /** Repairs each setting the observation found different, and only those. */
  async update(bucket: Bucket, observation: Observation, call: CallOptions): Promise<void> {
    const fields = (observation.diff ?? []).map((d) => d.field);
    const drifted = (prefix: string): boolean => fields.some((field) => field === prefix || field.startsWith(`${prefix}.`));
    if (drifted('spec.labels') || drifted('ownerTags')) await this.#putTags(bucket, call);
    if (drifted('spec.publicAccess')) await this.#putPublicAccess(bucket, call);
    if (drifted('spec.encryption')) await this.#putEncryption(bucket, call);
    if (drifted('spec.versioning')) await this.#putVersioning(bucket, call);
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

const clients = new ClientCache((settings) => new S3Client({ ...settings, followRegionRedirects: true }));

/** Builds (or reuses) the S3 client for the bucket's region and the ProviderConfig's endpoint and credentials. */
export const bucketConnector: Connector<Bucket> = {
  async connect(bucket: Bucket, context: ConnectionContext): Promise<ExternalClient<Bucket>> {
    const region = bucketRegion(bucket, context.providerConfig);
    const s3 = clients.get(clientSettings(context.providerConfig, context.credentials, 'Bucket', region));
    return new S3BucketClient(s3, context, region, endpointFor(context.providerConfig, 'Bucket'));
  },
};

/** Closes every cached S3 client (their keep-alive sockets). */
export function destroyS3Clients(): void {
  clients.destroyAll();
}
