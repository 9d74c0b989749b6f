import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { awsProvider, validateProviderConfig } from '@k8or/provider-aws';
import { awsProviderConfig, bucket, table } from './support.ts';

const config = awsProviderConfig({});
const rules = (result: { violations: { rule: string }[] }): string[] => result.violations.map((v) => v.rule);

describe('AWS validation for the webhook', () => {
  it('accepts a plain bucket and a plain table', () => {
    assert.deepEqual(awsProvider.validation.validate('Bucket', bucket('photos-team-a'), config), { violations: [], warnings: [] });
    assert.deepEqual(awsProvider.validation.validate('Table', table('orders'), config), { violations: [], warnings: [] });
  });

  it('rejects what S3 would reject: names, regions, KMS keys, transitions', () => {
    const result = awsProvider.validation.validate(
      'Bucket',
      bucket('bad_name', {
        location: 'mars',
        encryption: { type: 'CustomerManaged', keyId: 'not a key' },
        lifecycle: [{ id: 'r', expirationDays: 20, transitions: [{ days: 10, tier: 'InfrequentAccess' }, { days: 40, tier: 'Archive' }] }],
      }),
      config,
    );
    assert.deepEqual(rules(result).sort(), ['aws.kms-key', 'aws.region', 's3.characters', 's3.transition-before-expiration', 's3.transition-days']);
  });

  it('warns about dotted names, noncurrent expiry without versioning, and tiers S3 cannot honour exactly', () => {
    const result = awsProvider.validation.validate(
      'Bucket',
      bucket('logs.example.com', { lifecycle: [{ id: 'r', noncurrentVersionExpirationDays: 5, transitions: [{ days: 60, tier: 'Archive' }] }] }),
      config,
    );
    assert.deepEqual(result.violations, []);
    assert.equal(result.warnings.length, 3);
    assert.match(result.warnings[0] ?? '', /virtual-hosted-style/);
    assert.match(result.warnings[1] ?? '', /noncurrentVersionExpirationDays: has no effect while spec.versioning is false/);
    assert.match(result.warnings[2] ?? '', /Archive maps to S3 GLACIER/);
  });

  it('checks AWS tag rules on labels', () => {
    const result = awsProvider.validation.validate('Bucket', bucket('tagged', { labels: { 'aws:owner': 'x', 'k8or.io/name': 'y', ok: 'fine' } }), config);
    assert.deepEqual(rules(result).sort(), ['aws.tag-owner', 'aws.tag-reserved']);
  });

  it('checks DynamoDB names and attribute names', () => {
    const result = awsProvider.validation.validate('Table', table('no', { partitionKey: { name: '', type: 'string' }, ttlAttribute: 'x'.repeat(256) }), config);
    assert.deepEqual(rules(result).sort(), ['dynamodb.attribute-length', 'dynamodb.attribute-length', 'dynamodb.length']);
  });

  it('checks the ProviderConfig region and endpoints', () => {
    assert.deepEqual(validateProviderConfig(awsProviderConfig({ bucket: 'http://127.0.0.1:9000' })), { violations: [], warnings: [] });
    const bad = { ...config, spec: { provider: 'aws' as const, region: 'Europe', endpoint: 'not a url' } };
    assert.deepEqual(rules(validateProviderConfig(bad)).sort(), ['aws.endpoint', 'aws.region']);
  });
});
