// Every cloud write is on record: the reconcile algorithm over the in-memory provider writes, for
// each create, update, drift repair, approved repair, delete and release, an Event naming the fields
// with their old and new values, and a structured log line with the same changes, whole. No
// credential value reaches either.
import { strict as assert } from 'node:assert';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { Annotations, OwnerTags, type Bucket, type ProviderConfig } from '@k8or/api';
import { CLOUD_WRITE_MESSAGE, ManagedReconciler, Reasons, createLogger, type CloudWriteRecord } from '@k8or/core';
import { InMemoryCloud, InMemoryEvents, InMemoryLookups, InMemoryObjects, inMemoryProviderPlugin, noOutputs } from '@k8or/core/testing';

const NS = 'media';
const SECRET = 'in-memory-secret-access-key-0123456789';

function world() {
  const cloud = new InMemoryCloud();
  const objects = new InMemoryObjects();
  const lookups = new InMemoryLookups();
  const events = new InMemoryEvents();
  const config: ProviderConfig = {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'media-account' },
    spec: { provider: 'aws', region: 'mem-1', credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'creds' } } },
  };
  lookups.providerConfigs.set('media-account', config);
  lookups.secrets.set('k8or-system/creds', { accessKeyId: 'AKIAWRITERECORD', secretAccessKey: SECRET });
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination });
  const reconciler = new ManagedReconciler(
    'Bucket',
    { kube: objects, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events, outputs: noOutputs },
    { clusterId: 'c1', pollIntervalMs: 2_000, logger },
  );
  const reconcile = async (name: string) => await reconciler.reconcile({ namespace: NS, name });
  const writes = (): (CloudWriteRecord & { msg: string })[] =>
    lines.map((line) => JSON.parse(line) as CloudWriteRecord & { msg: string }).filter((record) => record.msg === CLOUD_WRITE_MESSAGE);
  const eventsOf = (name: string, reason: string) => events.about(name).filter((e) => e.reason === reason);
  const put = (name: string, spec: Bucket['spec']) =>
    objects.put({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: NS }, spec: { providerConfigRef: { name: 'media-account' }, ...spec } } as Bucket);
  return { cloud, objects, events, lines, reconcile, writes, eventsOf, put };
}

describe('every cloud write is on record', () => {
  it('a create names every setting written, from unset, in an Event and a log line with the object, the target and the operation', async () => {
    const w = world();
    w.put('photos', { name: 'media-photos', versioning: true, labels: { team: 'media' }, deletionPolicy: 'Delete' });
    await w.reconcile('photos');

    const [event] = w.eventsOf('photos', Reasons.CreatedExternalResource);
    assert.ok(event);
    assert.match(event.message, /^Created Bucket "media-photos" in aws: /);
    assert.match(event.message, /spec\.versioning: unset -> true/);
    assert.match(event.message, /spec\.labels: unset -> \{"team":"media"\}/);
    assert.match(event.message, /ownerTags\.k8or\.io\/managed-by: unset -> "k8or"/);
    assert.doesNotMatch(event.message, /deletionPolicy|providerConfigRef/, "k8or's own instructions are not written to the cloud");

    const [record] = w.writes();
    assert.ok(record);
    assert.equal(record.object, `${NS}/photos`);
    assert.equal(record.kind, 'Bucket');
    assert.equal(record.provider, 'aws');
    assert.equal(record.providerConfig, 'media-account');
    assert.equal(record.externalName, 'media-photos');
    assert.equal(record.operation, 'create');
    assert.equal(record.reason, Reasons.CreatedExternalResource);
    assert.deepEqual(record.changes.slice(0, 2), [
      { field: 'spec.labels', to: { team: 'media' } },
      { field: 'spec.versioning', to: true },
    ]);
    assert.ok(record.changes.some((c) => c.field === `ownerTags.${OwnerTags.managedBy}` && c.to === 'k8or'));
  });

  it('a spec change and a drift repair each name the fields written with old and new values', async () => {
    const w = world();
    w.put('photos', { name: 'media-photos', labels: { team: 'media' } });
    await w.reconcile('photos');
    const cloudBucket = w.cloud.buckets.get('media-photos');
    assert.ok(cloudBucket);

    // The user asks for another label: an update.
    w.objects.editSpec('Bucket', NS, 'photos', (spec) => {
      spec.labels = { team: 'media', env: 'prod' };
    });
    await w.reconcile('photos');
    const [updated] = w.eventsOf('photos', Reasons.UpdatedExternalResource);
    assert.equal(updated?.message, 'Updated Bucket "media-photos": spec.labels: {"team":"media"} -> {"env":"prod","team":"media"}.');

    // Someone edits the labels in the cloud: repaired (Repair is the default), as a Warning.
    cloudBucket.labels = { team: 'ops' };
    await w.reconcile('photos');
    const [repaired] = w.eventsOf('photos', Reasons.RepairedDrift);
    assert.equal(repaired?.type, 'Warning');
    assert.equal(repaired?.message, 'Repaired drift in Bucket "media-photos": spec.labels: {"team":"ops"} -> {"env":"prod","team":"media"}.');

    const records = w.writes();
    assert.deepEqual(
      records.map((r) => [r.operation, r.reason]),
      [
        ['create', Reasons.CreatedExternalResource],
        ['update', Reasons.UpdatedExternalResource],
        ['update', Reasons.RepairedDrift],
      ],
    );
    assert.deepEqual(records[2]?.changes, [{ field: 'spec.labels', from: { team: 'ops' }, to: { env: 'prod', team: 'media' } }]);
  });

  it('an approved repair of held drift is on record under its own reason', async () => {
    const w = world();
    w.put('photos', { name: 'media-photos', labels: { team: 'media' }, driftPolicy: { default: 'Hold' } });
    await w.reconcile('photos');
    const cloudBucket = w.cloud.buckets.get('media-photos');
    assert.ok(cloudBucket);
    cloudBucket.labels = { team: 'ops' };
    await w.reconcile('photos');
    assert.deepEqual(w.writes().map((r) => r.operation), ['create'], 'held: nothing written, nothing on record');
    const digest = w.objects.peek('Bucket', NS, 'photos')?.status?.heldDriftDigest;
    assert.ok(digest);
    w.objects.editMetadata('Bucket', NS, 'photos', (metadata) => {
      metadata.annotations = { ...metadata.annotations, [Annotations.approveDrift]: digest };
    });
    await w.reconcile('photos');
    const [approved] = w.eventsOf('photos', Reasons.RepairedApprovedDrift);
    assert.equal(approved?.message, 'Repaired approved drift in Bucket "media-photos": spec.labels: {"team":"ops"} -> {"team":"media"}.');
    const last = w.writes().at(-1);
    assert.equal(last?.operation, 'update');
    assert.equal(last?.reason, Reasons.RepairedApprovedDrift);
    assert.deepEqual(last?.changes, [{ field: 'spec.labels', from: { team: 'ops' }, to: { team: 'media' } }]);
    assert.equal(w.eventsOf('photos', Reasons.UpdatedExternalResource).length, 0, 'one write, one record');
  });

  it('a delete and a release of the owner tags (Retain) are on record', async () => {
    const w = world();
    w.put('gone', { name: 'media-gone', deletionPolicy: 'Delete' });
    w.put('kept', { name: 'media-kept', deletionPolicy: 'Retain' });
    await w.reconcile('gone');
    await w.reconcile('kept');
    w.objects.markDeleted('Bucket', NS, 'gone');
    w.objects.markDeleted('Bucket', NS, 'kept');
    await w.reconcile('gone');
    await w.reconcile('kept');

    assert.equal(w.eventsOf('gone', Reasons.DeletedExternalResource)[0]?.message, 'Deleted Bucket "media-gone" in aws.');
    const [retained] = w.eventsOf('kept', Reasons.RetainedExternalResource);
    assert.match(retained?.message ?? '', /removed this object's owner tags so it can be adopted: ownerTags\.k8or\.io\/[a-z-]+: "[^"]*" -> unset/);
    const byObject = new Map(w.writes().filter((r) => r.operation !== 'create').map((r) => [r.object, r]));
    assert.equal(byObject.get(`${NS}/gone`)?.operation, 'delete');
    assert.deepEqual(byObject.get(`${NS}/gone`)?.changes, []);
    const release = byObject.get(`${NS}/kept`);
    assert.equal(release?.operation, 'release');
    assert.ok(release?.changes.some((c) => c.field === `ownerTags.${OwnerTags.managedBy}` && c.from === 'k8or' && !('to' in c)));
    assert.equal(Object.keys(w.cloud.buckets.get('media-kept')?.tags ?? {}).some((k) => k.startsWith('k8or.io/')), false, 'the tags are gone indeed');
  });

  it('never writes a credential value or a signed query string into an Event or a log line', async () => {
    const w = world();
    // A user pasted a secret key and a signed URL into labels: the cloud gets them, the record does not.
    w.put('leaky', { name: 'media-leaky', labels: { note: `key ${SECRET}`, link: 'https://acct.blob.core.windows.net/c?sv=2024&sig=c2VjcmV0' } });
    await w.reconcile('leaky');
    const messages = w.events.about('leaky').map((e) => e.message);
    assert.ok(messages.some((m) => m.includes('***')), messages.join('\n'));
    for (const text of [...messages, ...w.lines]) {
      assert.ok(!text.includes(SECRET), `a credential value: ${text}`);
      assert.doesNotMatch(text, /sig=|sv=2024/, `a signed query: ${text}`);
    }
    const [record] = w.writes();
    assert.deepEqual(record?.changes.find((c) => c.field === 'spec.labels')?.to, { note: 'key ***', link: 'https://acct.blob.core.windows.net/c' });
  });
});
