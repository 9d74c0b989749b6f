import { S3Errors } from './errors.js';
import type { BucketTag } from './store.js';
import { children, text, type ParsedXml } from './xml.js';

/**
 * The `<Tag>` children of a tag set (PutBucketTagging's `<TagSet>`, CreateBucket's `<Tags>`),
 * validated as S3 validates bucket tags: keys unique, at most 50, 1-128 characters, not in the
 * `aws:` namespace; values at most 256 characters. The whole set is refused on the first violation.
 */
export function parseBucketTags(tagSet: ParsedXml): BucketTag[] {
  const tags = children(tagSet, 'Tag').map((tag) => ({ Key: text(tag, 'Key'), Value: text(tag, 'Value') ?? '' }));
  if (tags.some((t) => t.Key === undefined)) throw S3Errors.malformedXml();
  const keys = tags.map((t) => t.Key ?? '');
  if (new Set(keys).size !== keys.length) throw S3Errors.invalidTag('Cannot provide multiple Tags with the same key');
  if (tags.length > 50) throw S3Errors.invalidTag('Bucket tag count cannot be greater than 50');
  if (keys.some((k) => k.toLowerCase().startsWith('aws:'))) throw S3Errors.invalidTag('System tags cannot be added/updated by requester');
  if (keys.some((k) => k.length === 0 || k.length > 128)) throw S3Errors.invalidTag('The TagKey you have provided is invalid');
  if (tags.some((t) => t.Value.length > 256)) throw S3Errors.invalidTag('The TagValue you have provided is invalid');
  return tags.map((t) => ({ Key: t.Key ?? '', Value: t.Value }));
}
