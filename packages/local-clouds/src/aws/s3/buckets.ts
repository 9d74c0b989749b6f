import { validateS3BucketName } from '@k8or/api';
import { S3Errors } from './errors.js';
import { noContent, ok, ownedBucket, type S3FakeState, type S3Request, type S3Response } from './request.js';
import { isEmpty, newBucket } from './store.js';
import { parseBucketTags } from './tags.js';
import { isParsedXml, parseXmlBody, text, xmlDocument, type XmlElement } from './xml.js';

const US_EAST_1 = 'us-east-1';
const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/**
 * CreateBucket. No LocationConstraint means us-east-1; "us-east-1" given explicitly is
 * InvalidLocationConstraint; a regional endpoint (signing region other than us-east-1) only creates
 * buckets in its own region. `<Tags>` in the CreateBucketConfiguration are validated as
 * PutBucketTagging validates them and stored with the bucket in the same step, so a refused tag set
 * creates nothing. Re-creating one's own bucket is BucketAlreadyOwnedByYou, except in us-east-1 where
 * S3 answers 200 for legacy compatibility (the existing bucket and its tags are left as they are);
 * another account's name is BucketAlreadyExists.
 */
export function createBucket(state: S3FakeState, request: S3Request): S3Response {
  const name = request.bucket ?? '';
  if (validateS3BucketName(name).length > 0) throw S3Errors.invalidBucketName(name);
  const body = request.body.toString('utf8').trim();
  const configuration = body ? parseXmlBody(body, 'CreateBucketConfiguration') : {};
  const constraint = text(configuration, 'LocationConstraint');
  if (constraint !== undefined && (constraint === US_EAST_1 || !REGION.test(constraint))) throw S3Errors.invalidLocationConstraint(constraint);
  const region = constraint ?? US_EAST_1;
  if (request.signingRegion !== US_EAST_1 && request.signingRegion !== region) {
    throw S3Errors.illegalLocationConstraint(
      constraint === undefined
        ? 'The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.'
        : `The ${constraint} location constraint is incompatible for the region specific endpoint this request was sent to.`,
    );
  }
  const tagsElement = configuration['Tags'];
  const tags = tagsElement === undefined ? [] : parseBucketTags(isParsedXml(tagsElement) ? tagsElement : {});
  const existing = state.buckets.get(name);
  if (existing) {
    if (existing.owner !== request.account) throw S3Errors.bucketAlreadyExists(name);
    if (existing.region === US_EAST_1 && region === US_EAST_1) return ok(undefined, { location: `/${name}` });
    throw S3Errors.bucketAlreadyOwnedByYou(name);
  }
  state.buckets.set(name, newBucket(name, request.account, region, state.defaultEncryption, tags.length > 0 ? tags : undefined));
  return ok(undefined, { location: `/${name}` });
}

/** HeadBucket: 200 with the bucket's region; errors have no body (the SDK sees NotFound / Forbidden). */
export function headBucket(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  return ok(undefined, { 'x-amz-bucket-region': bucket.region });
}

export function deleteBucket(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  if (!isEmpty(bucket)) throw S3Errors.bucketNotEmpty(bucket.name);
  state.buckets.delete(bucket.name);
  return noContent();
}

/** GetBucketLocation: empty for us-east-1, as S3 answers. */
export function getBucketLocation(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  return ok(xmlDocument('LocationConstraint', bucket.region === US_EAST_1 ? '' : bucket.region));
}

/** ListBuckets: the caller's own buckets, by name, those starting with `prefix` when given. */
export function listBuckets(state: S3FakeState, request: S3Request): S3Response {
  const prefix = request.query.get('prefix') ?? '';
  const buckets = [...state.buckets.values()]
    .filter((b) => b.owner === request.account && b.name.startsWith(prefix))
    .sort((a, b) => a.name.localeCompare(b.name));
  const entries: XmlElement[] = buckets.map((b) => [
    'Bucket',
    [
      ['Name', b.name],
      ['CreationDate', b.created.toISOString()],
      ['BucketRegion', b.region],
    ],
  ]);
  return ok(
    xmlDocument('ListAllMyBucketsResult', [
      ['Owner', [['ID', request.account], ['DisplayName', request.account]]],
      ['Buckets', entries],
    ]),
  );
}
