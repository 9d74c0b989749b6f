import { createHash, randomBytes } from 'node:crypto';
import { S3Error, S3Errors } from './errors.js';
import { keptHeaders } from './objects.js';
import { noContent, ok, ownedBucket, type S3FakeState, type S3Request, type S3Response } from './request.js';
import { putObject, type MultipartUpload } from './store.js';
import { children, parseXmlBody, text, xmlDocument, type XmlElement } from './xml.js';

// Multipart uploads, as `aws s3 cp` makes them above its threshold (8 MB): CreateMultipartUpload,
// UploadPart, CompleteMultipartUpload, AbortMultipartUpload and ListParts.

const MIN_PART_SIZE = 5 * 1024 * 1024;
const MAX_PART_NUMBER = 10_000;

const noSuchUpload = (uploadId: string): S3Error =>
  new S3Error('NoSuchUpload', 404, 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', { UploadId: uploadId });

/** The upload a request names, in the bucket and key it names (NoSuchUpload otherwise). */
function uploadOf(state: S3FakeState, request: S3Request): MultipartUpload {
  ownedBucket(state, request);
  const uploadId = request.query.get('uploadId') ?? '';
  const upload = state.uploads.get(uploadId);
  if (!upload || upload.bucket !== request.bucket || upload.key !== request.key) throw noSuchUpload(uploadId);
  return upload;
}

function discard(state: S3FakeState, upload: MultipartUpload): void {
  for (const part of upload.parts.values()) state.bodies.remove(part.bodyId);
  state.uploads.delete(upload.id);
}

/** CreateMultipartUpload (POST ?uploads): an upload id; the object's headers are taken now. */
export function createMultipartUpload(state: S3FakeState, request: S3Request): S3Response {
  const bucket = ownedBucket(state, request);
  const id = randomBytes(32).toString('base64url');
  const headers = Object.fromEntries(Object.entries(keptHeaders(request, bucket)).filter(([name]) => !name.startsWith('x-amz-checksum-')));
  state.uploads.set(id, { id, bucket: bucket.name, key: request.key ?? '', initiated: new Date(), headers, parts: new Map() });
  return ok(
    xmlDocument('InitiateMultipartUploadResult', [
      ['Bucket', bucket.name],
      ['Key', request.key ?? ''],
      ['UploadId', id],
    ]),
    headers['x-amz-server-side-encryption'] ? { 'x-amz-server-side-encryption': headers['x-amz-server-side-encryption'] } : {},
  );
}

/** UploadPart (PUT ?partNumber&uploadId): a part, replacing one of the same number. */
export function uploadPart(state: S3FakeState, request: S3Request): S3Response {
  // UploadPartCopy is the same path with a copy source: not served.
  if (request.headers['x-amz-copy-source'] !== undefined) throw S3Errors.notImplemented();
  const upload = uploadOf(state, request);
  const raw = request.query.get('partNumber') ?? '';
  const partNumber = Number(raw);
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
    throw S3Errors.invalidArgument(`Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`, 'partNumber', raw);
  }
  const md5 = createHash('md5').update(request.body).digest();
  const previous = upload.parts.get(partNumber);
  if (previous) state.bodies.remove(previous.bodyId);
  const etag = `"${md5.toString('hex')}"`;
  upload.parts.set(partNumber, { etag, md5, size: request.body.length, bodyId: state.bodies.write(request.body), lastModified: new Date() });
  const headers: Record<string, string> = { etag };
  for (const [name, value] of Object.entries(request.headers)) if (name.startsWith('x-amz-checksum-') && typeof value === 'string') headers[name] = value;
  for (const [name, value] of Object.entries(request.trailers)) if (name.startsWith('x-amz-checksum-')) headers[name] = value;
  return ok(undefined, headers);
}

/**
 * CompleteMultipartUpload (POST ?uploadId): the listed parts, in ascending order, each as uploaded
 * and (but the last) at least 5 MiB, become the object. Its ETag is the MD5 of the parts' MD5s, with
 * the number of parts, as S3 makes it.
 */
export function completeMultipartUpload(state: S3FakeState, request: S3Request): S3Response {
  const upload = uploadOf(state, request);
  const bucket = ownedBucket(state, request);
  const listed = children(parseXmlBody(request.body.toString('utf8'), 'CompleteMultipartUpload'), 'Part');
  if (listed.length === 0) throw S3Errors.malformedXml();
  const parts = listed.map((part) => {
    const partNumber = Number(text(part, 'PartNumber'));
    const uploaded = upload.parts.get(partNumber);
    const etag = text(part, 'ETag') ?? '';
    if (!uploaded || (etag !== uploaded.etag && `"${etag}"` !== uploaded.etag)) {
      throw new S3Error('InvalidPart', 400, "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.", {
        UploadId: upload.id,
        PartNumber: String(partNumber),
        ETag: etag,
      });
    }
    return { partNumber, ...uploaded };
  });
  if (parts.some((part, index) => index > 0 && part.partNumber <= (parts[index - 1]?.partNumber ?? 0))) {
    throw new S3Error('InvalidPartOrder', 400, 'The list of parts was not in ascending order. Parts must be ordered by part number.', { UploadId: upload.id });
  }
  const small = parts.slice(0, -1).find((part) => part.size < MIN_PART_SIZE);
  if (small) {
    throw new S3Error('EntityTooSmall', 400, 'Your proposed upload is smaller than the minimum allowed object size.', {
      ProposedSize: String(small.size),
      MinSizeAllowed: String(MIN_PART_SIZE),
      PartNumber: String(small.partNumber),
      ETag: small.etag,
    });
  }
  const body = Buffer.concat(parts.map((part) => state.bodies.read(part.bodyId) ?? Buffer.alloc(0)));
  const etag = `"${createHash('md5').update(Buffer.concat(parts.map((part) => part.md5))).digest('hex')}-${parts.length}"`;
  const version = putObject(state.bodies, bucket, upload.key, body, upload.headers, etag);
  discard(state, upload);
  const headers: Record<string, string> = {};
  if (bucket.versioning) headers['x-amz-version-id'] = version.versionId;
  const encryption = upload.headers['x-amz-server-side-encryption'];
  if (encryption) headers['x-amz-server-side-encryption'] = encryption;
  return ok(
    xmlDocument('CompleteMultipartUploadResult', [
      ['Location', `/${bucket.name}/${upload.key}`],
      ['Bucket', bucket.name],
      ['Key', upload.key],
      ['ETag', etag],
    ]),
    headers,
  );
}

/** AbortMultipartUpload (DELETE ?uploadId): the upload and its parts go. */
export function abortMultipartUpload(state: S3FakeState, request: S3Request): S3Response {
  discard(state, uploadOf(state, request));
  return noContent();
}

/** ListParts (GET ?uploadId): the parts uploaded so far, by number. */
export function listParts(state: S3FakeState, request: S3Request): S3Response {
  const upload = uploadOf(state, request);
  const parts = [...upload.parts.entries()].sort(([a], [b]) => a - b);
  return ok(
    xmlDocument('ListPartsResult', [
      ['Bucket', upload.bucket],
      ['Key', upload.key],
      ['UploadId', upload.id],
      ['StorageClass', 'STANDARD'],
      ['PartNumberMarker', 0],
      ['MaxParts', MAX_PART_NUMBER],
      ['IsTruncated', false],
      ...parts.map(([partNumber, part]): XmlElement => [
        'Part',
        [
          ['PartNumber', partNumber],
          ['LastModified', part.lastModified.toISOString()],
          ['ETag', part.etag],
          ['Size', part.size],
        ],
      ]),
    ]),
  );
}
