import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import jsonpatch from 'fast-json-patch';
import { parseAllDocuments } from 'yaml';
import { contextFromManifests, defaultObject, escapePointerToken, PatchBuilder, pointer, reviewObject, validateObject, webhookConfigurations } from '@k8or/webhook';
import { aws } from './helpers/fixtures.ts';
import { defaultDynamoDbTableName } from '@k8or/provider-aws';
import { bucket, testWorld } from './helpers/fixtures.ts';

describe('library: the same rules offline, for `k8or validate -f`', () => {
  it('defaults then validates a manifest without any server', () => {
    const context = testWorld();
    const manifest = bucket('apps', 'Photos_2026');
    const { object, patch } = defaultObject(manifest, context);
    assert.ok(patch.length > 0);
    const { violations } = validateObject(object, context);
    assert.deepEqual(violations, [], 'the generated name satisfies S3 even when the object name would not');
    const broken = validateObject(bucket('apps', 'x', { name: 'UPPER', providerConfigRef: { name: 'default' } }), context);
    assert.deepEqual(
      broken.violations.map((v) => v.rule),
      ['s3.characters', 's3.edges'],
    );
  });

  it('reviews a multi-document manifest file offline: defaults, denials and warnings per object', () => {
    const file = [
      'apiVersion: k8or.io/v1alpha1\nkind: ProviderConfig\nmetadata:\n  name: default\nspec:\n  provider: aws\n  region: eu-west-1',
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  annotations:\n    k8or.io/deletion-policy: Retain',
      'apiVersion: k8or.io/v1alpha1\nkind: Table\nmetadata:\n  name: orders\n  namespace: shop\nspec:\n  partitionKey: {name: id, type: string}\n  ttlAttribute: expiresAt',
      'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: assets\n  namespace: shop\nspec:\n  name: Shop_Assets',
    ].join('\n---\n');
    const manifests = parseAllDocuments(file).map((d) => d.toJS() as unknown);
    const context = contextFromManifests(manifests, { providers: [aws], clusterId: 'c1' });
    const [, , orders, assets] = manifests.map((m) => reviewObject(m, context));
    assert.deepEqual(orders?.violations, []);
    assert.deepEqual((orders?.object as { spec: unknown }).spec, { partitionKey: { name: 'id', type: 'string' }, ttlAttribute: 'expiresAt', providerConfigRef: { name: 'default' }, name: defaultDynamoDbTableName({ clusterId: 'c1', namespace: 'shop', name: 'orders' }), deletionPolicy: 'Retain' });
    assert.match(orders?.warnings.join('\n') ?? '', /spec\.ttlAttribute: DynamoDB deletes expired items/);
    assert.deepEqual(assets?.violations.map((v) => `${v.field} ${v.rule}`), ['spec.name s3.characters', 'spec.name s3.edges']);
  });

  it('never modifies the object it is given', () => {
    const deepFreeze = <T>(value: T): T => {
      if (value && typeof value === 'object') Object.values(value).forEach(deepFreeze);
      return Object.freeze(value);
    };
    const manifest = deepFreeze(bucket('team-a', 'frozen', { labels: { team: 'a' } }));
    const { object, patch } = defaultObject(manifest, testWorld());
    assert.equal(patch.length, 3);
    assert.deepEqual(manifest, bucket('team-a', 'frozen', { labels: { team: 'a' } }));
    assert.deepEqual((object as { spec: unknown }).spec, { labels: { team: 'a' }, providerConfigRef: { name: 'staging' }, name: 'team-a-frozen-' + (patch[1]?.value as string).split('-').at(-1), deletionPolicy: 'Retain' });
  });

  it('escapes JSON Pointer tokens as RFC 6901 says (~ before /)', () => {
    assert.equal(escapePointerToken('k8or.io/protect'), 'k8or.io~1protect');
    assert.equal(escapePointerToken('a~/b'), 'a~0~1b');
    assert.equal(pointer(['metadata', 'annotations', 'k8or.io/external-name']), '/metadata/annotations/k8or.io~1external-name');
  });

  it('adds missing parents once, with keys that need escaping, and never through a prototype', () => {
    const original = { metadata: { name: 'x' } };
    const builder = new PatchBuilder(original);
    builder.addIfAbsent(['metadata', 'annotations', 'k8or.io/a~b'], '1');
    builder.addIfAbsent(['metadata', 'annotations', 'k8or.io/c'], '2');
    builder.addIfAbsent(['spec', '__proto__', 'polluted'], true);
    assert.deepEqual(builder.operations, [
      { op: 'add', path: '/metadata/annotations', value: { 'k8or.io/a~b': '1' } },
      { op: 'add', path: '/metadata/annotations/k8or.io~1c', value: '2' },
      { op: 'add', path: '/spec', value: JSON.parse('{"__proto__":{"polluted":true}}') },
    ]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const applied = jsonpatch.applyPatch(structuredClone(original), builder.operations.slice(0, 2) as jsonpatch.Operation[], true, false).newDocument;
    assert.deepEqual(applied, { metadata: { name: 'x', annotations: { 'k8or.io/a~b': '1', 'k8or.io/c': '2' } } });
    assert.equal(new PatchBuilder({ spec: 'text' }).addIfAbsent(['spec', 'name'], 'n'), false, 'never replaces a non-object parent');
  });

  it('generates webhook configurations that fail closed, have no side effects and speak v1', () => {
    const { validating, mutating } = webhookConfigurations({ service: { namespace: 'k8or-system', name: 'k8or-webhook' }, caBundle: 'PEM' });
    const v = validating.webhooks?.[0];
    const m = mutating.webhooks?.[0];
    assert.deepEqual(v?.clientConfig, { service: { namespace: 'k8or-system', name: 'k8or-webhook', port: 443, path: '/validate' }, caBundle: Buffer.from('PEM').toString('base64') });
    assert.deepEqual(v?.rules, [{ apiGroups: ['k8or.io'], apiVersions: ['v1alpha1'], resources: ['buckets', 'tables', 'providerconfigs'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: '*' }]);
    assert.deepEqual(m?.rules?.[0]?.resources, ['buckets', 'tables']);
    assert.deepEqual(m?.rules?.[0]?.operations, ['CREATE', 'UPDATE']);
    for (const w of [v, m]) {
      assert.equal(w?.sideEffects, 'None');
      assert.deepEqual(w?.admissionReviewVersions, ['v1']);
      assert.equal(w?.failurePolicy, 'Fail');
      assert.equal(w?.timeoutSeconds, 5);
      assert.equal(w?.matchPolicy, 'Equivalent');
    }
    const byUrl = webhookConfigurations({ url: 'https://127.0.0.1:9443/' });
    assert.equal(byUrl.mutating.webhooks?.[0]?.clientConfig.url, 'https://127.0.0.1:9443/mutate');
  });
});
