/** The buckets resource: insert, get, patch, delete, with metageneration preconditions and GCS's checks. */
import { createHash } from 'node:crypto';
import { GcsErrors } from './errors.js';
import type { GcsState, Json, StoredBucket } from './state.js';

const STORAGE_CLASSES = new Set(['STANDARD', 'NEARLINE', 'COLDLINE', 'ARCHIVE', 'MULTI_REGIONAL', 'REGIONAL', 'DURABLE_REDUCED_AVAILABILITY']);
const MULTI_REGIONS = new Set(['US', 'EU', 'ASIA']);
const DUAL_REGIONS = new Set(['NAM4', 'EUR4', 'EUR5', 'EUR7', 'EUR8', 'ASIA1']);
/** Region names such as us-central1, europe-west4, northamerica-northeast2. */
const REGION = /^[a-z]+-[a-z]+\d+$/;
const LIFECYCLE_ACTIONS = new Set(['Delete', 'SetStorageClass', 'AbortIncompleteMultipartUpload']);
const KMS_KEY = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;
const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;
/** Fields the server computes; a client may send them back but never changes them. */
const OUTPUT_ONLY = ['kind', 'id', 'selfLink', 'projectNumber', 'metageneration', 'generation', 'etag', 'timeCreated', 'updated', 'locationType', 'owner'];
const IMMUTABLE = ['name', 'location'];

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Bucket name rules as GCS checks them on insert (cloud.google.com/storage/docs/buckets#naming). */
function checkName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw GcsErrors.required('Bucket name');
  const parts = name.split('.');
  const ok =
    /^[a-z0-9][a-z0-9._-]*[a-z0-9]$/.test(name) &&
    (name.includes('.') ? name.length <= 222 && parts.every((p) => p.length >= 1 && p.length <= 63) : name.length >= 3 && name.length <= 63) &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name) &&
    !name.startsWith('goog') &&
    !/g[o0]{2}g[l1]e/.test(name);
  if (!ok) throw GcsErrors.invalid(`Invalid bucket name: '${name}'`);
  return name;
}

/** A location GCS knows: a multi-region, a dual-region or a region; GCS stores it in upper case. */
function checkLocation(location: unknown): string {
  if (typeof location !== 'string') throw GcsErrors.invalid('The specified location constraint is not valid.');
  const upper = location.toUpperCase();
  if (!MULTI_REGIONS.has(upper) && !DUAL_REGIONS.has(upper) && !REGION.test(location.toLowerCase())) {
    throw GcsErrors.invalid('The specified location constraint is not valid.');
  }
  return upper;
}

function checkLabels(labels: unknown): void {
  if (labels === undefined || labels === null) return;
  if (!isObject(labels)) throw GcsErrors.invalid('Invalid argument: labels must be an object.');
  const entries = Object.entries(labels).filter(([, value]) => value !== null);
  if (entries.length > 64) throw GcsErrors.invalid('Too many labels: a bucket can have at most 64 labels.');
  for (const [key, value] of entries) {
    if (!LABEL_KEY.test(key)) throw GcsErrors.invalid(`Invalid label key '${key}': keys start with a lowercase letter and hold at most 63 lowercase letters, digits, '_' and '-'.`);
    if (typeof value !== 'string' || !LABEL_VALUE.test(value)) {
      throw GcsErrors.invalid(`Invalid label value for key '${key}': values hold at most 63 lowercase letters, digits, '_' and '-'.`);
    }
  }
}

function checkLifecycle(lifecycle: unknown): void {
  if (lifecycle === undefined || lifecycle === null) return;
  if (!isObject(lifecycle)) throw GcsErrors.invalid('Invalid argument: lifecycle.');
  const rules = lifecycle['rule'] ?? [];
  if (!Array.isArray(rules)) throw GcsErrors.invalid('Invalid argument: lifecycle.rule must be a list.');
  if (rules.length > 100) throw GcsErrors.invalid('A lifecycle configuration can have at most 100 rules.');
  for (const rule of rules as unknown[]) {
    const action = isObject(rule) ? rule['action'] : undefined;
    const condition = isObject(rule) ? rule['condition'] : undefined;
    const type = isObject(action) ? action['type'] : undefined;
    if (typeof type !== 'string' || !LIFECYCLE_ACTIONS.has(type)) throw GcsErrors.invalid(`Invalid lifecycle action type: ${String(type)}.`);
    if (type === 'SetStorageClass' && (!isObject(action) || typeof action['storageClass'] !== 'string' || !STORAGE_CLASSES.has(action['storageClass']))) {
      throw GcsErrors.invalid('A SetStorageClass lifecycle action needs a valid storageClass.');
    }
    if (!isObject(condition) || Object.keys(condition).length === 0) throw GcsErrors.invalid('A lifecycle rule needs at least one condition.');
    for (const field of ['age', 'daysSinceNoncurrentTime', 'numNewerVersions']) {
      const value = condition[field];
      if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0)) throw GcsErrors.invalid(`Invalid lifecycle condition ${field}: ${String(value)}.`);
    }
  }
}

function checkIamConfiguration(iam: unknown): void {
  if (iam === undefined || iam === null) return;
  if (!isObject(iam)) throw GcsErrors.invalid('Invalid argument: iamConfiguration.');
  const prevention = iam['publicAccessPrevention'];
  if (prevention !== undefined && prevention !== 'enforced' && prevention !== 'inherited' && prevention !== 'unspecified') {
    throw GcsErrors.invalid(`Invalid value for publicAccessPrevention: ${String(prevention)}.`);
  }
}

function checkEncryption(encryption: unknown): void {
  if (encryption === undefined || encryption === null) return;
  const key = isObject(encryption) ? encryption['defaultKmsKeyName'] : undefined;
  if (key !== undefined && key !== null && (typeof key !== 'string' || !KMS_KEY.test(key))) {
    throw GcsErrors.invalid(`Invalid argument: defaultKmsKeyName must be of the form projects/*/locations/*/keyRings/*/cryptoKeys/*; found '${String(key)}'.`);
  }
}

function checkResource(resource: Json): void {
  if (resource['storageClass'] !== undefined && (typeof resource['storageClass'] !== 'string' || !STORAGE_CLASSES.has(resource['storageClass']))) {
    throw GcsErrors.invalid(`Invalid storage class: ${String(resource['storageClass'])}`);
  }
  checkLabels(resource['labels']);
  checkLifecycle(resource['lifecycle']);
  checkIamConfiguration(resource['iamConfiguration']);
  checkEncryption(resource['encryption']);
}

/** RFC 7396 merge patch, as GCS patch semantics: objects merge, arrays and scalars replace, null removes. */
function mergePatch(target: Json, patch: Json): Json {
  const result: Json = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else if (isObject(value) && isObject(result[key])) result[key] = mergePatch(result[key], value);
    else if (isObject(value)) result[key] = mergePatch({}, value);
    else result[key] = value;
  }
  return result;
}

/** Normalises what GCS normalises: locations upper case, uniform access mirrored into bucketPolicyOnly. */
function normalize(resource: Json): Json {
  const iam = isObject(resource['iamConfiguration']) ? resource['iamConfiguration'] : {};
  const ubla = isObject(iam['uniformBucketLevelAccess']) ? iam['uniformBucketLevelAccess'] : isObject(iam['bucketPolicyOnly']) ? iam['bucketPolicyOnly'] : { enabled: false };
  const prevention = iam['publicAccessPrevention'] === 'enforced' ? 'enforced' : 'inherited';
  const versioning = isObject(resource['versioning']) ? resource['versioning'] : undefined;
  const lifecycle = isObject(resource['lifecycle']) ? resource['lifecycle'] : undefined;
  return {
    ...resource,
    iamConfiguration: { bucketPolicyOnly: { enabled: ubla['enabled'] === true }, uniformBucketLevelAccess: { enabled: ubla['enabled'] === true }, publicAccessPrevention: prevention },
    ...(versioning ? { versioning: { enabled: versioning['enabled'] === true } } : {}),
    ...(lifecycle && Array.isArray(lifecycle['rule']) && lifecycle['rule'].length === 0 ? { lifecycle: undefined } : {}),
  };
}

function stripOutputOnly(body: Json): Json {
  return Object.fromEntries(Object.entries(body).filter(([key]) => !OUTPUT_ONLY.includes(key)));
}

const projectNumberOf = (project: string): string => String(parseInt(createHash('sha256').update(project).digest('hex').slice(0, 10), 16));

/** The bucket resource as GCS answers it. */
export function bucketResource(name: string, bucket: StoredBucket, endpoint: string): Json {
  const resource = Object.fromEntries(Object.entries(bucket.resource).filter(([, value]) => value !== undefined));
  const location = String(resource['location']);
  return {
    kind: 'storage#bucket',
    selfLink: `${endpoint}/storage/v1/b/${encodeURIComponent(name)}`,
    id: name,
    name,
    projectNumber: bucket.projectNumber,
    metageneration: String(bucket.metageneration),
    ...resource,
    locationType: MULTI_REGIONS.has(location) ? 'multi-region' : DUAL_REGIONS.has(location) ? 'dual-region' : 'region',
    etag: Buffer.from(`${name}:${bucket.metageneration}`).toString('base64'),
    timeCreated: bucket.timeCreated,
    updated: bucket.updated,
    rpo: 'DEFAULT',
  };
}

/** buckets.getStorageLayout: a flat namespace (the fake has no hierarchical namespace). */
export function storageLayout(name: string, bucket: StoredBucket): Json {
  const location = String(bucket.resource['location']);
  return {
    kind: 'storage#storageLayout',
    bucket: name,
    location,
    locationType: MULTI_REGIONS.has(location) ? 'multi-region' : DUAL_REGIONS.has(location) ? 'dual-region' : 'region',
    hierarchicalNamespace: { enabled: false },
  };
}

/** ifMetagenerationMatch / ifMetagenerationNotMatch, as GCS checks them. */
export function checkMetageneration(bucket: StoredBucket, query: URLSearchParams): void {
  const match = query.get('ifMetagenerationMatch');
  const notMatch = query.get('ifMetagenerationNotMatch');
  if (match !== null && match !== String(bucket.metageneration)) throw GcsErrors.preconditionFailed();
  if (notMatch !== null && notMatch === String(bucket.metageneration)) throw GcsErrors.preconditionFailed();
}

/** buckets.insert: a new bucket in `project`, with GCS's defaults (STANDARD in US, public access prevention inherited). */
export function insertBucket(state: GcsState, project: string, body: Json): { name: string; bucket: StoredBucket } {
  const name = checkName(body['name']);
  const resource = stripOutputOnly(body);
  resource['location'] = checkLocation(resource['location'] ?? 'US');
  resource['storageClass'] ??= 'STANDARD';
  checkResource(resource);
  const existing = state.buckets.get(name);
  if (existing) throw existing.project === project ? GcsErrors.alreadyOwned() : GcsErrors.nameUnavailable();
  const now = new Date().toISOString();
  const bucket: StoredBucket = {
    resource: normalize(resource),
    project,
    projectNumber: projectNumberOf(project),
    metageneration: 1,
    timeCreated: now,
    updated: now,
    objects: [],
  };
  state.buckets.set(name, bucket);
  return { name, bucket };
}

/** buckets.patch: merge-patch semantics; every successful patch is a new metageneration. */
export function patchBucket(name: string, bucket: StoredBucket, body: Json): void {
  for (const field of IMMUTABLE) {
    const value = body[field];
    if (value === undefined) continue;
    const current = field === 'name' ? name : bucket.resource[field];
    const same = field === 'location' ? String(value).toUpperCase() === current : value === current;
    if (!same) throw GcsErrors.invalid(`The ${field} of a bucket cannot be changed.`);
  }
  const patched = mergePatch(bucket.resource, stripOutputOnly(body));
  checkResource(patched);
  bucket.resource = normalize(patched);
  bucket.metageneration += 1;
  bucket.updated = new Date().toISOString();
}
