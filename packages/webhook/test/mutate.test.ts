import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultDynamoDbTableName, defaultS3BucketName } from '@k8or/provider-aws';
import { startWebhookServer, type WebhookServer } from '@k8or/webhook';
import { HttpsClient } from './helpers/https-client.ts';
import { applyPatch, patchOf, reviewOf, send } from './helpers/reviews.ts';
import { TEST_CLUSTER_ID, aws, bucket, table, testWorld } from './helpers/fixtures.ts';
import type { ProviderPlugin } from '@k8or/core';

type Obj = Record<string, unknown> & { spec: Record<string, unknown>; metadata: Record<string, unknown> };

describe('mutating webhook: defaults filled at kubectl apply', () => {
  let server: WebhookServer;
  let client: HttpsClient;

  before(async () => {
    server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logLevel: 'silent', processMetrics: false });
    client = new HttpsClient(server.url, server.caPem);
  });
  after(async () => {
    client.close();
    await server.close();
  });

  /** Sends CREATE to /mutate, applies the patch, and checks a second pass over the result adds nothing. */
  async function defaulted(object: Record<string, unknown>): Promise<{ result: Obj; warnings: string[] }> {
    const response = await send(client, 'mutate', reviewOf('CREATE', object));
    assert.equal(response.allowed, true);
    const result = applyPatch(object, response) as Obj;
    const again = await send(client, 'mutate', reviewOf('CREATE', result));
    assert.deepEqual(patchOf(again), [], 'a second pass over the defaulted object adds nothing');
    return { result, warnings: response.warnings ?? [] };
  }

  it('gives a bare Bucket the cluster default ProviderConfig, a deterministic external name and the operator deletion policy', async () => {
    const { result } = await defaulted(bucket('apps', 'photos'));
    assert.deepEqual(result.spec.providerConfigRef, { name: 'default' });
    assert.equal(result.spec.name, defaultS3BucketName({ clusterId: TEST_CLUSTER_ID, namespace: 'apps', name: 'photos' }));
    assert.equal(result.spec.deletionPolicy, 'Delete');
    const second = await defaulted(bucket('apps', 'photos'));
    assert.equal(second.result.spec.name, result.spec.name, 'the same object always gets the same name');
  });

  it("uses the namespace's k8or.io/provider-config and k8or.io/deletion-policy annotations", async () => {
    const { result } = await defaulted(bucket('team-a', 'reports'));
    assert.deepEqual(result.spec.providerConfigRef, { name: 'staging' });
    assert.equal(result.spec.deletionPolicy, 'Retain');
    assert.equal(result.spec.name, defaultS3BucketName({ clusterId: TEST_CLUSTER_ID, namespace: 'team-a', name: 'reports' }));
  });

  it("prefers the resource's own deletion-policy annotation, and keeps what the user set", async () => {
    const own = await defaulted(bucket('team-a', 'scratch', {}, { annotations: { 'k8or.io/deletion-policy': 'Delete' } }));
    assert.equal(own.result.spec.deletionPolicy, 'Delete');
    const explicit = bucket('apps', 'kept', { name: 'my-kept-bucket', deletionPolicy: 'Retain', providerConfigRef: { name: 'staging' } });
    const response = await send(client, 'mutate', reviewOf('CREATE', explicit));
    assert.deepEqual(patchOf(response), [], 'nothing to add when everything is set');
  });

  it('adds the missing spec parent first, then its fields, in one patch', async () => {
    const object = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'nospec', namespace: 'apps' } };
    const response = await send(client, 'mutate', reviewOf('CREATE', object));
    const ops = patchOf(response);
    assert.deepEqual(ops[0], { op: 'add', path: '/spec', value: { providerConfigRef: { name: 'default' } } }, 'the missing parent is added first');
    assert.ok(ops.every((op) => op.op === 'add'));
    assert.deepEqual((applyPatch(object, response) as unknown as Obj).spec, { providerConfigRef: { name: 'default' }, name: defaultS3BucketName({ clusterId: TEST_CLUSTER_ID, namespace: 'apps', name: 'nospec' }), deletionPolicy: 'Delete' });
  });

  it('names a Table by the rules of its cloud', async () => {
    const { result } = await defaulted(table('apps', 'orders'));
    assert.equal(result.spec.name, defaultDynamoDbTableName({ clusterId: TEST_CLUSTER_ID, namespace: 'apps', name: 'orders' }));
    assert.match(result.spec.name ?? '', /^apps\.orders-[0-9a-f]{8}$/, 'readable, with a hash so two long names cut alike stay apart');
  });

  it('leaves the name of a kind without tags to the engine: its default carries the uid token, and admission has no uid yet', async () => {
    // A provider whose tables carry no tags (as Azure's and Bigtable's): its table rule folds the object's uid token in.
    const tagless: ProviderPlugin = {
      ...aws,
      provider: 'gcp',
      naming: { ...aws.naming, Table: { validate: () => [], defaultName: ({ namespace, name, uid }) => `${namespace}-${name}-${uid ?? 'none'}`, perObjectName: true } },
    };
    const world = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld({ providers: [aws, tagless] }), logLevel: 'silent', processMetrics: false });
    const other = new HttpsClient(world.url, world.caPem);
    try {
      const defaultedThere = async (object: Record<string, unknown>): Promise<Obj> => applyPatch(object, await send(other, 'mutate', reviewOf('CREATE', object))) as Obj;
      const tableThere = await defaultedThere(table('apps', 'orders', { providerConfigRef: { name: 'google' } }));
      assert.equal(tableThere.spec.name, undefined);
      assert.deepEqual(tableThere.spec.providerConfigRef, { name: 'google' });
      const bucketThere = await defaultedThere(bucket('apps', 'photos', { providerConfigRef: { name: 'google' } }));
      assert.equal(bucketThere.spec.name, defaultS3BucketName({ clusterId: TEST_CLUSTER_ID, namespace: 'apps', name: 'photos' }), 'a kind whose rule needs no uid is still named at admission');
    } finally {
      other.close();
      await world.close();
    }
  });

  it('takes the external name from the k8or.io/external-name annotation (adopting an existing resource)', async () => {
    const { result } = await defaulted(bucket('apps', 'legacy', {}, { annotations: { 'k8or.io/external-name': 'corp-legacy-assets' } }));
    assert.equal(result.spec.name, 'corp-legacy-assets');
  });

  it('leaves the external name to the engine when the ProviderConfig is unknown or the object has no name yet', async () => {
    const unknown = await defaulted(bucket('team-b', 'orphan'));
    assert.deepEqual(unknown.result.spec.providerConfigRef, { name: 'missing' });
    assert.equal(unknown.result.spec.name, undefined);
    const generated = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { generateName: 'tmp-', namespace: 'apps' }, spec: {} };
    const response = await send(client, 'mutate', reviewOf('CREATE', generated));
    assert.equal((applyPatch(generated, response) as Obj).spec.name, undefined);
  });

  it('warns when no ProviderConfig applies at all', async () => {
    const lonely = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld({ providerConfigs: [] }), logLevel: 'silent', processMetrics: false });
    const other = new HttpsClient(lonely.url, lonely.caPem);
    try {
      const response = await send(other, 'mutate', reviewOf('CREATE', bucket('apps', 'nowhere')));
      assert.equal(response.allowed, true);
      assert.match(response.warnings?.join('\n') ?? '', /no ProviderConfig for Bucket apps\/nowhere/);
      assert.deepEqual(applyPatch(bucket('apps', 'nowhere'), response), bucket('apps', 'nowhere', { deletionPolicy: 'Delete' }));
    } finally {
      other.close();
      await lonely.close();
    }
  });

  it('on UPDATE fills fields the new object dropped from the stored object, not from current defaults', async () => {
    const stored = bucket('team-a', 'reports', { providerConfigRef: { name: 'default' }, name: 'reports-original', deletionPolicy: 'Delete' });
    const replaced = bucket('team-a', 'reports', { versioning: true });
    const response = await send(client, 'mutate', reviewOf('UPDATE', replaced, stored));
    const result = applyPatch(replaced, response) as Obj;
    assert.deepEqual(result.spec, { versioning: true, providerConfigRef: { name: 'default' }, name: 'reports-original', deletionPolicy: 'Delete' });
  });

  it('does not touch DELETE, ProviderConfigs, or objects being deleted', async () => {
    for (const review of [
      reviewOf('DELETE', null, bucket('apps', 'gone')),
      reviewOf('CREATE', { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'x' }, spec: { provider: 'aws', region: 'us-east-1' } }),
      reviewOf('UPDATE', bucket('apps', 'leaving', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }), bucket('apps', 'leaving')),
    ]) {
      const response = await send(client, 'mutate', review);
      assert.equal(response.allowed, true);
      assert.equal(response.patch, undefined);
    }
  });

  it('answers a dry run exactly like a real request', async () => {
    const real = await send(client, 'mutate', reviewOf('CREATE', bucket('apps', 'dry')));
    const dry = await send(client, 'mutate', reviewOf('CREATE', bucket('apps', 'dry'), null, { dryRun: true }));
    assert.deepEqual(patchOf(dry), patchOf(real));
  });
});
