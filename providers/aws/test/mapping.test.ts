import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientSettings, credentialsFrom, dynamoDbMapping, endpointFor, s3Mapping } from '@k8or/provider-aws';
import type { ProviderConfig } from '@k8or/api';
import { TerminalError } from '@k8or/core';
import { awsProviderConfig, bucket, ownerTagsOf, table } from './support.ts';

const owner = ownerTagsOf('team-a', 'photos', 'Bucket');

describe('Bucket spec -> S3 settings', () => {
  it('maps lifecycle rules, with InfrequentAccess -> STANDARD_IA and Archive -> GLACIER', () => {
    const rule = s3Mapping.toS3LifecycleRule({
      id: 'logs',
      prefix: 'logs/',
      expirationDays: 365,
      noncurrentVersionExpirationDays: 30,
      abortIncompleteUploadDays: 7,
      transitions: [{ days: 120, tier: 'Archive' }, { days: 30, tier: 'InfrequentAccess' }],
    });
    assert.deepEqual(rule, {
      ID: 'logs',
      Status: 'Enabled',
      Filter: { Prefix: 'logs/' },
      Expiration: { Days: 365 },
      Transitions: [{ Days: 30, StorageClass: 'STANDARD_IA' }, { Days: 120, StorageClass: 'GLACIER' }],
      NoncurrentVersionExpiration: { NoncurrentDays: 30 },
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
    });
    assert.deepEqual(s3Mapping.fromS3LifecycleRule(rule), s3Mapping.normalizeRule({
      id: 'logs', prefix: 'logs/', expirationDays: 365, noncurrentVersionExpirationDays: 30, abortIncompleteUploadDays: 7,
      transitions: [{ days: 30, tier: 'InfrequentAccess' }, { days: 120, tier: 'Archive' }],
    }));
    assert.equal(s3Mapping.toS3LifecycleRule({ id: 'off', enabled: false, expirationDays: 1 }).Status, 'Disabled');
  });

  it('maps encryption and public access', () => {
    assert.deepEqual(s3Mapping.encryptionFor(bucket('b-one')), { SSEAlgorithm: 'AES256' });
    assert.deepEqual(s3Mapping.encryptionFor(bucket('b-one', { encryption: { type: 'CustomerManaged', keyId: 'alias/data' } })), {
      SSEAlgorithm: 'aws:kms',
      KMSMasterKeyID: 'alias/data',
    });
    assert.deepEqual(Object.values(s3Mapping.publicAccessBlockFor('Blocked')), [true, true, true, true]);
    assert.deepEqual(Object.values(s3Mapping.publicAccessBlockFor('Allowed')), [false, false, false, false]);
    assert.equal(s3Mapping.publicAccessOf(undefined), 'Allowed');
    assert.deepEqual(s3Mapping.publicAccessOf({ BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: true, RestrictPublicBuckets: true }), {
      BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: true, RestrictPublicBuckets: true,
    });
  });

  it('places a bucket in spec.location, else the ProviderConfig region', () => {
    const config = awsProviderConfig({}, 'eu-central-1');
    assert.equal(s3Mapping.bucketRegion(bucket('b-one'), config), 'eu-central-1');
    assert.equal(s3Mapping.bucketRegion(bucket('b-one', { location: 'ap-south-1' }), config), 'ap-south-1');
  });

  it('diffs every managed setting with its field path, and nothing when all match', () => {
    const resource = bucket('photos', { versioning: true, labels: { team: 'a' }, lifecycle: [{ id: 'r', expirationDays: 5 }] });
    const inSync: s3Mapping.ObservedBucket = {
      region: 'us-east-1',
      versioning: true,
      publicAccess: 'Blocked',
      encryption: { SSEAlgorithm: 'AES256' },
      lifecycle: [{ id: 'r', enabled: true, expirationDays: 5 }],
      tags: { team: 'a', ...owner },
    };
    assert.deepEqual(s3Mapping.diffBucket(resource, inSync, owner), []);
    const drifted = { ...inSync, versioning: false, publicAccess: 'Allowed' as const, encryption: undefined, lifecycle: [], tags: { team: 'b', extra: 'x', ...owner } };
    assert.deepEqual(s3Mapping.diffBucket(resource, drifted, owner).map((d) => d.field), [
      'spec.versioning',
      'spec.publicAccess',
      'spec.encryption',
      'spec.lifecycle',
      'spec.labels.extra',
      'spec.labels.team',
    ]);
    // Reported in the portable spec's shape: what the spec would hold to match the bucket.
    const mixed = { ...inSync, publicAccess: { BlockPublicAcls: true, IgnorePublicAcls: false, BlockPublicPolicy: true, RestrictPublicBuckets: true }, encryption: { SSEAlgorithm: 'aws:kms' as const, KMSMasterKeyID: 'arn:aws:kms:us-east-1:111122223333:key/k' } };
    assert.deepEqual(s3Mapping.diffBucket(resource, mixed, owner), [
      { field: 'spec.publicAccess', desired: 'Blocked', actual: 'Allowed' },
      { field: 'spec.encryption', desired: { type: 'ProviderManaged' }, actual: { type: 'CustomerManaged', keyId: 'arn:aws:kms:us-east-1:111122223333:key/k' } },
    ]);
    const foreignRules = { ...inSync, lifecycleNotPortable: 'rule "r" transitions by date or to a storage class with no portable tier' };
    assert.deepEqual(s3Mapping.diffBucket(resource, foreignRules, owner), [{ field: 'spec.lifecycle', desired: [{ id: 'r', expirationDays: 5 }], actual: undefined }]);
    assert.match(s3Mapping.nonPortableLifecycle([{ ID: 'r', Status: 'Enabled', Filter: { Prefix: '' }, Transitions: [{ Days: 30, StorageClass: 'DEEP_ARCHIVE' }] }]) ?? '', /rule "r" transitions .* no portable tier/);
    assert.equal(s3Mapping.nonPortableLifecycle([s3Mapping.toS3LifecycleRule({ id: 'r', prefix: 'logs/', expirationDays: 5, transitions: [{ days: 30, tier: 'Archive' }] })]), undefined);
  });

  it('compares values, not their serialisation: lifecycle rules and encryption with keys in any order are in sync', () => {
    const observed: s3Mapping.ObservedBucket = {
      region: 'us-east-1',
      versioning: false,
      publicAccess: 'Blocked',
      encryption: { KMSMasterKeyID: 'alias/data', SSEAlgorithm: 'aws:kms' },
      lifecycle: [{ id: 'logs', enabled: true, prefix: 'logs/', expirationDays: 365, transitions: [{ days: 30, tier: 'InfrequentAccess' }] }],
      tags: { ...owner },
    };
    // The same rule as a Go server or kubectl sends it: keys sorted, and reversed for good measure.
    const sorted = { abortIncompleteUploadDays: undefined, enabled: true, expirationDays: 365, id: 'logs', prefix: 'logs/', transitions: [{ days: 30, tier: 'InfrequentAccess' as const }] };
    const reversed = { transitions: [{ tier: 'InfrequentAccess' as const, days: 30 }], prefix: 'logs/', id: 'logs', expirationDays: 365 };
    for (const rule of [sorted, reversed]) {
      const resource = bucket('photos', { lifecycle: [rule], encryption: { keyId: 'alias/data', type: 'CustomerManaged' } });
      assert.deepEqual(s3Mapping.diffBucket(resource, observed, owner), []);
    }
    const changed = bucket('photos', { lifecycle: [{ ...reversed, expirationDays: 366 }], encryption: { keyId: 'alias/data', type: 'CustomerManaged' } });
    assert.deepEqual(s3Mapping.diffBucket(changed, observed, owner).map((d) => d.field), ['spec.lifecycle']);
  });

  it('gives the ARN, region and URL, path-style under an endpoint', () => {
    assert.deepEqual(s3Mapping.bucketAtProvider('photos', 'eu-west-1', undefined), {
      id: 'arn:aws:s3:::photos',
      location: 'eu-west-1',
      url: 'https://photos.s3.eu-west-1.amazonaws.com',
    });
    assert.equal(s3Mapping.bucketAtProvider('photos', 'eu-west-1', 'http://127.0.0.1:9000/').url, 'http://127.0.0.1:9000/photos');
    // An endpoint's user info and query string are never published.
    assert.equal(s3Mapping.bucketAtProvider('photos', 'eu-west-1', 'http://key:secret@minio.local:9000/base/?X-Amz-Signature=abc').url, 'http://minio.local:9000/base/photos');
  });
});

describe('Table spec -> DynamoDB settings', () => {
  it('maps keys to S/N/B attribute definitions and HASH/RANGE key schema', () => {
    const resource = table('t-one', { partitionKey: { name: 'id', type: 'binary' }, sortKey: { name: 'at', type: 'number' } });
    assert.deepEqual(dynamoDbMapping.keySchemaFor(resource), {
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }, { AttributeName: 'at', KeyType: 'RANGE' }],
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'B' }, { AttributeName: 'at', AttributeType: 'N' }],
    });
  });

  it('maps billing to PAY_PER_REQUEST or PROVISIONED with capacities', () => {
    assert.deepEqual(dynamoDbMapping.billingFor(undefined), { BillingMode: 'PAY_PER_REQUEST' });
    assert.deepEqual(dynamoDbMapping.billingFor({ mode: 'provisioned', readCapacity: 3, writeCapacity: 2 }), {
      BillingMode: 'PROVISIONED',
      ProvisionedThroughput: { ReadCapacityUnits: 3, WriteCapacityUnits: 2 },
    });
    assert.deepEqual(dynamoDbMapping.billingOf({ ProvisionedThroughput: { ReadCapacityUnits: 4, WriteCapacityUnits: 4 } }), {
      mode: 'provisioned', readCapacity: 4, writeCapacity: 4,
    });
  });

  it('puts key changes in immutableDiff and everything else in diff', () => {
    const resource = table('t-one', { ttlAttribute: 'exp', pointInTimeRecovery: true, deletionProtection: true, labels: { team: 'a' } });
    const observed: dynamoDbMapping.ObservedTable = {
      description: {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
        DeletionProtectionEnabled: false,
      },
      ttlAttribute: undefined,
      pointInTimeRecovery: false,
      tags: { ...ownerTagsOf('team-a', 't-one', 'Table') },
    };
    const { diff, immutableDiff } = dynamoDbMapping.diffTable(resource, observed, ownerTagsOf('team-a', 't-one', 'Table'));
    assert.deepEqual(immutableDiff.map((d) => d.field), ['spec.partitionKey']);
    assert.deepEqual(diff.map((d) => d.field), ['spec.ttlAttribute', 'spec.pointInTimeRecovery', 'spec.deletionProtection', 'spec.labels.team']);
  });
});

describe('Table diffs compare values', () => {
  it('sees key attributes with their fields in any order as unchanged', () => {
    const observed: dynamoDbMapping.ObservedTable = {
      description: {
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }, { AttributeName: 'at', KeyType: 'RANGE' }],
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }, { AttributeName: 'at', AttributeType: 'N' }],
        BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
      },
      ttlAttribute: undefined,
      pointInTimeRecovery: false,
      tags: { ...ownerTagsOf('team-a', 't-one', 'Table') },
    };
    const resource = table('t-one', { partitionKey: { type: 'string', name: 'id' }, sortKey: { type: 'number', name: 'at' } });
    const { diff, immutableDiff } = dynamoDbMapping.diffTable(resource, observed, ownerTagsOf('team-a', 't-one', 'Table'));
    assert.deepEqual(immutableDiff, []);
    assert.deepEqual(diff, []);
  });
});

describe('ProviderConfig -> SDK client settings', () => {
  const withEndpoint = (spec: Partial<ProviderConfig['spec']>): ProviderConfig => ({
    ...awsProviderConfig({}),
    spec: { provider: 'aws', region: 'eu-west-1', ...spec },
  });

  it('uses the per-kind endpoint over the shared one, with path-style addressing', () => {
    const config = withEndpoint({ endpoint: 'http://shared:1', endpoints: { table: 'http://dynamodb:2' } });
    assert.equal(endpointFor(config, 'Bucket'), 'http://shared:1');
    assert.equal(endpointFor(config, 'Table'), 'http://dynamodb:2');
    assert.deepEqual(clientSettings(config, undefined, 'Bucket'), { region: 'eu-west-1', maxAttempts: 3, endpoint: 'http://shared:1', forcePathStyle: true });
    assert.deepEqual(clientSettings(withEndpoint({}), undefined, 'Bucket', 'ap-south-1'), { region: 'ap-south-1', maxAttempts: 3 });
  });

  it('reads static credentials from the Secret keys, and leaves the default chain otherwise', () => {
    const secretConfig = withEndpoint({ credentials: { source: 'Secret', secretRef: { namespace: 'ns', name: 'aws' } } });
    assert.deepEqual(credentialsFrom(secretConfig, { accessKeyId: 'AKIA1', secretAccessKey: 's', sessionToken: 't' }), {
      accessKeyId: 'AKIA1', secretAccessKey: 's', sessionToken: 't',
    });
    assert.throws(() => credentialsFrom(secretConfig, { accessKeyId: 'AKIA1' }), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.match(error.message, /Secret ns\/aws must hold the keys accessKeyId and secretAccessKey/);
      return true;
    });
    assert.equal(credentialsFrom(withEndpoint({ credentials: { source: 'InjectedIdentity' } }), undefined), undefined);
    assert.equal(credentialsFrom(withEndpoint({}), undefined), undefined);
  });
});
