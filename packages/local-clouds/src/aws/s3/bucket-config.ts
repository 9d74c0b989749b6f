import { S3Errors } from './errors.js';
import { noContent, ok, ownedBucket, type S3FakeState, type S3Request, type S3Response } from './request.js';
import type { PublicAccessBlock } from './store.js';
import { parseBucketTags } from './tags.js';
import { children, fromParsed, isParsedXml, parseXmlBody, text, xmlDocument, type ParsedXml } from './xml.js';

const body = (request: S3Request): string => request.body.toString('utf8');

// --- versioning -----------------------------------------------------------------------------

export function getVersioning(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  return ok(xmlDocument('VersioningConfiguration', bucket.versioning ? [['Status', bucket.versioning]] : []));
}

/** PutBucketVersioning: Enabled or Suspended; once enabled a bucket can never return to unversioned. */
export function putVersioning(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const status = text(parseXmlBody(body(request), 'VersioningConfiguration'), 'Status');
  if (status !== 'Enabled' && status !== 'Suspended') throw S3Errors.malformedXml();
  bucket.versioning = status;
  return ok();
}

// --- tagging --------------------------------------------------------------------------------

export function getTagging(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  if (!bucket.tags) throw S3Errors.noSuchTagSet(bucket.name);
  return ok(xmlDocument('Tagging', [['TagSet', bucket.tags.map((t) => ['Tag', [['Key', t.Key], ['Value', t.Value]]] as const)]]));
}

/** PutBucketTagging replaces the whole tag set (see parseBucketTags for S3's rules). */
export function putTagging(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const tagSet = parseXmlBody(body(request), 'Tagging')['TagSet'];
  bucket.tags = parseBucketTags(isParsedXml(tagSet) ? tagSet : {});
  return noContent();
}

export function deleteTagging(state: S3FakeState, request: S3Request): S3Response {
  ownedBucket(state, request).tags = undefined;
  return noContent();
}

// --- default encryption ---------------------------------------------------------------------

const SSE_ALGORITHMS = new Set(['AES256', 'aws:kms', 'aws:kms:dsse']);

export function getEncryption(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  if (!bucket.encryption) throw S3Errors.noSuchEncryption(bucket.name);
  return ok(xmlDocument('ServerSideEncryptionConfiguration', fromParsed(bucket.encryption)));
}

/** PutBucketEncryption: one rule; a KMS key id only with an aws:kms algorithm. */
export function putEncryption(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const configuration = parseXmlBody(body(request), 'ServerSideEncryptionConfiguration');
  const rules = children(configuration, 'Rule');
  if (rules.length !== 1) throw S3Errors.malformedXml();
  const byDefault = rules[0]?.['ApplyServerSideEncryptionByDefault'];
  if (!isParsedXml(byDefault)) throw S3Errors.malformedXml();
  const algorithm = text(byDefault, 'SSEAlgorithm') ?? '';
  if (!SSE_ALGORITHMS.has(algorithm)) throw S3Errors.malformedXml();
  if (text(byDefault, 'KMSMasterKeyID') !== undefined && algorithm === 'AES256') {
    throw S3Errors.invalidArgument('a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms or aws:kms:dsse', 'ApplyServerSideEncryptionByDefault');
  }
  bucket.encryption = configuration;
  return ok();
}

/** DeleteBucketEncryption: S3 falls back to SSE-S3 where that is the default for new buckets. */
export function deleteEncryption(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  bucket.encryption = state.defaultEncryption
    ? { Rule: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' }, BucketKeyEnabled: 'false' }] }
    : undefined;
  return noContent();
}

// --- public access block --------------------------------------------------------------------

const PAB_FIELDS = ['BlockPublicAcls', 'IgnorePublicAcls', 'BlockPublicPolicy', 'RestrictPublicBuckets'] as const;

export function getPublicAccessBlock(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const block = bucket.publicAccessBlock;
  if (!block) throw S3Errors.noSuchPublicAccessBlock(bucket.name);
  return ok(xmlDocument('PublicAccessBlockConfiguration', PAB_FIELDS.map((field) => [field, block[field]] as const)));
}

/** PutPublicAccessBlock: absent settings are false, as on S3. */
export function putPublicAccessBlock(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const configuration = parseXmlBody(body(request), 'PublicAccessBlockConfiguration');
  const block = {} as PublicAccessBlock;
  for (const field of PAB_FIELDS) {
    const value = text(configuration, field);
    if (value !== undefined && value !== 'true' && value !== 'false') throw S3Errors.malformedXml();
    block[field] = value === 'true';
  }
  bucket.publicAccessBlock = block;
  return ok();
}

export function deletePublicAccessBlock(state: S3FakeState, request: S3Request): S3Response {
  ownedBucket(state, request).publicAccessBlock = undefined;
  return noContent();
}

// --- lifecycle ------------------------------------------------------------------------------

const LIFECYCLE_ACTIONS = ['Expiration', 'Transition', 'NoncurrentVersionExpiration', 'NoncurrentVersionTransition', 'AbortIncompleteMultipartUpload'];
/** Minimum transition ages S3 enforces per storage class. */
const MIN_TRANSITION_DAYS: Record<string, number> = { STANDARD_IA: 30, ONEZONE_IA: 30 };
const STORAGE_CLASSES = new Set(['GLACIER', 'STANDARD_IA', 'ONEZONE_IA', 'INTELLIGENT_TIERING', 'DEEP_ARCHIVE', 'GLACIER_IR']);

export function getLifecycle(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  if (!bucket.lifecycle) throw S3Errors.noSuchLifecycle(bucket.name);
  return ok(xmlDocument('LifecycleConfiguration', fromParsed(bucket.lifecycle)));
}

function validateLifecycleRule(rule: ParsedXml, ids: Set<string>): void {
  const id = text(rule, 'ID') ?? '';
  if (id.length > 255) throw S3Errors.invalidArgument('ID length should not exceed allowed limit of 255', 'ID', id);
  if (id && ids.has(id)) throw S3Errors.invalidArgument('Rule ID must be unique. Found same ID for more than one rule', 'ID', id);
  ids.add(id);
  const status = text(rule, 'Status');
  if (status !== 'Enabled' && status !== 'Disabled') throw S3Errors.malformedXml();
  if (rule['Filter'] === undefined && rule['Prefix'] === undefined) throw S3Errors.malformedXml();
  if (!LIFECYCLE_ACTIONS.some((action) => rule[action] !== undefined)) {
    throw S3Errors.invalidRequest('At least one action needs to be specified in a rule');
  }
  const transitions = children(rule, 'Transition');
  for (const transition of transitions) {
    const storageClass = text(transition, 'StorageClass') ?? '';
    if (!STORAGE_CLASSES.has(storageClass)) throw S3Errors.malformedXml();
    const days = Number(text(transition, 'Days') ?? 0);
    const minimum = MIN_TRANSITION_DAYS[storageClass] ?? 0;
    if (days < minimum) {
      throw S3Errors.invalidArgument(`'Days' in Transition action must be greater than or equal to ${minimum} for storageClass '${storageClass}'`, 'Days', String(days));
    }
  }
  const expiration = rule['Expiration'];
  const expirationDays = isParsedXml(expiration) ? Number(text(expiration, 'Days') ?? NaN) : NaN;
  if (transitions.some((t) => Number(text(t, 'Days') ?? 0) >= expirationDays)) {
    throw S3Errors.invalidArgument(`'Days' in the Expiration action for filter must be greater than 'Days' in the Transition action`, 'Days');
  }
}

/** PutBucketLifecycleConfiguration: replaces every rule; up to 1,000 rules, each valid on its own. */
export function putLifecycle(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const configuration = parseXmlBody(body(request), 'LifecycleConfiguration');
  const rules = children(configuration, 'Rule');
  if (rules.length === 0 || rules.length > 1000) throw S3Errors.malformedXml();
  const ids = new Set<string>();
  for (const rule of rules) validateLifecycleRule(rule, ids);
  bucket.lifecycle = configuration;
  return ok();
}

export function deleteLifecycle(state: S3FakeState, request: S3Request): S3Response {
  ownedBucket(state, request).lifecycle = undefined;
  return noContent();
}
