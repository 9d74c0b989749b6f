import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bigtableTableNaming, gcpProvider, gcsBucketNaming, validateProviderConfig } from '@k8or/provider-gcp';
import { nameProvesOwnership, perObjectNameToken } from '@k8or/core';
import { bucket, gcpProviderConfig, table } from './support.ts';

const config = gcpProviderConfig({}, { region: 'europe-west1' });
const rules = (result: { violations: { rule: string }[] }): string[] => result.violations.map((v) => v.rule).sort();

describe('GCP validation for the webhook', () => {
  it('accepts a plain bucket and a plain table', () => {
    assert.deepEqual(gcpProvider.validation.validate('Bucket', bucket('photos-team-a'), config), { violations: [], warnings: [] });
    assert.deepEqual(gcpProvider.validation.validate('Table', table('orders'), config), { violations: [], warnings: [] });
  });

  it('checks GCS bucket names through the declared naming rules: length, dotted parts, goog prefix, google look-alikes, IP addresses', () => {
    const naming = gcpProvider.naming?.Bucket;
    assert.ok(naming);
    assert.deepEqual(naming.validate('photos', 'spec.name'), []);
    assert.deepEqual(naming.validate('a'.repeat(64), 'spec.name').map((v) => v.rule), ['gcs.length']);
    assert.deepEqual(naming.validate(`${'a'.repeat(63)}.${'b'.repeat(63)}`, 'spec.name'), []);
    assert.deepEqual(naming.validate(`${'a'.repeat(64)}.b`, 'spec.name').map((v) => v.rule), ['gcs.component-length']);
    assert.deepEqual(naming.validate('goog-photos', 'spec.name').map((v) => v.rule), ['gcs.goog-prefix']);
    assert.deepEqual(naming.validate('my-g00gle-photos', 'spec.name').map((v) => v.rule), ['gcs.google']);
    assert.deepEqual(naming.validate('192.168.5.4', 'spec.name').map((v) => v.rule), ['gcs.ip-address']);
    assert.equal(naming.validate('Photos', 'spec.name')[0]?.field, 'spec.name');
  });

  it('checks Bigtable table ids: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50', () => {
    const naming = gcpProvider.naming?.Table;
    assert.deepEqual(naming?.validate('_orders.v2-x', 'spec.name'), []);
    assert.deepEqual(naming?.validate('-orders', 'spec.name').map((v) => v.rule), ['bigtable.start']);
    assert.deepEqual(naming?.validate('a'.repeat(51), 'spec.name').map((v) => v.rule), ['bigtable.length']);
    assert.deepEqual(naming?.validate('orders!', 'spec.name').map((v) => v.rule), ['bigtable.characters']);
  });

  it('defaults names unique per cluster, within the rules, even for namespaces that look like google', () => {
    for (const input of [
      { clusterId: 'c1', namespace: 'team-a', name: 'photos' },
      { clusterId: 'c1', namespace: 'google-team', name: 'goog' },
      { clusterId: 'c1', namespace: 'goog', name: 'x' },
      { clusterId: 'c1', namespace: 'n'.repeat(63), name: 'm'.repeat(253) },
    ]) {
      assert.deepEqual(gcsBucketNaming.validate(gcsBucketNaming.defaultName(input), 'spec.name'), [], gcsBucketNaming.defaultName(input));
      assert.deepEqual(bigtableTableNaming.validate(bigtableTableNaming.defaultName(input), 'spec.name'), []);
    }
    const one = { clusterId: 'c1', namespace: 'team-a', name: 'photos' };
    assert.notEqual(gcsBucketNaming.defaultName(one), gcsBucketNaming.defaultName({ ...one, clusterId: 'c2' }));
  });

  it('a table has no tags: its default name carries the object\'s uid token, so it proves ownership, within the rules however long the name', () => {
    assert.equal(bigtableTableNaming.perObjectName, true, 'decided by the engine, once the object has a uid');
    const uid = '6f1c2b9e-0d4a-4c1e-9b1a-2f3e4d5c6b7a';
    for (const name of ['orders', 'x'.repeat(80)]) {
      const external = bigtableTableNaming.defaultName({ clusterId: 'c1', namespace: 'team-a', name, uid });
      assert.ok(external.includes(perObjectNameToken(uid)), external);
      assert.deepEqual(bigtableTableNaming.validate(external, 'spec.name'), [], external);
      assert.ok(nameProvesOwnership({ metadata: { uid } }, external));
      assert.ok(!nameProvesOwnership({ metadata: { uid: 'another-object' } }, external), 'a second object with the same name proves nothing');
    }
    const again = { clusterId: 'c1', namespace: 'team-a', name: 'orders' };
    assert.notEqual(bigtableTableNaming.defaultName({ ...again, uid }), bigtableTableNaming.defaultName({ ...again, uid: 'another-object' }), 'the same object name made again gets another table');
  });

  it('rejects what Cloud Storage would reject: locations, KMS key names, labels', () => {
    const result = gcpProvider.validation.validate(
      'Bucket',
      bucket('photos', { location: 'mars-base', encryption: { type: 'CustomerManaged', keyId: 'arn:aws:kms:x' }, labels: { Team: 'a', ok: 'Upper', 'k8or-name': 'x', 'goog-x': 'y' } }),
      config,
    );
    assert.deepEqual(rules(result), ['gcp.kms-key', 'gcp.location', 'gcs.label-key', 'gcs.label-owner', 'gcs.label-reserved', 'gcs.label-value']);
    assert.ok(result.violations.every((v) => v.field.startsWith('spec.')));
  });

  it('warns about dotted names, disabled lifecycle rules and tiers Cloud Storage bills differently', () => {
    const result = gcpProvider.validation.validate('Bucket', bucket('logs.example.com', { lifecycle: [{ id: 'r', enabled: false, transitions: [{ days: 60, tier: 'Archive' }] }] }), config);
    assert.deepEqual(result.violations, []);
    assert.match(result.warnings[0] ?? '', /verified owner of the domain/);
    assert.match(result.warnings[1] ?? '', /cannot be disabled/);
    assert.match(result.warnings[2] ?? '', /ARCHIVE storage class/);
  });

  it('warns at apply time about the portable Table fields Bigtable cannot honour', () => {
    const result = gcpProvider.validation.validate(
      'Table',
      table('orders', {
        partitionKey: { name: 'id', type: 'number' },
        sortKey: { name: 'at', type: 'binary' },
        billing: { mode: 'provisioned', readCapacity: 5, writeCapacity: 5 },
        pointInTimeRecovery: true,
        ttlAttribute: 'exp',
        labels: { team: 'a' },
      }),
      config,
    );
    assert.deepEqual(result.violations, []);
    const fields = result.warnings.map((w) => w.split(':')[0]);
    assert.deepEqual(fields, ['spec.partitionKey.type', 'spec.sortKey.type', 'spec.sortKey', 'spec.ttlAttribute', 'spec.billing', 'spec.pointInTimeRecovery', 'spec.labels']);
  });

  it('checks declared column family ids', () => {
    const result = gcpProvider.validation.validate('Table', table('orders', {}, { 'gcp.k8or.io/column-families': 'ok, -bad' }), config);
    assert.deepEqual(rules(result), ['bigtable.column-family']);
    assert.equal(result.violations[0]?.field, 'metadata.annotations[gcp.k8or.io/column-families]');
  });

  it('checks the ProviderConfig project, location and endpoints', () => {
    assert.deepEqual(validateProviderConfig(gcpProviderConfig({ bucket: 'http://127.0.0.1:4443' })), { violations: [], warnings: [] });
    const bad = gcpProviderConfig({ bucket: 'not a url', table: 'nowhere' }, { project: 'X', region: 'moon', bigtableInstance: undefined });
    const result = validateProviderConfig(bad);
    assert.deepEqual(rules(result), ['gcp.bigtable-emulator-host', 'gcp.endpoint', 'gcp.location', 'gcp.project']);
    assert.match(result.warnings[0] ?? '', /bigtableInstance/);
  });
});
