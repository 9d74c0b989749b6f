// Drift policy end to end for Tables on every cloud, with the operator's engine, the real providers
// and SDKs against the local backends: DynamoDB Local (behind the proxy that adds tags and
// point-in-time recovery), the Bigtable emulator, Azurite. A setting is changed in the cloud
// behind k8or's back, as someone with the SDK would, and `k8or reconcile` looks at once:
// - Repair writes it back, and the Event and the operator's log line name the field, old and new;
// - Report shows it and never writes;
// - Hold waits for `k8or approve`; an approval of another difference is not applied, and an
//   approval of the difference held is.
// A protection raised in the cloud (deletion protection) is never lowered, whatever the mode.
//
// What each table kind can drift on (what its provider compares):
// - DynamoDB: billing mode and capacities, TTL, point-in-time recovery, deletion protection, tags.
//   Here: TTL (Repair, Hold), billing and a tag (Report), deletion protection (raised).
// - Bigtable: deletion protection, and each declared column family's GC rule (named
//   `columnFamilies.<id>.gcRule`: not a spec path, so only the policy's default governs it). Here:
//   deletion protection, turned off in the cloud where the spec asks for it (Repair, Report, Hold),
//   and raised where the spec does not; a GC rule changed (Report, then Repair). With one boolean
//   as its held field, the approval that is not applied is one of another digest.
// - Azure Table Storage: nothing. A table has a name and no settings, metadata or tags, so its
//   provider compares nothing: a change made through the SDK is never drift.
//
// DynamoDB Local needs Java (skipped where it cannot run), the Bigtable emulator the Google Cloud
// SDK's cbtemulator (skipped where it is not installed).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTagsOfResourceCommand,
  TagResourceCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { TableClient } from '@azure/data-tables';
import { Bigtable } from '@google-cloud/bigtable';
import { Annotations, type DriftMode, type Table } from '@k8or/api';
import {
  findCbtemulator,
  startAzurite,
  startBigtableEmulator,
  startDynamoDbLocal,
  startDynamoDbProxy,
  type Azurite,
  type BigtableEmulator,
  type DynamoDbLocal,
  type DynamoDbProxy,
} from '@k8or/local-clouds';
import { destroyDynamoDbClients } from '@k8or/provider-aws';
import { destroyBigtableClients } from '@k8or/provider-gcp';
import { DriftWorld, WAIT_MS, synced } from './drift-world.ts';
import { waitFor } from '@k8or/core/testing';

const AWS_CREDENTIALS = { accessKeyId: 'AKIADRIFTTABLESEXAMPLE', secretAccessKey: 'drift-tables-secret-access-key' };
const PROJECT = 'drift-tables-project';
const INSTANCE = 'drift-tables-instance';
const KEY = { partitionKey: { name: 'pk', type: 'string' } } as const;

const java = process.env['JAVA_HOME'] ? join(process.env['JAVA_HOME'], 'bin', 'java') : 'java';
const javaSkip = spawnSync(java, ['-version']).error ? `DynamoDB Local needs Java 17 or later, and ${java} cannot be run` : false;
const cbtemulator = findCbtemulator();
const bigtableSkip = 'missing' in cbtemulator ? `${cbtemulator.missing} (these tests need it)` : false;

/** Deletion protection in the cloud, read and raised as someone behind k8or's back would. */
interface CloudProtection {
  get(table: string): Promise<boolean>;
  raise(table: string): Promise<void>;
}

describe('drift policy for Tables on every cloud: Repair writes back, Report never writes, Hold waits for an approval of exactly the difference', () => {
  const world = new DriftWorld();
  const tableOf = async (name: string) => await world.get<Table>('Table', name);

  before(async () => await world.start('drift-tables-cluster'));
  after(async () => await world.stop());

  /** A protection raised in the cloud where the spec does not ask for one: kept under Repair, Report and Hold alike, and nothing to approve. */
  async function keepsRaisedProtection(cloud: string, providerConfig: string, protection: CloudProtection): Promise<void> {
    const object = `${cloud}-protected`;
    const externalName = `k8or-drift-${cloud}-protected`;
    await world.create<Table>('Table', object, providerConfig, { name: externalName, ...KEY, deletionProtection: false });
    const writesBefore = world.writesOf(object).length;
    await protection.raise(externalName);
    for (const mode of ['Repair', 'Report', 'Hold'] satisfies DriftMode[]) {
      // A new drift policy alone asks for nothing: the pass after it is still a resync.
      await world.patch('Table', object, { spec: { driftPolicy: { default: mode } } });
      await world.until<Table>('Table', object, `the ${mode} policy handled`, (t) => t.spec.driftPolicy?.default === mode);
      const checked = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(checked)?.reason, 'ProtectionHeld', `${mode}: ${synced(checked)?.message}`);
      assert.deepEqual(checked.status?.drift?.map((d) => [d.field, d.mode]), [['spec.deletionProtection', 'Protected']], mode);
      assert.equal(checked.status?.heldDriftDigest, undefined, `${mode}: a protection is no drift to approve`);
      assert.equal(await protection.get(externalName), true, `${mode}: the protection raised in the cloud stays`);
    }
    const approved = await world.approve('Table', object);
    assert.equal(approved.code, 1, 'nothing to approve');
    assert.match(approved.stderr, /holds no drift for approval/);
    assert.equal(await protection.get(externalName), true);
    assert.equal(world.writesOf(object).length, writesBefore, 'nothing written');
  }

  describe('AWS (DynamoDB SDK against DynamoDB Local)', { skip: javaSkip }, () => {
    let local: DynamoDbLocal;
    let proxy: DynamoDbProxy;
    let dynamodb: DynamoDBClient;
    const ttlOf = async (TableName: string) => {
      const ttl = (await dynamodb.send(new DescribeTimeToLiveCommand({ TableName }))).TimeToLiveDescription;
      return ttl?.TimeToLiveStatus === 'ENABLED' ? ttl.AttributeName : undefined;
    };
    /** TTL on `attribute` only, as a console edit makes it: the attribute on now turned off first. */
    const moveTtl = async (TableName: string, attribute: string) => {
      const on = await ttlOf(TableName);
      if (on) await dynamodb.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: on, Enabled: false } }));
      await dynamodb.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } }));
    };
    const describeTable = async (TableName: string) => (await dynamodb.send(new DescribeTableCommand({ TableName }))).Table;
    const billingOf = async (TableName: string) => {
      const table = await describeTable(TableName);
      return [table?.BillingModeSummary?.BillingMode, table?.ProvisionedThroughput?.ReadCapacityUnits, table?.ProvisionedThroughput?.WriteCapacityUnits];
    };
    const userTagsOf = async (TableName: string) => {
      const arn = (await describeTable(TableName))?.TableArn;
      const tags = (await dynamodb.send(new ListTagsOfResourceCommand({ ResourceArn: arn }))).Tags ?? [];
      return Object.fromEntries(tags.filter((t) => !(t.Key ?? '').startsWith('k8or.io/')).map((t) => [t.Key ?? '', t.Value ?? '']));
    };

    before(async () => {
      local = await startDynamoDbLocal();
      proxy = await startDynamoDbProxy({ target: local.endpoint, credentials: { [AWS_CREDENTIALS.accessKeyId]: AWS_CREDENTIALS.secretAccessKey } });
      dynamodb = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: AWS_CREDENTIALS });
      await world.createSecret('aws-creds', AWS_CREDENTIALS);
      await world.createProviderConfig('local-aws', {
        provider: 'aws',
        region: 'us-east-1',
        endpoints: { table: proxy.endpoint },
        credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-creds' } },
      });
    });
    after(async () => {
      dynamodb?.destroy();
      destroyDynamoDbClients();
      await proxy?.stop();
      await local?.stop();
    });

    it('Repair: TTL turned off in DynamoDB is turned on again, on record', async () => {
      const object = 'aws-repair';
      const externalName = 'k8or-drift-aws-repair';
      await world.create<Table>('Table', object, 'local-aws', { name: externalName, ...KEY, ttlAttribute: 'expiresAt' });
      assert.equal(await ttlOf(externalName), 'expiresAt');

      await dynamodb.send(new UpdateTimeToLiveCommand({ TableName: externalName, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: false } }));
      await world.reconcileNow('Table', object);
      await waitFor(`${object}: TTL on again`, async () => ((await ttlOf(externalName)) === 'expiresAt' ? true : undefined), WAIT_MS);
      const event = await world.event(object, 'RepairedDrift');
      assert.equal(event.type, 'Warning');
      assert.equal(event.message, `Repaired drift in Table "${externalName}": spec.ttlAttribute: unset -> "expiresAt".`);
      const repair = world.writesOf(object).find((w) => w.reason === 'RepairedDrift');
      assert.ok(repair, 'a cloud-write log line for the repair');
      assert.equal(repair.operation, 'update');
      assert.equal(repair.providerConfig, 'local-aws');
      assert.deepEqual(repair.changes, [{ field: 'spec.ttlAttribute', to: 'expiresAt' }]);
      assert.equal(synced(await world.inSync('Table', object))?.reason, 'ReconcileSuccess');
    });

    it('Report and Hold: billing and a tag reported, TTL held until an approval of exactly its difference; the repair writes nothing reported', async () => {
      const object = 'aws-held';
      const externalName = 'k8or-drift-aws-held';
      await world.create<Table>('Table', object, 'local-aws', {
        name: externalName,
        ...KEY,
        billing: { mode: 'onDemand' },
        ttlAttribute: 'expiresAt',
        labels: { team: 'media' },
        driftPolicy: { default: 'Report', fields: [{ path: 'spec.ttlAttribute', mode: 'Hold' }] },
      });
      const writesBefore = world.writesOf(object).length;

      await moveTtl(externalName, 'purgeAt');
      await dynamodb.send(new UpdateTableCommand({ TableName: externalName, BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 } }));
      await dynamodb.send(new TagResourceCommand({ ResourceArn: (await describeTable(externalName))?.TableArn, Tags: [{ Key: 'env', Value: 'dev' }] }));
      const held = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(held)?.reason, 'DriftHeld', synced(held)?.message);
      assert.deepEqual(new Set(held.status?.drift?.map((d) => `${d.field}=${d.mode}`)), new Set(['spec.ttlAttribute=Hold', 'spec.billing.mode=Report', 'spec.labels.env=Report']));
      assert.equal(held.status?.driftCount, 3);
      const seen = held.status?.heldDriftDigest;
      assert.ok(seen);
      assert.equal(await ttlOf(externalName), 'purgeAt', 'Hold writes nothing');
      assert.deepEqual(await billingOf(externalName), ['PROVISIONED', 5, 5], 'Report writes nothing');
      assert.deepEqual(await userTagsOf(externalName), { team: 'media', env: 'dev' });

      // The user approves what they saw, but the cloud changed again meanwhile: not applied.
      await moveTtl(externalName, 'dropAt');
      await world.patch('Table', object, { metadata: { annotations: { [Annotations.approveDrift]: seen } } });
      const stale = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(stale)?.reason, 'DriftHeld');
      assert.ok(stale.status?.heldDriftDigest && stale.status.heldDriftDigest !== seen, 'the new difference has its own digest');
      assert.equal(await ttlOf(externalName), 'dropAt', 'an approval of another difference is not applied');
      assert.equal(world.writesOf(object).length, writesBefore, 'nothing written, nothing on record');

      const approved = await world.approve('Table', object);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, /spec\.ttlAttribute: the spec has "expiresAt", the cloud has "dropAt"/);
      assert.doesNotMatch(approved.stdout, /spec\.billing|spec\.labels/, 'only the held drift is approved');
      await waitFor(`${object}: the approved drift repaired`, async () => ((await ttlOf(externalName)) === 'expiresAt' ? true : undefined), WAIT_MS);
      const after = await world.until<Table>('Table', object, 'only the reported drift left', (t) => synced(t)?.reason === 'DriftReported');
      assert.deepEqual(new Set(after.status?.drift?.map((d) => `${d.field}=${d.mode}`)), new Set(['spec.billing.mode=Report', 'spec.labels.env=Report']));
      assert.equal(after.status?.heldDriftDigest, undefined);
      assert.equal(after.metadata.annotations?.[Annotations.approveDrift], undefined, 'the approval is used up');
      assert.deepEqual(await billingOf(externalName), ['PROVISIONED', 5, 5], 'the reported billing is never written');
      assert.deepEqual(await userTagsOf(externalName), { team: 'media', env: 'dev' }, 'the reported tag is never removed');
      const event = await world.event(object, 'RepairedApprovedDrift');
      assert.equal(event.message, `Repaired approved drift in Table "${externalName}": spec.ttlAttribute: "dropAt" -> "expiresAt".`);
      assert.deepEqual(
        world.writesOf(object).slice(writesBefore).map((w) => [w.reason, w.changes]),
        [['RepairedApprovedDrift', [{ field: 'spec.ttlAttribute', from: 'dropAt', to: 'expiresAt' }]]],
        'one write, of the approved field only',
      );
      assert.equal((await world.eventsOf(object, 'RepairedDrift')).length, 0);
      const backups = await dynamodb.send(new DescribeContinuousBackupsCommand({ TableName: externalName }));
      assert.equal(backups.ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus, 'DISABLED', 'nothing the spec left off was set');
    });

    it('a deletion protection raised in DynamoDB is never lowered, whatever the mode', async () => {
      await keepsRaisedProtection('aws', 'local-aws', {
        get: async (table) => (await describeTable(table))?.DeletionProtectionEnabled === true,
        raise: async (TableName) => void (await dynamodb.send(new UpdateTableCommand({ TableName, DeletionProtectionEnabled: true }))),
      });
    });
  });

  describe('GCP (Bigtable admin SDK against the Bigtable emulator)', { skip: bigtableSkip }, () => {
    let emulator: BigtableEmulator;
    let bigtable: Bigtable;
    const tablePath = (id: string) => `projects/${PROJECT}/instances/${INSTANCE}/tables/${id}`;
    const admin = () => bigtable.admin.getTableAdminClient();
    const protectionOf = async (id: string) => (await admin().getTable({ name: tablePath(id), view: 'SCHEMA_VIEW' }))[0].deletionProtection === true;
    const setProtection = async (id: string, deletionProtection: boolean) => {
      await admin().updateTable({ table: { name: tablePath(id), deletionProtection }, updateMask: { paths: ['deletion_protection'] } });
      await waitFor(`${id}: deletion protection ${deletionProtection} in Bigtable`, async () => ((await protectionOf(id)) === deletionProtection ? true : undefined), WAIT_MS);
    };

    before(async () => {
      emulator = await startBigtableEmulator();
      bigtable = new Bigtable({ projectId: PROJECT, apiEndpoint: emulator.host, metricsEnabled: false, universeDomain: 'googleapis.com' });
      await world.createProviderConfig('local-gcp', { provider: 'gcp', project: PROJECT, bigtableInstance: INSTANCE, endpoints: { table: `http://${emulator.host}` } });
    });
    after(async () => {
      await destroyBigtableClients();
      await bigtable?.close();
      await emulator?.stop();
    });

    it('Repair: deletion protection turned off in Bigtable is turned on again, on record', async () => {
      const object = 'gcp-repair';
      const externalName = 'k8or-drift-gcp-repair';
      await world.create<Table>('Table', object, 'local-gcp', { name: externalName, ...KEY, deletionProtection: true });
      await setProtection(externalName, false);
      await world.reconcileNow('Table', object);
      await waitFor(`${object}: protection on again`, async () => ((await protectionOf(externalName)) ? true : undefined), WAIT_MS);
      const event = await world.event(object, 'RepairedDrift');
      assert.equal(event.message, `Repaired drift in Table "${externalName}": spec.deletionProtection: false -> true.`);
      const repair = world.writesOf(object).find((w) => w.reason === 'RepairedDrift');
      assert.deepEqual(repair?.changes, [{ field: 'spec.deletionProtection', from: false, to: true }]);
      assert.equal(synced(await world.inSync('Table', object))?.reason, 'ReconcileSuccess');
    });

    it('Report shows deletion protection turned off and never writes; Hold waits for an approval of exactly its difference', async () => {
      const object = 'gcp-held';
      const externalName = 'k8or-drift-gcp-held';
      await world.create<Table>('Table', object, 'local-gcp', { name: externalName, ...KEY, deletionProtection: true, driftPolicy: { default: 'Report' } });
      const writesBefore = world.writesOf(object).length;
      await setProtection(externalName, false);

      const reported = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(reported)?.reason, 'DriftReported', synced(reported)?.message);
      assert.deepEqual(reported.status?.drift?.map((d) => [d.field, d.desired, d.actual, d.mode]), [['spec.deletionProtection', true, false, 'Report']]);
      assert.equal(reported.status?.driftCount, 1);
      assert.equal(await protectionOf(externalName), false, 'Report writes nothing');
      assert.ok((await world.eventsOf(object, 'DriftReported')).length > 0, 'an Event says so');

      await world.patch('Table', object, { spec: { driftPolicy: { default: 'Hold' } } });
      const held = await world.until<Table>('Table', object, 'the drift held', (t) => synced(t)?.reason === 'DriftHeld');
      const digest = held.status?.heldDriftDigest;
      assert.ok(digest);
      assert.equal(await protectionOf(externalName), false, 'Hold writes nothing');

      // An approval of another difference (another digest) is not applied.
      const other = digest.replace(/^./, (c) => (c === '0' ? '1' : '0'));
      await world.patch('Table', object, { metadata: { annotations: { [Annotations.approveDrift]: other } } });
      const stale = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(stale)?.reason, 'DriftHeld');
      assert.equal(await protectionOf(externalName), false, 'an approval of another difference is not applied');
      assert.equal(world.writesOf(object).length, writesBefore, 'nothing written, nothing on record');

      const approved = await world.approve('Table', object);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, /spec\.deletionProtection: the spec has true, the cloud has false/);
      await waitFor(`${object}: the approved drift repaired`, async () => ((await protectionOf(externalName)) ? true : undefined), WAIT_MS);
      const after = await world.until<Table>('Table', object, 'in sync', (t) => synced(t)?.status === 'True');
      assert.equal(after.status?.heldDriftDigest, undefined);
      assert.equal(after.metadata.annotations?.[Annotations.approveDrift], undefined, 'the approval is used up');
      assert.deepEqual(
        world.writesOf(object).slice(writesBefore).map((w) => [w.reason, w.changes]),
        [['RepairedApprovedDrift', [{ field: 'spec.deletionProtection', from: false, to: true }]]],
      );
    });

    it('a deletion protection raised in Bigtable is never lowered, whatever the mode', async () => {
      await keepsRaisedProtection('gcp', 'local-gcp', { get: protectionOf, raise: async (id) => await setProtection(id, true) });
    });

    it('Report leaves a column family GC rule changed in Bigtable as it is; Repair, the default, writes it back', async () => {
      const object = 'gcp-gc-rule';
      const externalName = 'k8or-drift-gcp-gc-rule';
      await world.create<Table>('Table', object, 'local-gcp', { name: externalName, ...KEY, driftPolicy: { default: 'Report' } });
      await admin().modifyColumnFamilies({ name: tablePath(externalName), modifications: [{ id: 'd', update: { gcRule: { maxNumVersions: 5 } } }] });
      const reported = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(reported)?.reason, 'DriftReported', synced(reported)?.message);
      assert.deepEqual(reported.status?.drift?.map((d) => [d.field, d.mode]), [['columnFamilies.d.gcRule', 'Report']]);
      const gcRule = async () => (await admin().getTable({ name: tablePath(externalName), view: 'FULL' }))[0].columnFamilies?.['d']?.gcRule;
      assert.equal((await gcRule())?.maxNumVersions, 5, 'Report writes nothing');

      await world.patch('Table', object, { spec: { driftPolicy: null } });
      await world.until<Table>('Table', object, 'repaired', (t) => t.spec.driftPolicy === undefined && synced(t)?.status === 'True');
      assert.equal((await gcRule())?.maxNumVersions, 1, 'Repair writes the rule back');
      // Written as the new policy asks, on record (the pass of a new generation: UpdatedExternalResource).
      assert.deepEqual(world.writesOf(object).at(-1)?.changes, [{ field: 'columnFamilies.d.gcRule', from: { maxNumVersions: 5 }, to: { maxNumVersions: 1 } }]);
    });
  });

  describe('Azure (Tables SDK against Azurite)', () => {
    let azurite: Azurite;
    before(async () => {
      azurite = await startAzurite();
      await world.createSecret('azure-creds', { accountKey: azurite.accountKey });
      await world.createProviderConfig('local-azure', {
        provider: 'azure',
        storageAccount: azurite.accountName,
        endpoints: { table: azurite.tableEndpoint },
        credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'azure-creds' } },
      });
    });
    after(async () => await azurite?.stop());

    it('a table has nothing to drift on: what the SDK changes is never drift, under Hold too', async () => {
      const object = 'azure-held';
      const externalName = 'k8ordriftazureheld';
      await world.create<Table>('Table', object, 'local-azure', { name: externalName, ...KEY, driftPolicy: { default: 'Hold' } });
      const writesBefore = world.writesOf(object).length;
      const client = TableClient.fromConnectionString(azurite.connectionString, externalName, { allowInsecureConnection: true });
      await client.createEntity({ partitionKey: 'p', rowKey: 'r', note: 'written behind k8or' });
      const checked = await world.reconcileNow<Table>('Table', object);
      assert.equal(synced(checked)?.reason, 'ReconcileSuccess', synced(checked)?.message);
      assert.deepEqual(checked.status?.drift ?? [], []);
      assert.equal(checked.status?.heldDriftDigest, undefined);
      assert.equal((await tableOf(object)).status?.driftCount ?? 0, 0);
      assert.equal(world.writesOf(object).length, writesBefore);
    });
  });
});
