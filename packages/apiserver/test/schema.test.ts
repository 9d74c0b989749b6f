import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allCrds, type CustomResourceDefinition } from '@k8or/api';
import { compileCrdSchema, fieldErrorText, SchemaCompileError, type AdmitResult, type CompiledSchema } from '@k8or/apiserver';

// The CRD schema engine must answer like apiextensions-apiserver: same pruning, defaults and error texts,
// so that kubectl users and clients see what a real cluster would tell them.

const crd = (kind: string): CustomResourceDefinition => {
  const found = allCrds().find((c) => c.spec.names.kind === kind);
  assert.ok(found, `CRD for ${kind}`);
  return found;
};
const compiled = (kind: string): CompiledSchema => compileCrdSchema(crd(kind).spec.versions[0]!.schema.openAPIV3Schema);

const bucketSchema = compiled('Bucket');
const tableSchema = compiled('Table');
const providerConfigSchema = compiled('ProviderConfig');

type Obj = Record<string, unknown>;
const bucket = (spec: Obj, rest: Obj = {}): Obj => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'team-a' }, spec, ...rest });
const table = (spec: Obj): Obj => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name: 'orders', namespace: 'team-a' }, spec });
const strict = { fieldValidation: 'Strict' } as const;
const texts = (result: AdmitResult): string[] => result.errors.map(fieldErrorText);
const spec = (result: AdmitResult): Obj => result.object.spec as Obj;

const BLOCKED =
  '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

describe('schema engine with the k8or CRDs', () => {
  it('admits a minimal Bucket and fills in the schema defaults', () => {
    const result = bucketSchema.admit(bucket({ location: 'eu-west-1' }), undefined, strict);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(spec(result), {
      location: 'eu-west-1',
      versioning: false,
      publicAccess: 'Blocked',
      forceDelete: false,
      managementPolicy: 'Manage',
    });
  });

  it('does not modify the object it is given', () => {
    const input = bucket({ location: 'eu', junk: true });
    const before = structuredClone(input);
    bucketSchema.admit(input, undefined, { fieldValidation: 'Ignore' });
    assert.deepEqual(input, before);
  });

  it('serves an object that needs no default as it is, without a copy, and defaults a copy of one that does', () => {
    const defaulted = bucketSchema.admit(bucket({ location: 'eu' }), undefined, strict).object;
    assert.equal(bucketSchema.applyDefaults(defaulted), defaulted, 'already defaulted: the same object');
    const admittedAgain = bucketSchema.admit(defaulted, undefined, strict);
    assert.equal(admittedAgain.object, defaulted, 'nothing to prune or default: the same object');
    const bare = bucket({ location: 'eu' });
    const before = structuredClone(bare);
    const served = bucketSchema.applyDefaults(bare);
    assert.notEqual(served, bare);
    assert.deepEqual(served, defaulted, 'the defaults are filled in on a copy');
    assert.deepEqual(bare, before, 'the input is left as it was');
    const withNull = { ...defaulted, spec: { ...(defaulted.spec as Obj), versioning: null } };
    assert.notEqual(bucketSchema.applyDefaults(withNull), withNull, 'a null in a non-nullable field is defaulted or dropped, on a copy');
  });

  it('defaults nested fields only where the parent object exists', () => {
    const without = bucketSchema.admit(bucket({}), undefined, strict);
    assert.equal(spec(without).encryption, undefined, 'no encryption object is invented');
    const withEncryption = bucketSchema.admit(bucket({ encryption: {} }), undefined, strict);
    assert.deepEqual(spec(withEncryption).encryption, { type: 'ProviderManaged' });
    const rules = bucketSchema.admit(bucket({ lifecycle: [{ id: 'old', expirationDays: 30 }] }), undefined, strict);
    assert.deepEqual(spec(rules).lifecycle, [{ id: 'old', expirationDays: 30, enabled: true }]);
  });

  it('applyDefaults defaults a stored object without validating it', () => {
    const defaulted = compiled('Bucket').applyDefaults(bucket({ versioning: 'not-a-bool' }));
    assert.equal((defaulted.spec as Obj).versioning, 'not-a-bool');
    assert.equal((defaulted.spec as Obj).publicAccess, 'Blocked');
  });

  it('reports a wrong type the way kube-apiserver words it, and skips CEL rules then', () => {
    const result = bucketSchema.admit(bucket({ versioning: 'string' }), undefined, strict);
    assert.deepEqual(texts(result), [
      'spec.versioning: Invalid value: "string": spec.versioning in body must be of type boolean: "string"',
      BLOCKED,
    ]);
    assert.equal(result.errors[0]!.reason, 'FieldValueTypeInvalid');
    assert.equal(result.errors[0]!.message, 'Invalid value: "string": spec.versioning in body must be of type boolean: "string"');
  });

  it('tells integers from numbers', () => {
    const fraction = bucketSchema.admit(bucket({ lifecycle: [{ id: 'a', expirationDays: 1.5 }] }), undefined, strict);
    assert.equal(
      texts(fraction)[0],
      'spec.lifecycle[0].expirationDays: Invalid value: "number": spec.lifecycle[0].expirationDays in body must be of type integer: "number"',
    );
    const whole = bucketSchema.admit(bucket({ lifecycle: [{ id: 'a', expirationDays: 2 }] }), undefined, strict);
    assert.deepEqual(whole.errors, []);
  });

  it('rejects a missing required field', () => {
    const noSpec = bucketSchema.admit({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'x' } }, undefined, strict);
    assert.deepEqual(texts(noSpec), ['spec: Required value', BLOCKED]);
    assert.equal(noSpec.errors[0]!.reason, 'FieldValueRequired');
    const noKeyName = tableSchema.admit(table({ partitionKey: { type: 'string' } }), undefined, strict);
    assert.deepEqual(texts(noKeyName), ['spec.partitionKey.name: Required value', BLOCKED]);
  });

  it('rejects a value outside an enum with the supported values', () => {
    const result = bucketSchema.admit(bucket({ publicAccess: 'Public' }), undefined, strict);
    assert.equal(texts(result)[0], 'spec.publicAccess: Unsupported value: "Public": supported values: "Blocked", "Allowed"');
    assert.equal(result.errors[0]!.reason, 'FieldValueNotSupported');
  });

  it('checks patterns and minimum lengths', () => {
    const pattern = bucketSchema.admit(bucket({ location: 'eu west' }), undefined, strict);
    assert.deepEqual(texts(pattern), ["spec.location: Invalid value: \"eu west\": spec.location in body should match '^[A-Za-z0-9-]+$'"]);
    const empty = bucketSchema.admit(bucket({ location: '' }), undefined, strict);
    assert.deepEqual(texts(empty), ['spec.location: Invalid value: "": spec.location in body should be at least 1 chars long']);
    assert.deepEqual(bucketSchema.admit(bucket({ location: 'westeurope' }), undefined, strict).errors, []);
  });

  it('reports a too long string without echoing it', () => {
    const result = bucketSchema.admit(bucket({ name: 'x'.repeat(256) }), undefined, strict);
    assert.deepEqual(texts(result), ['spec.name: Too long: may not be more than 255 bytes', BLOCKED]);
    assert.equal(result.errors[0]!.reason, 'FieldValueTooLong');
    assert.deepEqual(bucketSchema.admit(bucket({ name: 'x'.repeat(255) }), undefined, strict).errors, []);
  });

  it('checks numeric bounds', () => {
    const low = bucketSchema.admit(bucket({ lifecycle: [{ id: 'a', expirationDays: 0 }] }), undefined, strict);
    assert.deepEqual(texts(low), [
      'spec.lifecycle[0].expirationDays: Invalid value: 0: spec.lifecycle[0].expirationDays in body should be greater than or equal to 1',
    ]);
    const high = bucketSchema.admit(bucket({ lifecycle: [{ id: 'a', expirationDays: 36501 }] }), undefined, strict);
    assert.deepEqual(texts(high), [
      'spec.lifecycle[0].expirationDays: Invalid value: 36501: spec.lifecycle[0].expirationDays in body should be less than or equal to 36500',
    ]);
  });

  it('limits array sizes', () => {
    const transitions = [
      { days: 30, tier: 'InfrequentAccess' },
      { days: 90, tier: 'Archive' },
      { days: 180, tier: 'Archive' },
    ];
    const result = bucketSchema.admit(bucket({ lifecycle: [{ id: 'a', transitions }] }), undefined, strict);
    assert.deepEqual(texts(result), ['spec.lifecycle[0].transitions: Too many: 3: must have at most 2 items', BLOCKED]);
    assert.equal(result.errors[0]!.reason, 'FieldValueTooMany');
    const ok = bucketSchema.admit(bucket({ lifecycle: [{ id: 'a', transitions: transitions.slice(0, 2) }] }), undefined, strict);
    assert.deepEqual(ok.errors, []);
  });

  it('limits the number of map entries', () => {
    const labels = Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`key${i}`, 'v']));
    const result = bucketSchema.admit(bucket({ labels }), undefined, strict);
    assert.deepEqual(texts(result), ['spec.labels: Too many: 41: must have at most 40 items', BLOCKED]);
  });

  it('validates map values through additionalProperties', () => {
    const result = bucketSchema.admit(bucket({ labels: { team: 'Platform' } }), undefined, strict);
    assert.deepEqual(texts(result), ["spec.labels.team: Invalid value: \"Platform\": spec.labels.team in body should match '^[a-z0-9_-]*$'"]);
  });

  it('rejects duplicate keys in a map list', () => {
    const result = bucketSchema.admit(
      bucket({ lifecycle: [{ id: 'logs', expirationDays: 1 }, { id: 'logs', expirationDays: 2 }] }),
      undefined,
      strict,
    );
    assert.deepEqual(texts(result), ['spec.lifecycle[1]: Duplicate value: map[string]interface {}{"id":"logs"}']);
    assert.equal(result.errors[0]!.reason, 'FieldValueDuplicate');
  });

  it('validates date-time formats in status writes and ignores spec errors there', () => {
    const status = {
      conditions: [{ type: 'Ready', status: 'True', reason: 'Available', message: 'ok', lastTransitionTime: 'yesterday' }],
    };
    const result = bucketSchema.admit(bucket({ versioning: 'bad' }, { status }), undefined, { fieldValidation: 'Strict', subresource: 'status' });
    assert.deepEqual(texts(result), [
      'status.conditions[0].lastTransitionTime: Invalid value: "yesterday": status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday"',
      BLOCKED,
    ]);
    status.conditions[0]!.lastTransitionTime = '2026-11-22T01:02:03Z';
    const fine = bucketSchema.admit(bucket({}, { status }), undefined, { fieldValidation: 'Strict', subresource: 'status' });
    assert.deepEqual(fine.errors, []);
  });

  it('evaluates CEL rules with has(), ternaries, size() and macros', () => {
    const customerKeyMissing = bucketSchema.admit(bucket({ encryption: { type: 'CustomerManaged' } }), undefined, strict);
    assert.deepEqual(texts(customerKeyMissing), [
      'spec.encryption: Invalid value: "object": encryption.keyId is required with type CustomerManaged and not allowed otherwise',
    ]);
    const customerKey = bucketSchema.admit(bucket({ encryption: { type: 'CustomerManaged', keyId: 'alias/photos' } }), undefined, strict);
    assert.deepEqual(customerKey.errors, []);

    const noAction = bucketSchema.admit(bucket({ lifecycle: [{ id: 'nothing', transitions: [] }] }), undefined, strict);
    assert.match(texts(noAction)[0]!, /^spec\.lifecycle\[0\]: Invalid value: "object": a lifecycle rule needs at least one action/);

    const reserved = bucketSchema.admit(bucket({ labels: { k8or_owner: 'me' } }), undefined, strict);
    assert.match(texts(reserved)[0]!, /^spec\.labels: Invalid value: "object": label keys must be 1-63 characters/);
    const upper = bucketSchema.admit(bucket({ labels: { Team: 'a' } }), undefined, strict);
    assert.equal(upper.errors.length, 1);
    assert.deepEqual(bucketSchema.admit(bucket({ labels: { team: 'a', cost_center: '42' } }), undefined, strict).errors, []);
  });

  it('keeps spec.name immutable once set (a transition rule)', () => {
    const old = bucket({ name: 'photos-prod', location: 'eu-west-1' });
    const rename = bucketSchema.admit(bucket({ name: 'photos-new', location: 'eu-west-1' }), old, strict);
    assert.deepEqual(texts(rename), ['spec.name: Invalid value: "string": name is immutable once set']);
    assert.equal(rename.errors[0]!.reason, 'FieldValueInvalid');
    const same = bucketSchema.admit(bucket({ name: 'photos-prod', location: 'eu-west-1', versioning: true }), old, strict);
    assert.deepEqual(same.errors, []);
  });

  it('runs transition rules only on update, and only where an old value exists', () => {
    assert.deepEqual(bucketSchema.admit(bucket({ name: 'fresh' }), undefined, strict).errors, [], 'create: no oldSelf');
    const setLater = bucketSchema.admit(bucket({ name: 'now-set' }), bucket({}), strict);
    assert.deepEqual(setLater.errors, [], 'update setting a field the first time');
  });

  it('keeps spec.location immutable and not removable', () => {
    const old = bucket({ name: 'photos', location: 'eu-west-1' });
    const move = bucketSchema.admit(bucket({ name: 'photos', location: 'us-east-1' }), old, strict);
    assert.deepEqual(texts(move), ['spec.location: Invalid value: "string": location is immutable once set']);
    const drop = bucketSchema.admit(bucket({ name: 'photos' }), old, strict);
    assert.deepEqual(texts(drop), ['spec: Invalid value: "object": spec.location may not be removed once set']);
    const dropName = bucketSchema.admit(bucket({ location: 'eu-west-1' }), old, strict);
    assert.deepEqual(texts(dropName), ['spec: Invalid value: "object": spec.name may not be removed once set']);
  });

  it('keeps table keys immutable and forbids adding or removing the sort key', () => {
    const old = table({ name: 'orders', partitionKey: { name: 'pk', type: 'string' } });
    const changed = tableSchema.admit(table({ name: 'orders', partitionKey: { name: 'id', type: 'string' } }), old, strict);
    assert.deepEqual(texts(changed), ['spec.partitionKey: Invalid value: "object": the key is immutable once set']);
    const added = tableSchema.admit(
      table({ name: 'orders', partitionKey: { name: 'pk', type: 'string' }, sortKey: { name: 'sk', type: 'number' } }),
      old,
      strict,
    );
    assert.deepEqual(texts(added), ['spec: Invalid value: "object": spec.sortKey cannot be added or removed after creation']);
    const withSort = table({ name: 'orders', partitionKey: { name: 'pk', type: 'string' }, sortKey: { name: 'sk', type: 'number' } });
    const removed = tableSchema.admit(old, withSort, strict);
    assert.deepEqual(texts(removed), ['spec: Invalid value: "object": spec.sortKey cannot be added or removed after creation']);
    const billingOnly = tableSchema.admit(
      table({ name: 'orders', partitionKey: { name: 'pk', type: 'string' }, billing: { mode: 'onDemand' } }),
      old,
      strict,
    );
    assert.deepEqual(billingOnly.errors, []);
  });

  it('compares fields of the same object in CEL', () => {
    const clash = tableSchema.admit(table({ partitionKey: { name: 'id', type: 'string' }, sortKey: { name: 'id', type: 'string' } }), undefined, strict);
    assert.deepEqual(texts(clash), ['spec: Invalid value: "object": spec.sortKey.name must differ from spec.partitionKey.name']);
  });

  it('enforces ProviderConfig rules across fields', () => {
    const pc = (s: Obj): Obj => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: s });
    const missingRegion = providerConfigSchema.admit(pc({ provider: 'aws', credentials: { source: 'Environment' } }), undefined, strict);
    assert.ok(texts(missingRegion).includes('spec: Invalid value: "object": spec.region is required for provider aws'), texts(missingRegion).join('\n'));
    const fine = providerConfigSchema.admit(pc({ provider: 'aws', region: 'eu-west-1', credentials: { source: 'Environment' } }), undefined, strict);
    assert.deepEqual(fine.errors, []);
    const switched = providerConfigSchema.admit(
      pc({ provider: 'gcp', project: 'my-project-1', credentials: { source: 'Environment' } }),
      pc({ provider: 'aws', region: 'eu-west-1', credentials: { source: 'Environment' } }),
      strict,
    );
    assert.deepEqual(texts(switched), ['spec.provider: Invalid value: "string": provider is immutable once set']);
  });

  it('ratchets: an unchanged invalid field does not block an update', () => {
    const legacy = bucket({ name: 'photos', location: 'eu west' });
    const update = bucketSchema.admit(bucket({ name: 'photos', location: 'eu west', versioning: true }), legacy, strict);
    assert.deepEqual(update.errors, []);
    const create = bucketSchema.admit(legacy, undefined, strict);
    assert.equal(create.errors.length, 1);
  });
});

describe('unknown fields and fieldValidation', () => {
  const input = bucket({ location: 'eu', colour: 'blue', lifecycle: [{ id: 'a', expirationDays: 1, note: 'x' }] }, { extra: 1 });

  it('Strict: fails decoding with every unknown field named', () => {
    const result = bucketSchema.admit(input, undefined, strict);
    assert.equal(result.strictDecodingError, 'strict decoding error: unknown field "extra", unknown field "spec.colour", unknown field "spec.lifecycle[0].note"');
    assert.deepEqual(
      result.errors.map((e) => e.message),
      ['unknown field "extra"', 'unknown field "spec.colour"', 'unknown field "spec.lifecycle[0].note"'],
    );
  });

  it('Warn: prunes and warns', () => {
    const result = bucketSchema.admit(input, undefined, { fieldValidation: 'Warn' });
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, ['unknown field "extra"', 'unknown field "spec.colour"', 'unknown field "spec.lifecycle[0].note"']);
    assert.equal('colour' in spec(result), false);
    assert.equal('extra' in result.object, false);
  });

  it('Ignore: prunes silently', () => {
    const result = bucketSchema.admit(input, undefined, { fieldValidation: 'Ignore' });
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual((spec(result).lifecycle as Obj[])[0], { id: 'a', expirationDays: 1, enabled: true });
  });

  it('keeps apiVersion, kind, metadata and status fields the schema declares', () => {
    const result = bucketSchema.admit(
      bucket({ location: 'eu' }, { status: { provider: 'aws', observedGeneration: 1 } }),
      undefined,
      strict,
    );
    assert.deepEqual(result.errors, []);
    assert.equal(result.object.apiVersion, 'k8or.io/v1alpha1');
    assert.deepEqual(result.object.metadata, { name: 'photos', namespace: 'team-a' });
    assert.deepEqual(result.object.status, { provider: 'aws', observedGeneration: 1 });
  });
});

describe('schema engine with ad-hoc schemas', () => {
  const schema = (properties: Obj, extra: Obj = {}): CompiledSchema =>
    compileCrdSchema({ type: 'object', properties: { spec: { type: 'object', properties, ...extra } } });
  const admit = (s: CompiledSchema, specValue: Obj, old?: Obj) =>
    s.admit({ apiVersion: 'x/v1', kind: 'X', metadata: {}, spec: specValue }, old && { apiVersion: 'x/v1', kind: 'X', metadata: {}, spec: old }, strict);

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields, still pruning inside declared children', () => {
    const s = schema({ known: { type: 'object', properties: { a: { type: 'string' } } } }, { 'x-kubernetes-preserve-unknown-fields': true });
    const result = admit(s, { anything: { goes: [1, 2] }, known: { a: 'x', b: 'pruned' } });
    assert.deepEqual(result.object.spec, { anything: { goes: [1, 2] }, known: { a: 'x' } });
    assert.deepEqual(texts(result), ['spec.known.b: unknown field "spec.known.b"']);
  });

  it('allows null only in nullable fields, and drops nulls of other fields', () => {
    const s = schema({ maybe: { type: 'string', nullable: true }, never: { type: 'string' }, withDefault: { type: 'string', default: 'd' } });
    const result = admit(s, { maybe: null, never: null, withDefault: null });
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.object.spec, { maybe: null, withDefault: 'd' });
  });

  it('reports null items of a non-nullable array', () => {
    const s = schema({ list: { type: 'array', items: { type: 'string' } } });
    assert.deepEqual(texts(admit(s, { list: ['a', null] })), [
      'spec.list[1]: Invalid value: "null": spec.list[1] in body must be of type string: "null"',
      BLOCKED,
    ]);
  });

  it('checks exclusive bounds, multipleOf and number formatting', () => {
    const s = schema({
      ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1000000 },
      step: { type: 'integer', multipleOf: 5 },
    });
    assert.deepEqual(texts(admit(s, { ratio: 0 })), ['spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0']);
    assert.deepEqual(texts(admit(s, { ratio: 2000000.5 })), [
      'spec.ratio: Invalid value: 2.0000005e+06: spec.ratio in body should be less than or equal to 1e+06',
    ]);
    assert.deepEqual(texts(admit(s, { step: 7 })), ['spec.step: Invalid value: 7: spec.step in body should be a multiple of 5']);
    assert.deepEqual(admit(s, { ratio: 0.5, step: 10 }).errors, []);
  });

  it('checks minItems, minProperties and set uniqueness', () => {
    const s = schema({
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, 'x-kubernetes-list-type': 'set' },
      env: { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1 },
    });
    assert.deepEqual(texts(admit(s, { tags: [] })), ['spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items']);
    assert.deepEqual(texts(admit(s, { env: {} })), ['spec.env: Invalid value: 0: spec.env in body should have at least 1 properties']);
    const dup = admit(s, { tags: ['a', 'b', 'a'] });
    assert.deepEqual(texts(dup), ['spec.tags[2]: Duplicate value: "a"']);
    assert.deepEqual(admit(s, { tags: ['a', 'b'], env: { A: '1' } }).errors, []);
  });

  it('accepts int-or-string fields', () => {
    const s = schema({ port: { 'x-kubernetes-int-or-string': true } });
    assert.deepEqual(admit(s, { port: 8080 }).errors, []);
    assert.deepEqual(admit(s, { port: 'http' }).errors, []);
    assert.deepEqual(texts(admit(s, { port: true }))[0], 'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"');
  });

  it('uses "failed rule" when a rule has no message, and honours reason, fieldPath and messageExpression', () => {
    const s = schema(
      {
        min: { type: 'integer' },
        max: { type: 'integer' },
        items: { type: 'array', items: { type: 'string' } },
      },
      {
        'x-kubernetes-validations': [
          { rule: 'self.min <= self.max' },
          { rule: 'self.max < 100', fieldPath: '.max', reason: 'FieldValueForbidden', message: 'max must stay below 100' },
          { rule: 'self.items.all(i, i.startsWith("x-"))', messageExpression: "'bad item count: ' + string(size(self.items))" },
          { rule: 'self.items.exists(i, i == "x-required")', reason: 'FieldValueRequired', message: 'x-required is required' },
        ],
      },
    );
    const result = admit(s, { min: 5, max: 200, items: ['x-a', 'b'] });
    assert.deepEqual(texts(result), [
      'spec.max: Forbidden: max must stay below 100',
      'spec: Invalid value: "object": bad item count: 2',
      'spec: Required value: x-required is required',
    ]);
    assert.deepEqual(texts(admit(s, { min: 5, max: 1, items: ['x-required'] })), ['spec: Invalid value: "object": failed rule: self.min <= self.max']);
    assert.deepEqual(admit(s, { min: 1, max: 5, items: ['x-required'] }).errors, []);
  });

  it('reports a CEL evaluation error on a missing key', () => {
    const s = schema({ a: { type: 'string' } }, { 'x-kubernetes-validations': [{ rule: "self.a == 'x'", message: 'a must be x' }] });
    const result = admit(s, {});
    assert.equal(result.errors.length, 1);
    assert.match(texts(result)[0]!, /^spec: Invalid value: "object": no such key: a evaluating rule: a must be x$/i);
  });

  it('compares numbers, strings and timestamps in CEL', () => {
    const s = schema(
      {
        replicas: { type: 'integer' },
        ratio: { type: 'number' },
        name: { type: 'string' },
        start: { type: 'string', format: 'date-time' },
        end: { type: 'string', format: 'date-time' },
      },
      {
        'x-kubernetes-validations': [
          { rule: 'self.replicas >= 1 && self.replicas <= 10', message: 'replicas 1-10' },
          { rule: 'self.ratio < 0.5', message: 'ratio below 0.5' },
          { rule: "self.name.matches('^[a-z]+$') && size(self.name) < 8", message: 'short lowercase name' },
          { rule: 'self.start < self.end', message: 'start before end' },
        ],
      },
    );
    const good = { replicas: 3, ratio: 0.25, name: 'abc', start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' };
    assert.deepEqual(admit(s, good).errors, []);
    const bad = admit(s, { replicas: 11, ratio: 0.75, name: 'ABCDEFGHIJ', start: '2026-03-01T00:00:00Z', end: '2026-02-01T00:00:00Z' });
    assert.deepEqual(
      bad.errors.map((e) => e.message),
      ['replicas 1-10', 'ratio below 0.5', 'short lowercase name', 'start before end'].map((m) => `Invalid value: "object": ${m}`),
    );
  });

  it('evaluates the Kubernetes CEL library functions CRD authors use (lists, regex, strings, URLs)', () => {
    const rules = [
      'self.versions.isSorted()',
      'self.versions.sum() <= 10',
      'self.versions.min() >= 1 && self.versions.max() <= 5',
      'self.versions.indexOf(2) == 1 && self.versions.lastIndexOf(9) == -1',
      "self.name.find('[0-9]+') == '42'",
      "self.name.findAll('[a-z]').size() == 3",
      "self.name.replace('-', '_') == 'abc_42'",
      "self.name.charAt(0) == 'a' && self.name.reverse() == '24-cba'",
      'isURL(self.homepage)',
    ];
    const s = schema(
      { versions: { type: 'array', items: { type: 'integer' } }, name: { type: 'string' }, homepage: { type: 'string' } },
      { 'x-kubernetes-validations': rules.map((rule) => ({ rule })) },
    );
    assert.deepEqual(admit(s, { versions: [1, 2, 3], name: 'abc-42', homepage: 'https://example.com/docs' }).errors, []);
    const failed = admit(s, { versions: [3, 1, 9], name: 'abc-42', homepage: 'not a url' });
    assert.deepEqual(
      failed.errors.map((e) => e.message),
      ['failed rule: self.versions.isSorted()', 'failed rule: self.versions.sum() <= 10', 'failed rule: self.versions.min() >= 1 && self.versions.max() <= 5', 'failed rule: self.versions.indexOf(2) == 1 && self.versions.lastIndexOf(9) == -1', 'failed rule: isURL(self.homepage)'].map(
        (m) => `Invalid value: "object": ${m}`,
      ),
    );
  });

  it('correlates map-list items by key for transition rules', () => {
    const s = schema({
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, port: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'port is immutable' }] } },
        },
      },
    });
    const old = { ports: [{ name: 'http', port: 80 }] };
    assert.deepEqual(texts(admit(s, { ports: [{ name: 'https', port: 443 }, { name: 'http', port: 8080 }] }, old)), [
      'spec.ports[1].port: Invalid value: "integer": port is immutable',
    ]);
    assert.deepEqual(admit(s, { ports: [{ name: 'https', port: 443 }, { name: 'http', port: 80 }] }, old).errors, []);
  });

  it('runs optionalOldSelf rules on create too, with oldSelf as an optional', () => {
    const s = schema({
      tier: {
        type: 'string',
        'x-kubernetes-validations': [
          { rule: "oldSelf.hasValue() ? (oldSelf.value() == 'Archive' ? self == 'Archive' : true) : self != 'Archive'", optionalOldSelf: true, message: 'Archive is one-way, and not a starting tier' },
        ],
      },
    });
    assert.deepEqual(texts(admit(s, { tier: 'Archive' })), ['spec.tier: Invalid value: "string": Archive is one-way, and not a starting tier']);
    assert.deepEqual(admit(s, { tier: 'Hot' }).errors, []);
    assert.deepEqual(admit(s, { tier: 'Archive' }, { tier: 'Hot' }).errors, []);
    assert.deepEqual(texts(admit(s, { tier: 'Hot' }, { tier: 'Archive' })), ['spec.tier: Invalid value: "string": Archive is one-way, and not a starting tier']);
  });

  it('rejects a schema whose CEL rule or pattern does not compile', () => {
    assert.throws(
      () => compileCrdSchema({ type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a ==' }] } } }),
      (err: unknown) => err instanceof SchemaCompileError && /compilation failed/.test(err.message),
    );
    assert.throws(
      () => compileCrdSchema({ type: 'object', properties: { spec: { type: 'string', pattern: '([a-z' } } }),
      SchemaCompileError,
    );
  });

  it('type-checks rules against the schema when the CRD is compiled, as kube-apiserver does', () => {
    const withRule = (rule: string): unknown => ({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            size: { type: 'integer' },
            colourCode: { type: 'string' },
            rules: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, days: { type: 'integer' } } } },
            tags: { type: 'object', additionalProperties: { type: 'string' } },
            extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
          'x-kubernetes-validations': [{ rule }],
        },
      },
    });
    const problems = (rule: string): string[] => {
      try {
        compileCrdSchema(withRule(rule));
        return [];
      } catch (err) {
        assert.ok(err instanceof SchemaCompileError);
        return err.errors;
      }
    };
    assert.deepEqual(problems("self.colour == 'red'"), [
      'openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "self.colour == \'red\'": compilation failed: ERROR: <input>:1:6: undefined field \'colour\'',
    ]);
    assert.match(problems('self.rules.all(r, r.dayz > 0)')[0]!, /undefined field 'dayz'/);
    assert.match(problems('self.size')[0]!, /rule must evaluate to a bool, but evaluates to int/);
    for (const fine of [
      "self.colourCode == 'red'",
      'self == oldSelf',
      'self.rules.all(r, r.days > 0 && r.id != "")',
      "self.tags.all(k, self.tags[k] != '')",
      'has(self.extra) && self.extra.anything == 1',
      'size(self.rules) <= 10 ? true : self.size > 2',
    ]) {
      assert.deepEqual(problems(fine), [], fine);
    }
  });

  it('applies the restrictions a CRD puts on metadata.name', () => {
    const s = compileCrdSchema({
      type: 'object',
      properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10, pattern: '^[a-z]+$' } } }, spec: { type: 'object' } },
    });
    const named = (name: string) => s.admit({ apiVersion: 'x/v1', kind: 'X', metadata: { name, namespace: 'a', uid: 'u' }, spec: {} }, undefined, strict);
    assert.deepEqual(named('short').errors, []);
    assert.deepEqual(texts(named('much-too-long-name')), ['metadata.name: Too long: may not be more than 10 bytes', BLOCKED]);
    assert.deepEqual(texts(named('abc1')), ["metadata.name: Invalid value: \"abc1\": metadata.name in body should match '^[a-z]+$'"]);
    assert.deepEqual(named('short').object.metadata, { name: 'short', namespace: 'a', uid: 'u' }, 'metadata is left to the server');
  });

  it('admits anything when the CRD has no schema', () => {
    const open = compileCrdSchema(undefined);
    const result = open.admit({ apiVersion: 'x/v1', kind: 'X', metadata: {}, spec: { any: ['thing'] } }, undefined, strict);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.object.spec, { any: ['thing'] });
  });
});
