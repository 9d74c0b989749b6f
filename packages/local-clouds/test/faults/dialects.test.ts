// Each dialect names a request's operation and resource as a call log needs them: a bucket's or
// container's own calls apart from its objects' and blobs', so a count of creates and deletes of
// buckets is not swelled by object writes (test/reliability counts them per resource).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLOUD_DIALECTS, type CloudDialectName } from '@k8or/local-clouds';

const named = (dialect: CloudDialectName, method: string, url: string, body = ''): [string, string] => {
  const request = { method, url, headers: {}, body: Buffer.from(body) };
  return [CLOUD_DIALECTS[dialect].operationOf(request), CLOUD_DIALECTS[dialect].resourceOf(request)];
};

describe('cloud dialects: operation and resource of a request', () => {
  it('S3: bucket calls, their subresources and object calls are told apart; the SDK x-id names nothing', () => {
    assert.deepEqual(named('s3', 'PUT', '/photos'), ['PUT /bucket', 'photos']);
    assert.deepEqual(named('s3', 'PUT', '/photos?versioning'), ['PUT /bucket?versioning', 'photos']);
    assert.deepEqual(named('s3', 'DELETE', '/photos?x-id=DeleteBucket'), ['DELETE /bucket', 'photos']);
    assert.deepEqual(named('s3', 'PUT', '/photos/2024/cat.jpg?x-id=PutObject'), ['PUT /bucket/object', 'photos']);
    assert.deepEqual(named('s3', 'DELETE', '/photos/cat.jpg?x-id=DeleteObject'), ['DELETE /bucket/object', 'photos']);
    assert.deepEqual(named('s3', 'GET', '/'), ['GET /', '']);
  });

  it('Azure Blob: container calls apart from blob calls', () => {
    assert.deepEqual(named('azure-blob', 'PUT', '/devstoreaccount1/photos?restype=container'), ['PUT /container', 'photos']);
    assert.deepEqual(named('azure-blob', 'PUT', '/devstoreaccount1/photos?restype=container&comp=metadata'), ['PUT /container?comp=metadata', 'photos']);
    assert.deepEqual(named('azure-blob', 'PUT', '/devstoreaccount1/photos/cat.jpg'), ['PUT /container/blob', 'photos']);
    assert.deepEqual(named('azure-blob', 'DELETE', '/devstoreaccount1/photos?restype=container'), ['DELETE /container', 'photos']);
  });

  it('GCS and Azure Table: buckets.insert and Create Table name their resource in the body', () => {
    assert.deepEqual(named('gcs', 'POST', '/storage/v1/b?project=p', JSON.stringify({ name: 'photos' })), ['POST /b', 'photos']);
    assert.deepEqual(named('gcs', 'DELETE', '/storage/v1/b/photos'), ['DELETE /b/NAME', 'photos']);
    assert.deepEqual(named('gcs', 'POST', '/upload/storage/v1/b/photos/o?uploadType=multipart'), ['POST /b/NAME/o', 'photos']);
    assert.deepEqual(named('azure-table', 'POST', '/devstoreaccount1/Tables', JSON.stringify({ TableName: 'orders' })), ['POST Tables', 'orders']);
    assert.deepEqual(named('azure-table', 'DELETE', "/devstoreaccount1/Tables('orders')"), ['DELETE Tables(NAME)', 'orders']);
    assert.deepEqual(named('azure-table', 'POST', '/devstoreaccount1/orders'), ['POST /table', 'orders']);
  });
});
