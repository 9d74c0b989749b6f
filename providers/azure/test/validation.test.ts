import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { azureProvider, containerNaming, tableNaming, validateProviderConfig } from '@k8or/provider-azure';
import { nameProvesOwnership, perObjectNameToken } from '@k8or/core';
import { azureProviderConfig, bucket, table } from './support.ts';

const validate = azureProvider.validation.validate.bind(azureProvider.validation);
const rules = (result: { violations: { rule: string }[] }): string[] => result.violations.map((v) => v.rule);

describe('Azure validation for the webhook', () => {
  it('refuses container names Azure refuses, naming spec.name and the rule', () => {
    assert.deepEqual(containerNaming.validate('ok-name-1', 'spec.name'), []);
    for (const [name, rule] of [['ab', 'azure-container.length'], ['Photos', 'azure-container.characters'], ['-photos', 'azure-container.start'], ['my--photos', 'azure-container.consecutive-hyphens'], ['photos-', 'azure-container.end'], ['a'.repeat(64), 'azure-container.length']]) {
      const violations = containerNaming.validate(name as string, 'spec.name');
      assert.ok(violations.some((v) => v.field === 'spec.name' && v.rule === rule), `${name}: ${JSON.stringify(violations)}`);
    }
  });

  it('refuses table names Azure refuses, the reserved name "tables" included', () => {
    assert.deepEqual(tableNaming.validate('Orders2026', 'spec.name'), []);
    for (const [name, rule] of [['or', 'azure-table.length'], ['2orders', 'azure-table.start'], ['my-orders', 'azure-table.characters'], ['Tables', 'azure-table.reserved'], ['a'.repeat(64), 'azure-table.length']]) {
      assert.ok(rules({ violations: tableNaming.validate(name as string, 'spec.name') }).includes(rule as string), name);
    }
  });

  it('defaults names within the rules, unique per cluster, never colliding by truncation', () => {
    const long = 'x'.repeat(80);
    for (const input of [{ clusterId: 'c1', namespace: 'team-a', name: 'photos' }, { clusterId: 'c1', namespace: 'Team--A', name: `${long}-1` }, { clusterId: 'c1', namespace: '9ns', name: '7' }]) {
      assert.deepEqual(containerNaming.validate(containerNaming.defaultName(input), 'spec.name'), [], containerNaming.defaultName(input));
      assert.deepEqual(tableNaming.validate(tableNaming.defaultName(input), 'spec.name'), [], tableNaming.defaultName(input));
    }
    const a = { clusterId: 'c1', namespace: 'team-a', name: `${long}-1` };
    const b = { ...a, name: `${long}-2` };
    assert.notEqual(containerNaming.defaultName(a), containerNaming.defaultName(b));
    assert.notEqual(tableNaming.defaultName(a), tableNaming.defaultName(b));
    assert.notEqual(containerNaming.defaultName(a), containerNaming.defaultName({ ...a, clusterId: 'c2' }));
  });

  it('a table has no tags: its default name carries the object\'s uid token, so it proves ownership, within the rules however long the name', () => {
    assert.equal(tableNaming.perObjectName, true, 'decided by the engine, once the object has a uid');
    const uid = '6f1c2b9e-0d4a-4c1e-9b1a-2f3e4d5c6b7a';
    for (const name of ['orders', 'x'.repeat(80)]) {
      const external = tableNaming.defaultName({ clusterId: 'c1', namespace: 'team-a', name, uid });
      assert.ok(external.includes(perObjectNameToken(uid)), external);
      assert.deepEqual(tableNaming.validate(external, 'spec.name'), [], external);
      assert.ok(nameProvesOwnership({ metadata: { uid } }, external));
      assert.ok(!nameProvesOwnership({ metadata: { uid: 'another-object' } }, external), 'a second object with the same name proves nothing');
    }
    const again = { clusterId: 'c1', namespace: 'team-a', name: 'orders' };
    assert.notEqual(tableNaming.defaultName({ ...again, uid }), tableNaming.defaultName({ ...again, uid: 'another-object' }), 'the same object name made again gets another table');
  });

  it('refuses labels that are not valid metadata: C# identifiers, k8or_ reserved, names equal but for case, non-ASCII values, too much', () => {
    const result = validate('Bucket', bucket('photos', { labels: { 'app.kubernetes.io/name': 'x', '1st': 'x', k8or_name: 'x', Team: 'a', team: 'b', note: 'café' } }), undefined);
    assert.deepEqual(rules(result).sort(), ['azure.metadata-case', 'azure.metadata-name', 'azure.metadata-name', 'azure.metadata-owner', 'azure.metadata-value'].sort());
    const big = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`label${i}`, 'v'.repeat(200)]));
    assert.ok(rules(validate('Bucket', bucket('photos', { labels: big }), undefined)).includes('azure.metadata-size'));
  });

  it('warns at apply time about what Azure holds at account level, and what publicAccess Allowed means', () => {
    const { violations, warnings } = validate('Bucket', bucket('photos', { versioning: true, lifecycle: [{ id: 'a', expirationDays: 3 }], encryption: { type: 'CustomerManaged', keyId: 'k' }, publicAccess: 'Allowed' }), undefined);
    assert.deepEqual(violations, []);
    for (const field of ['spec.versioning', 'spec.lifecycle', 'spec.encryption', 'spec.publicAccess']) assert.ok(warnings.some((w) => w.startsWith(`${field}:`)), field);
    assert.deepEqual(validate('Bucket', bucket('photos'), undefined).warnings, []);
  });

  it('warns that partitionKey and sortKey only document the mapping to PartitionKey and RowKey', () => {
    const { warnings } = validate('Table', table('orders', { sortKey: { name: 'at', type: 'number' }, ttlAttribute: 'exp', deletionProtection: true }), undefined);
    assert.match(warnings[0] ?? '', /^spec\.partitionKey, spec\.sortKey: .*PartitionKey and RowKey.*"pk" \(string\).*"at" \(number\)/);
    assert.ok(warnings.some((w) => w.startsWith('spec.ttlAttribute:')));
    assert.ok(warnings.some((w) => w.startsWith('spec.deletionProtection:')));
  });

  it('checks the ProviderConfig: storage account name, endpoints, fields of other clouds', () => {
    assert.deepEqual(validateProviderConfig(azureProviderConfig({ bucket: 'http://127.0.0.1:10000/devstoreaccount1' })), { violations: [], warnings: [] });
    const bad = azureProviderConfig({ bucket: 'not a url' }, 'My_Account');
    bad.spec.region = 'westeurope';
    const result = validateProviderConfig(bad);
    assert.deepEqual(rules(result).sort(), ['azure.endpoint', 'azure.storage-account']);
    assert.ok(result.warnings.some((w) => w.startsWith('spec.region:')));
  });
});
