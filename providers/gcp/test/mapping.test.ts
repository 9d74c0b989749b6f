import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TerminalError } from '@k8or/core';
import { bigtableMapping, emulatorHostOf, gcpSettings, gcsMapping, ownerLabelKey, ownerLabelValue, ownerTagsFromLabels, rowKeyFor } from '@k8or/provider-gcp';
import { bucket, gcpProviderConfig, ownerTagsOf, table } from './support.ts';

const owner = ownerTagsOf('team-a', 'photos', 'Bucket');
const settings = { defaultLocation: 'us-central1', storageClass: 'STANDARD' };

describe('Bucket spec -> Cloud Storage settings', () => {
  it('maps one portable lifecycle rule to one GCS rule per action, scoped by prefix; a disabled rule to none', () => {
    assert.deepEqual(
      gcsMapping.toGcsLifecycleRules({
        id: 'logs',
        prefix: 'logs/',
        expirationDays: 365,
        noncurrentVersionExpirationDays: 30,
        abortIncompleteUploadDays: 7,
        transitions: [{ days: 30, tier: 'InfrequentAccess' }, { days: 90, tier: 'Archive' }],
      }),
      [
        { action: { type: 'Delete' }, condition: { age: 365, isLive: true, matchesPrefix: ['logs/'] } },
        { action: { type: 'SetStorageClass', storageClass: 'NEARLINE' }, condition: { age: 30, matchesPrefix: ['logs/'] } },
        { action: { type: 'SetStorageClass', storageClass: 'ARCHIVE' }, condition: { age: 90, matchesPrefix: ['logs/'] } },
        { action: { type: 'Delete' }, condition: { daysSinceNoncurrentTime: 30, isLive: false, matchesPrefix: ['logs/'] } },
        { action: { type: 'AbortIncompleteMultipartUpload' }, condition: { age: 7, matchesPrefix: ['logs/'] } },
      ],
    );
    assert.deepEqual(gcsMapping.toGcsLifecycleRules({ id: 'off', enabled: false, expirationDays: 1 }), []);
  });

  it('compares lifecycle rules as a set: order and key order make no difference', () => {
    const a = gcsMapping.canonicalRules([
      { action: { type: 'Delete' }, condition: { age: 1 } },
      { action: { type: 'SetStorageClass', storageClass: 'NEARLINE' }, condition: { matchesPrefix: ['x/'], age: 30 } },
    ]);
    const b = gcsMapping.canonicalRules([
      { condition: { age: 30, matchesPrefix: ['x/'] }, action: { storageClass: 'NEARLINE', type: 'SetStorageClass' } } as never,
      { action: { type: 'Delete' }, condition: { age: 1 } },
    ]);
    assert.deepEqual(a, b);
  });

  it('puts the bucket in spec.location, else the ProviderConfig default, in the upper case GCS reports', () => {
    assert.equal(gcsMapping.bucketLocation(bucket('b-one'), settings), 'US-CENTRAL1');
    assert.equal(gcsMapping.bucketLocation(bucket('b-one', { location: 'eu' }), settings), 'EU');
  });

  it('enforces public access prevention and uniform access unless publicAccess is Allowed; CMEK only when asked', () => {
    assert.deepEqual(gcsMapping.iamConfigurationFor(bucket('b-one')), { uniformBucketLevelAccess: true, publicAccessPrevention: 'enforced' });
    assert.deepEqual(gcsMapping.iamConfigurationFor(bucket('b-one', { publicAccess: 'Allowed' })), { uniformBucketLevelAccess: true, publicAccessPrevention: 'inherited' });
    assert.equal(gcsMapping.kmsKeyFor(bucket('b-one')), undefined);
    assert.equal(gcsMapping.kmsKeyFor(bucket('b-one', { encryption: { type: 'CustomerManaged', keyId: 'projects/p/locations/l/keyRings/r/cryptoKeys/k' } })), 'projects/p/locations/l/keyRings/r/cryptoKeys/k');
  });

  it('diffs every managed setting by field, compares values not text, and keeps the location apart as immutable', () => {
    const desired = gcsMapping.desiredBucket(bucket('photos', { versioning: true, labels: { team: 'a' } }), settings, owner);
    assert.deepEqual(gcsMapping.diffBucket(desired, structuredClone(desired), owner), { diff: [], immutableDiff: [] });
    const actual: gcsMapping.DesiredBucket = {
      ...desired,
      location: 'EU',
      versioning: false,
      iamConfiguration: { publicAccessPrevention: 'inherited', uniformBucketLevelAccess: true },
      storageClass: 'NEARLINE',
      labels: { ...desired.labels, team: 'b', extra: 'x', 'goog-managed': 'yes' },
    };
    const { diff, immutableDiff } = gcsMapping.diffBucket(desired, actual, owner);
    assert.deepEqual(diff.map((d) => d.field), ['spec.versioning', 'spec.publicAccess', 'storageClass', 'spec.labels.extra', 'spec.labels.team']);
    assert.deepEqual(immutableDiff, [{ field: 'spec.location', desired: 'US-CENTRAL1', actual: 'EU' }]);
  });

  it('patches only what drifted, removing labels with null', () => {
    const desired = gcsMapping.desiredBucket(bucket('photos', { versioning: true, labels: { team: 'a' } }), settings, owner);
    const actual = { ...desired, versioning: false, labels: { ...desired.labels, extra: 'x' } };
    const { diff } = gcsMapping.diffBucket(desired, actual, owner);
    const patch = gcsMapping.patchBody(desired, actual, diff);
    assert.deepEqual(Object.keys(patch).sort(), ['labels', 'versioning']);
    assert.equal((patch['labels'] as Record<string, unknown>)['extra'], null);
  });

  it('reads GCS lifecycle rules back as portable rules (the inverse of the mapping), and none when a rule has no portable form', () => {
    const spec = [
      { id: 'logs', prefix: 'logs/', expirationDays: 30, transitions: [{ days: 7, tier: 'InfrequentAccess' as const }, { days: 90, tier: 'Archive' as const }], abortIncompleteUploadDays: 2 },
      { id: 'old-versions', noncurrentVersionExpirationDays: 14 },
    ];
    const rules = spec.flatMap(gcsMapping.toGcsLifecycleRules);
    const portable = gcsMapping.toPortableLifecycle(rules);
    assert.deepEqual(portable, [
      { id: 'rule-1', prefix: 'logs/', expirationDays: 30, abortIncompleteUploadDays: 2, transitions: [{ days: 90, tier: 'Archive' }, { days: 7, tier: 'InfrequentAccess' }] },
      { id: 'rule-2', noncurrentVersionExpirationDays: 14 },
    ]);
    assert.deepEqual(gcsMapping.canonicalRules((portable ?? []).flatMap(gcsMapping.toGcsLifecycleRules)), gcsMapping.canonicalRules(rules), 'the portable rules map to the same GCS rules');
    assert.equal(gcsMapping.toPortableLifecycle([{ action: { type: 'SetStorageClass', storageClass: 'COLDLINE' }, condition: { age: 30 } }]), undefined);
    assert.equal(gcsMapping.toPortableLifecycle([{ action: { type: 'Delete' }, condition: { age: 30 } }]), undefined, 'Delete of every version has no portable form');
    assert.deepEqual(gcsMapping.toPortableLifecycle([]), []);
  });

  it('reports drift in the portable shape: public access, encryption and lifecycle as the spec would hold them; uniform access as its own setting', () => {
    const desired = gcsMapping.desiredBucket(bucket('photos'), settings, owner);
    const actual: gcsMapping.DesiredBucket = {
      ...desired,
      iamConfiguration: { publicAccessPrevention: 'inherited', uniformBucketLevelAccess: false },
      kmsKey: 'projects/p/locations/l/keyRings/r/cryptoKeys/k',
      lifecycle: [{ action: { type: 'Delete' }, condition: { age: 5, isLive: true } }],
      portableLifecycle: [{ id: 'rule-1', expirationDays: 5 }],
    };
    const { diff } = gcsMapping.diffBucket(desired, actual, owner);
    assert.deepEqual(diff, [
      { field: 'spec.publicAccess', desired: 'Blocked', actual: 'Allowed' },
      { field: 'uniformBucketLevelAccess', desired: true, actual: false },
      { field: 'spec.encryption', desired: { type: 'ProviderManaged' }, actual: { type: 'CustomerManaged', keyId: 'projects/p/locations/l/keyRings/r/cryptoKeys/k' } },
      { field: 'spec.lifecycle', desired: [], actual: [{ id: 'rule-1', expirationDays: 5 }] },
    ]);
    assert.deepEqual(Object.keys(gcsMapping.patchBody(desired, actual, diff.filter((d) => d.field === 'uniformBucketLevelAccess'))), ['iamConfiguration']);
  });

  it('gives atProvider the self link, location, gs:// URL and creation time', () => {
    assert.deepEqual(gcsMapping.bucketAtProvider('photos', { selfLink: 'https://www.googleapis.com/storage/v1/b/photos', location: 'EU', timeCreated: '2026-11-23T01:00:00.000Z' }), {
      id: 'https://www.googleapis.com/storage/v1/b/photos',
      location: 'EU',
      url: 'gs://photos',
      createdTime: '2026-11-23T01:00:00.000Z',
    });
  });
});

describe('owner tags as GCS labels', () => {
  it('writes k8or.io/* keys as k8or-* labels, and values GCS cannot hold as a sanitised form with a hash', () => {
    assert.equal(ownerLabelKey('k8or.io/managed-by'), 'k8or-managed-by');
    assert.equal(ownerLabelValue('team-a'), 'team-a');
    assert.match(ownerLabelValue('Bucket'), /^bucket-[0-9a-f]{8}$/);
    assert.notEqual(ownerLabelValue('Bucket'), ownerLabelValue('bucket-'));
    assert.ok(ownerLabelValue('x'.repeat(200)).length <= 63);
  });

  it('reads the owner tags back: encoded values stand for the expected ones, others are reported as found, absent ones are absent', () => {
    const labels = gcsMapping.desiredBucket(bucket('photos'), settings, owner).labels;
    assert.deepEqual(ownerTagsFromLabels(labels, owner), owner);
    assert.deepEqual(ownerTagsFromLabels({ ...labels, 'k8or-cluster': 'another-cluster' }, owner)['k8or.io/cluster'], 'another-cluster');
    assert.deepEqual(ownerTagsFromLabels({ team: 'a' }, owner), {});
    // k8or import expects no owner tags, and must still see every one k8or wrote (in their label form).
    const found = ownerTagsFromLabels(labels, {});
    assert.deepEqual(Object.keys(found).sort(), Object.keys(owner).sort());
    assert.equal(found['k8or.io/managed-by'], 'k8or');
    assert.equal(found['k8or.io/namespace'], 'team-a');
  });
});

describe('Table spec -> Bigtable settings', () => {
  it('builds the row key as partitionKey[#sortKey]', () => {
    assert.equal(rowKeyFor(table('t'), { pk: 'a' }).toString(), 'a');
    assert.equal(rowKeyFor(table('t', { sortKey: { name: 'at', type: 'number' } }), { pk: 'a', at: 12 }).toString(), 'a#12');
    assert.deepEqual([...rowKeyFor(table('t', { partitionKey: { name: 'pk', type: 'binary' } }), { pk: new Uint8Array([1, 2]) })], [1, 2]);
    assert.throws(() => rowKeyFor(table('t'), {}), /no value for the key attribute "pk"/);
  });

  it('declares the default family plus the annotation\'s, each with one version per cell (and 1 s expiry with ttlAttribute)', () => {
    assert.deepEqual(bigtableMapping.desiredFamilies(table('t', {}, { 'gcp.k8or.io/column-families': 'meta, stats,meta' })), {
      d: { maxNumVersions: 1 },
      meta: { maxNumVersions: 1 },
      stats: { maxNumVersions: 1 },
    });
    assert.deepEqual(bigtableMapping.gcRuleFor(table('t', { ttlAttribute: 'exp' })), { union: [{ maxNumVersions: 1 }, { maxAgeSeconds: 1 }] });
  });

  it('reads GC rules from the admin API\'s protobuf shape, in a canonical order', () => {
    assert.deepEqual(
      bigtableMapping.gcRuleOf({ union: { rules: [{ maxAge: { seconds: '1', nanos: 0 }, rule: 'maxAge' } as never, { maxNumVersions: 1, rule: 'maxNumVersions' } as never] }, rule: 'union' } as never),
      { union: [{ maxAgeSeconds: 1 }, { maxNumVersions: 1 }] },
    );
    assert.deepEqual(bigtableMapping.gcRuleOf(bigtableMapping.protoGcRule({ maxAgeSeconds: 1.5 })), { maxAgeSeconds: 1.5 });
  });

  it('diffs missing families, changed rules and deletion protection; never a family it does not declare', () => {
    const resource = table('t', { deletionProtection: true }, { 'gcp.k8or.io/column-families': 'meta' });
    assert.deepEqual(
      bigtableMapping.diffTable(resource, { families: { d: { maxNumVersions: 2 }, theirs: { maxNumVersions: 9 } }, deletionProtection: false }).map((d) => d.field),
      ['columnFamilies.d.gcRule', 'columnFamilies.meta', 'spec.deletionProtection'],
    );
  });
});

describe('ProviderConfig -> client settings', () => {
  it('takes the project, default location, instance, endpoints and storage class', () => {
    const config = gcpProviderConfig({ bucket: 'http://127.0.0.1:4443', table: 'http://127.0.0.1:8086' }, { region: 'europe-west1', settings: { storageClass: 'NEARLINE' } });
    assert.deepEqual(gcpSettings(config, undefined, 'Table'), {
      project: 'k8or-test-project',
      defaultLocation: 'europe-west1',
      bigtableInstance: 'k8or-instance',
      storageClass: 'NEARLINE',
      storageEndpoint: 'http://127.0.0.1:4443',
      bigtableEmulatorHost: '127.0.0.1:8086',
      serviceAccountKey: undefined,
    });
    assert.equal(emulatorHostOf('localhost:8086'), 'localhost:8086');
  });

  it('needs a Bigtable instance for Tables, and a parseable service-account key from a Secret', () => {
    assert.throws(() => gcpSettings(gcpProviderConfig({}, { bigtableInstance: undefined }), undefined, 'Table'), /spec.bigtableInstance is required for Tables/);
    const fromSecret = gcpProviderConfig({}, { credentials: { source: 'Secret', secretRef: { namespace: 'ns', name: 'gcp' } } });
    assert.throws(() => gcpSettings(fromSecret, { 'credentials.json': 'not json' }, 'Bucket'), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.equal(error.message, 'Secret ns/gcp: credentials.json is not JSON (expected a service-account key file)');
      return true;
    });
    const key = gcpSettings(fromSecret, { 'credentials.json': JSON.stringify({ client_email: 'a@b', private_key: 'secret-key' }) }, 'Bucket').serviceAccountKey;
    assert.equal(key?.client_email, 'a@b');
    assert.equal(gcpSettings(gcpProviderConfig({}, { credentials: { source: 'InjectedIdentity' } }), undefined, 'Bucket').serviceAccountKey, undefined);
  });
});
