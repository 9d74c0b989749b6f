import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { awsNaming, defaultDynamoDbTableName, defaultS3BucketName } from '@k8or/provider-aws';

// Names that sanitise to S3's reserved prefixes, dotted and all-digit names, and the longest a cluster allows.
const objects: [string, string][] = [
  ['sthree', 'bucket'],
  ['xn', 'punycode'],
  ['amzn-s3-demo', 'x'],
  ['192', '168.0.1'],
  ['Team_A', 'Orders.2024'],
  ['x'.repeat(63), 'y'.repeat(253)],
];

describe('AWS naming rules', () => {
  it('gives a valid S3 bucket and DynamoDB table name for every object name', () => {
    for (const [namespace, name] of objects) {
      const input = { clusterId: 'c1', namespace, name };
      assert.deepEqual(awsNaming.Bucket.validate(defaultS3BucketName(input), 'spec.name'), [], `${namespace}/${name} -> ${defaultS3BucketName(input)}`);
      assert.deepEqual(awsNaming.Table.validate(defaultDynamoDbTableName(input), 'spec.name'), [], `${namespace}/${name} -> ${defaultDynamoDbTableName(input)}`);
    }
  });

  it('does not map default/photos to the same S3 name in every cluster (S3 names are global)', () => {
    const here = defaultS3BucketName({ clusterId: 'prod-eu-1', namespace: 'default', name: 'photos' });
    const there = defaultS3BucketName({ clusterId: 'someone-elses-cluster', namespace: 'default', name: 'photos' });
    assert.notEqual(here, there);
    assert.match(here, /^default-photos-[0-9a-f]{8}$/, 'still readable');
  });

  it('keeps two long Table names in one namespace apart when they are cut to 255 characters', () => {
    const long = 'orders-'.repeat(40);
    const first = defaultDynamoDbTableName({ clusterId: 'c1', namespace: 'shop', name: `${long}2024` });
    const second = defaultDynamoDbTableName({ clusterId: 'c1', namespace: 'shop', name: `${long}2025` });
    assert.equal(first.length, 255);
    assert.notEqual(first, second);
  });
});
