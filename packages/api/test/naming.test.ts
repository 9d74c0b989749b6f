import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  validateAzureContainerName,
  validateAzureTableName,
  validateBigtableTableName,
  validateDynamoDbTableName,
  validateGcsBucketName,
  validateS3BucketName,
  type NameValidator,
} from '@k8or/api';

/** name -> the rules it must break (empty: valid). */
type Cases = Record<string, string[]>;

function table(title: string, validate: NameValidator, cases: Cases): void {
  describe(title, () => {
    for (const [name, rules] of Object.entries(cases)) {
      const label = rules.length === 0 ? `accepts "${name}"` : `rejects "${name.length > 40 ? `${name.slice(0, 37)}...` : name}" by ${rules.join(', ')}`;
      it(label, () => {
        const violations = validate(name, 'spec.name');
        assert.deepEqual(
          violations.map((v) => v.rule).sort(),
          [...rules].sort(),
          `violations were: ${JSON.stringify(violations)}`,
        );
        for (const v of violations) {
          assert.equal(v.field, 'spec.name');
          assert.ok(v.message.length > 10, 'message explains the rule');
        }
      });
    }
  });
}

table('S3 bucket names', validateS3BucketName, {
  'my-bucket': [],
  'abc': [],
  'docexamplewebsite.com': [],
  'www.docexamplebucket1.com': [],
  '123': [],
  [`a${'b'.repeat(62)}`]: [],
  ab: ['s3.length'],
  [`a${'b'.repeat(63)}`]: ['s3.length'],
  'my-Bucket': ['s3.characters'],
  'my_bucket': ['s3.characters'],
  '-bucket': ['s3.edges'],
  'bucket-': ['s3.edges'],
  '.bucket': ['s3.edges'],
  'doc..example': ['s3.adjacent-dots'],
  '192.168.5.4': ['s3.ip-address'],
  'xn--bucket': ['s3.reserved-prefix'],
  'sthree-bucket': ['s3.reserved-prefix'],
  'amzn-s3-demo-bucket': ['s3.reserved-prefix'],
  'bucket-s3alias': ['s3.reserved-suffix'],
  'bucket--ol-s3': ['s3.reserved-suffix'],
  'bucket.mrap': ['s3.reserved-suffix'],
  'bucket--x-s3': ['s3.reserved-suffix'],
  'bucket--table-s3': ['s3.reserved-suffix'],
  '': ['s3.length', 's3.edges'],
});

table('Cloud Storage bucket names', validateGcsBucketName, {
  'my-travel-maps': [],
  '0f75d593-8e7b-4418-a5ba-cb2970f0b91e': [],
  'test.example.com': [],
  'my_bucket': [],
  [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}`]: [],
  ab: ['gcs.length'],
  [`a${'b'.repeat(63)}`]: ['gcs.length'],
  [`${'a'.repeat(64)}.com`]: ['gcs.component-length'],
  'my-Travel-Maps': ['gcs.characters'],
  '_bucket': ['gcs.edges'],
  'bucket_': ['gcs.edges'],
  '10.0.0.1': ['gcs.ip-address'],
  'goog-bucket': ['gcs.goog-prefix'],
  'my-google-bucket': ['gcs.google'],
  'my-g00gle-bucket': ['gcs.google'],
  'googlebucket': ['gcs.goog-prefix', 'gcs.google'],
});

table('Azure container names', validateAzureContainerName, {
  'mycontainer': [],
  'my-container-1': [],
  '1abc': [],
  ab: ['azure-container.length'],
  [`a${'b'.repeat(63)}`]: ['azure-container.length'],
  'myContainer': ['azure-container.characters'],
  'my.container': ['azure-container.characters'],
  '-container': ['azure-container.start'],
  'container-': ['azure-container.end'],
  'my--container': ['azure-container.consecutive-hyphens'],
});

table('DynamoDB table names', validateDynamoDbTableName, {
  'Orders': [],
  'team.orders_v2-prod': [],
  [`t${'x'.repeat(254)}`]: [],
  ab: ['dynamodb.length'],
  [`t${'x'.repeat(255)}`]: ['dynamodb.length'],
  'orders table': ['dynamodb.characters'],
  'orders/2024': ['dynamodb.characters'],
});

table('Bigtable table IDs', validateBigtableTableName, {
  't': [],
  '_private': [],
  'orders.v2-prod': [],
  [`t${'x'.repeat(49)}`]: [],
  '': ['bigtable.length'],
  [`t${'x'.repeat(50)}`]: ['bigtable.length'],
  '-orders': ['bigtable.start'],
  '.orders': ['bigtable.start'],
  'orders table': ['bigtable.characters'],
});

table('Azure table names', validateAzureTableName, {
  'Orders': [],
  'orders2024': [],
  [`T${'x'.repeat(62)}`]: [],
  ab: ['azure-table.length'],
  [`T${'x'.repeat(63)}`]: ['azure-table.length'],
  'orders-2024': ['azure-table.characters'],
  '2024orders': ['azure-table.start'],
  'tables': ['azure-table.reserved'],
  'Tables': ['azure-table.reserved'],
});
