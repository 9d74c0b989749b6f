import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { NotOwnedError, RetryableError, TerminalError } from '@k8or/core';
import { awsErrorCode, classifyAwsError, isAccessDenied } from '@k8or/provider-aws';

/** An error as the SDK builds it from an AWS answer. */
function s3Error(name: string, status: number): S3ServiceException {
  return new S3ServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message: `${name} happened` });
}
function dynamoDbError(name: string, status = 400): DynamoDBServiceException {
  return new DynamoDBServiceException({ name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message: `${name} happened` });
}

describe('AWS error classification', () => {
  describe('noEffect: whether AWS definitely did nothing (a create answered so is recorded as refused)', () => {
    const attempted = <E extends { $metadata: { attempts?: number } }>(error: E, attempts: number): E => Object.assign(error, { $metadata: { ...error.$metadata, attempts } });
    it('a throttle or a 4xx answered to the only attempt: nothing happened', () => {
      assert.equal(classifyAwsError(attempted(s3Error('SlowDown', 503), 1), 'CreateBucket').noEffect, true);
      assert.equal(classifyAwsError(attempted(dynamoDbError('ThrottlingException'), 1), 'CreateTable').noEffect, true);
      assert.equal(classifyAwsError(attempted(s3Error('InvalidBucketName', 400), 1), 'CreateBucket').noEffect, true);
      assert.equal(classifyAwsError(attempted(s3Error('BucketAlreadyExists', 409), 1), 'CreateBucket').noEffect, true);
    });
    it('a 5xx, or any answer after the SDK retried (an earlier attempt may have acted): the outcome is unknown', () => {
      assert.equal(classifyAwsError(attempted(s3Error('InternalError', 500), 1), 'CreateBucket').noEffect, false);
      assert.equal(classifyAwsError(attempted(s3Error('SlowDown', 503), 3), 'CreateBucket').noEffect, false);
      assert.equal(classifyAwsError(attempted(dynamoDbError('ResourceInUseException'), 2), 'CreateTable').noEffect, false);
    });
  });

  for (const [code, status] of [['SlowDown', 503], ['InternalError', 500], ['ServiceUnavailable', 503]] as const) {
    it(`retries S3 ${code} (${status})`, () => {
      const error = classifyAwsError(s3Error(code, status), 'PutBucketTagging');
      assert.ok(error instanceof RetryableError);
      assert.equal(error.code, code);
      assert.equal(error.message, `PutBucketTagging failed with ${code}: ${code} happened`);
    });
  }

  for (const code of ['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded', 'LimitExceededException']) {
    it(`retries DynamoDB ${code}`, () => assert.ok(classifyAwsError(dynamoDbError(code), 'CreateTable') instanceof RetryableError));
  }

  for (const code of ['AccessDenied', 'InvalidBucketName', 'InvalidLocationConstraint', 'MalformedXML', 'InvalidArgument']) {
    it(`stops on S3 ${code}, with the code in the message`, () => {
      const error = classifyAwsError(s3Error(code, 400), 'CreateBucket');
      assert.ok(error instanceof TerminalError);
      assert.ok(!(error instanceof NotOwnedError));
      assert.equal(error.retryable, false);
      assert.match(error.message, new RegExp(`CreateBucket failed with ${code}`));
    });
  }

  for (const code of ['ValidationException', 'ResourceInUseException', 'AccessDeniedException', 'UnrecognizedClientException']) {
    it(`stops on DynamoDB ${code}`, () => assert.ok(classifyAwsError(dynamoDbError(code), 'CreateTable') instanceof TerminalError));
  }

  it('reports a bucket name owned by another account as NotOwnedError', () => {
    const error = classifyAwsError(s3Error('BucketAlreadyExists', 409), 'CreateBucket');
    assert.ok(error instanceof NotOwnedError);
    assert.equal(error.code, 'BucketAlreadyExists');
  });

  it('retries network failures and unknown 5xx, and stops on unknown 4xx', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    assert.ok(classifyAwsError(refused, 'DescribeTable') instanceof RetryableError);
    assert.equal(awsErrorCode(refused), 'ECONNREFUSED');
    assert.ok(classifyAwsError(s3Error('SomethingNew', 502), 'GetBucketTagging') instanceof RetryableError);
    assert.ok(classifyAwsError(s3Error('SomethingElse', 409), 'GetBucketTagging') instanceof TerminalError);
  });

  it('names bodiless HEAD answers after their status', () => {
    assert.equal(awsErrorCode(s3Error('Unknown', 403)), 'Forbidden');
    assert.equal(awsErrorCode(s3Error('Unknown', 503)), 'ServiceUnavailable');
    assert.ok(classifyAwsError(s3Error('Unknown', 503), 'HeadBucket') instanceof RetryableError);
    assert.ok(classifyAwsError(s3Error('Unknown', 403), 'HeadBucket') instanceof TerminalError);
  });

  it('never reads a denial or a timeout as "not found": a 403 is terminal, an abort or a timeout retryable, neither NotFound', () => {
    const forbidden = classifyAwsError(s3Error('Unknown', 403), 'HeadBucket');
    assert.ok(forbidden instanceof TerminalError);
    assert.equal(forbidden.code, 'Forbidden');
    assert.ok(isAccessDenied(forbidden));
    assert.ok(isAccessDenied(classifyAwsError(s3Error('AccessDenied', 403), 'GetBucketLocation')));
    assert.ok(isAccessDenied(classifyAwsError(dynamoDbError('AccessDeniedException'), 'DescribeTable')));
    const aborted = Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
    const timedOut = Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
    for (const error of [aborted, timedOut]) {
      const classified = classifyAwsError(error, 'GetBucketLocation');
      assert.ok(classified instanceof RetryableError);
      assert.notEqual(classified.code, 'NotFound');
      assert.ok(!isAccessDenied(classified));
    }
    assert.equal(classifyAwsError(s3Error('Unknown', 404), 'HeadBucket').code, 'NotFound');
  });

  it('retries S3 OperationAborted (a conflicting operation on the bucket is in progress)', () => {
    assert.ok(classifyAwsError(s3Error('OperationAborted', 409), 'PutBucketTagging') instanceof RetryableError);
  });
});
