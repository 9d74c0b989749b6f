import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { Table } from '@k8or/api';
import { DeletionBlockedError, NotOwnedError, TerminalError, type ExternalClient } from '@k8or/core';
import { destroyDynamoDbClients, tableConnector } from '@k8or/provider-aws';
import { startDynamoDbLocal, type DynamoDbLocal } from '@k8or/local-clouds';
import { awsProviderConfig, call, connectionContext, credentials, table } from './support.ts';

/** Resolves once `done` holds (checked every 50 ms, for at most 10 s). */
async function waitUntil(done: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await done()); ) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A proxy in front of DynamoDB Local that forwards every request and answers DescribeTable with
 * `status` as the table's TableStatus (the checksum header goes, since the body changes).
 */
async function startStatusProxy(target: string, status: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const base = new URL(target);
  const server = createServer((req, res) => {
    const describing = String(req.headers['x-amz-target'] ?? '').endsWith('.DescribeTable');
    const upstream = httpRequest({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        let body = Buffer.concat(chunks);
        const headers = { ...answer.headers };
        if (describing && answer.statusCode === 200) {
          const parsed = JSON.parse(body.toString('utf8')) as { Table?: { TableStatus?: string } };
          if (parsed.Table) parsed.Table.TableStatus = status;
          body = Buffer.from(JSON.stringify(parsed));
          delete headers['x-amz-crc32'];
        }
        headers['content-length'] = String(body.length);
        res.writeHead(answer.statusCode ?? 502, headers).end(body);
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('Table -> DynamoDB, with the real DynamoDB client against DynamoDB Local', () => {
  let local: DynamoDbLocal;
  let dynamodb: DynamoDBClient;

  before(async () => {
    local = await startDynamoDbLocal();
    dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint: local.endpoint, credentials });
  });
  after(async () => {
    dynamodb.destroy();
    destroyDynamoDbClients();
    await local.stop();
  });

  async function connect(resource: Table): Promise<ExternalClient<Table> & { calls: string[] }> {
    const context = connectionContext(awsProviderConfig({ table: local.endpoint }), resource);
    return Object.assign(await tableConnector.connect(resource, context), { calls: context.calls });
  }

  const describeTable = async (TableName: string) => (await dynamodb.send(new DescribeTableCommand({ TableName }))).Table;

  it('creates a table with keys, billing, protection and TTL (DynamoDB Local is ACTIVE at once)', async () => {
    const resource = table('orders', {
      partitionKey: { name: 'customerId', type: 'string' },
      sortKey: { name: 'orderedAt', type: 'number' },
      billing: { mode: 'provisioned', readCapacity: 5, writeCapacity: 2 },
      ttlAttribute: 'expiresAt',
      deletionProtection: false,
      labels: { team: 'a' },
    });
    const client = await connect(resource);
    assert.equal((await client.observe(resource, call)).exists, false);
    await client.create(resource, call);

    const described = await describeTable('orders');
    assert.deepEqual(described?.KeySchema, [
      { AttributeName: 'customerId', KeyType: 'HASH' },
      { AttributeName: 'orderedAt', KeyType: 'RANGE' },
    ]);
    assert.deepEqual(
      described?.AttributeDefinitions?.map((a) => [a.AttributeName, a.AttributeType]),
      [['customerId', 'S'], ['orderedAt', 'N']],
    );
    assert.equal(described?.ProvisionedThroughput?.ReadCapacityUnits, 5);

    const settled = await client.observe(resource, call);
    assert.deepEqual(settled.diff, []);
    assert.deepEqual(settled.immutableDiff, []);
    assert.equal(settled.atProvider?.state, 'ACTIVE');
    assert.equal(settled.atProvider?.id, described?.TableArn);
    assert.equal(settled.atProvider?.itemCount, 0);
    // DynamoDB Local has no tagging: owner tags are unknown, and the engine judges ownership by its create record.
    assert.equal(settled.ownerTags, undefined);
    const ttl = await dynamodb.send(new DescribeTimeToLiveCommand({ TableName: 'orders' }));
    assert.deepEqual(ttl.TimeToLiveDescription, { TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
  });

  it('sees TTL disabled and billing changed behind its back as drift, and repairs both', async () => {
    const resource = table('sessions', { ttlAttribute: 'expiresAt', billing: { mode: 'onDemand' } });
    const client = await connect(resource);
    await client.create(resource, call);
    await client.update(resource, await client.observe(resource, call), call);
    await dynamodb.send(new UpdateTimeToLiveCommand({ TableName: 'sessions', TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: false } }));
    await dynamodb.send(new UpdateTableCommand({ TableName: 'sessions', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } }));

    const drifted = await client.observe(resource, call);
    assert.deepEqual(drifted.diff?.map((d) => d.field), ['spec.billing.mode', 'spec.ttlAttribute']);
    assert.deepEqual(drifted.diff?.[1], { field: 'spec.ttlAttribute', desired: 'expiresAt', actual: undefined });
    await client.update(resource, drifted, call);
    assert.deepEqual((await client.observe(resource, call)).diff, []);
    assert.equal((await describeTable('sessions'))?.BillingModeSummary?.BillingMode, 'PAY_PER_REQUEST');
  });

  it('changes throughput and TTL attribute in place when the spec changes', async () => {
    const resource = table('metrics', { billing: { mode: 'provisioned', readCapacity: 1, writeCapacity: 1 }, ttlAttribute: 'ttl' });
    const client = await connect(resource);
    await client.create(resource, call);
    await client.update(resource, await client.observe(resource, call), call);
    const changed = table('metrics', { billing: { mode: 'provisioned', readCapacity: 10, writeCapacity: 4 }, ttlAttribute: 'expiry' });
    const observation = await client.observe(changed, call);
    assert.deepEqual(observation.diff?.map((d) => d.field), ['spec.billing.readCapacity', 'spec.billing.writeCapacity', 'spec.ttlAttribute']);
    await client.update(changed, observation, call);
    assert.deepEqual((await client.observe(changed, call)).diff, []);
    assert.equal((await describeTable('metrics'))?.ProvisionedThroughput?.WriteCapacityUnits, 4);
  });

  it('reports a key schema change as an immutable difference, not as something to update', async () => {
    const resource = table('keyed', { partitionKey: { name: 'id', type: 'string' } });
    const client = await connect(resource);
    await client.create(resource, call);
    const changed = table('keyed', { partitionKey: { name: 'id', type: 'number' }, sortKey: { name: 'at', type: 'string' } });
    const observation = await client.observe(changed, call);
    assert.deepEqual(observation.immutableDiff?.map((d) => d.field), ['spec.partitionKey', 'spec.sortKey']);
    assert.deepEqual(observation.diff, []);
  });

  it('keeps a protected table: delete stops with DeletionBlockedError naming the setting, and never turns protection off', async () => {
    const resource = table('ledger', { deletionProtection: true });
    const client = await connect(resource);
    await client.create(resource, call);
    assert.equal((await describeTable('ledger'))?.DeletionProtectionEnabled, true);
    const blocked = (error: unknown): boolean => {
      assert.ok(error instanceof DeletionBlockedError, String(error));
      assert.equal(error.code, 'DeletionProtectionEnabled');
      assert.match(error.message, /deletion protection on \(DeletionProtectionEnabled/);
      return true;
    };
    await assert.rejects(client.delete(resource, call), blocked);
    // A spec without protection does not lower it either: the delete still stops, and the table keeps its protection.
    const unprotected = table('ledger', { deletionProtection: false });
    await assert.rejects(client.delete(unprotected, call), blocked);
    assert.equal((await describeTable('ledger'))?.DeletionProtectionEnabled, true);

    // Turned off where it was set, the table goes.
    await dynamodb.send(new UpdateTableCommand({ TableName: 'ledger', DeletionProtectionEnabled: false }));
    await client.delete(unprotected, call);
    await assert.rejects(describeTable('ledger'), { name: 'ResourceNotFoundException' });
  });

  it('reports deletion protection set outside k8or as drift and as a fact; update keeps it when given the cloud\'s value (a held protection), and a billing repair keeps it too', async () => {
    const resource = table('guarded', { deletionProtection: false });
    const client = await connect(resource);
    await client.create(resource, call);
    await dynamodb.send(new UpdateTableCommand({ TableName: 'guarded', DeletionProtectionEnabled: true }));

    const drifted = await client.observe(resource, call);
    assert.deepEqual(drifted.diff, [{ field: 'spec.deletionProtection', desired: false, actual: true }]);
    assert.deepEqual(drifted.protection, [{ field: 'spec.deletionProtection', enabled: true, blocksDeletion: true }]);
    // The engine holds it on a resync: update gets the spec with the cloud's value, and writes nothing for it.
    const held = table('guarded', { deletionProtection: true });
    client.calls.length = 0;
    await client.update(held, drifted, call);
    assert.deepEqual(client.calls, []);
    assert.equal((await describeTable('guarded'))?.DeletionProtectionEnabled, true);

    // Billing drifts too, and the spec given says nothing against protection: the UpdateTable that repairs billing keeps it on.
    await dynamodb.send(new UpdateTableCommand({ TableName: 'guarded', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 }, DeletionProtectionEnabled: true }));
    const both = await client.observe(resource, call);
    assert.deepEqual(both.diff?.map((d) => d.field), ['spec.billing.mode', 'spec.deletionProtection']);
    await client.update(held, both, call);
    const after = await describeTable('guarded');
    assert.equal(after?.BillingModeSummary?.BillingMode, 'PAY_PER_REQUEST');
    assert.equal(after?.DeletionProtectionEnabled, true);

    // A delete never turns it off.
    await assert.rejects(client.delete(resource, call), (error: unknown) => error instanceof DeletionBlockedError && /set outside k8or/.test(error.message));
    assert.ok(await describeTable('guarded'));

    // A new generation that asks for no protection (the engine holds nothing then) lowers it.
    await client.update(resource, await client.observe(resource, call), call);
    assert.equal((await describeTable('guarded'))?.DeletionProtectionEnabled, false);
    await client.delete(resource, call);
  });

  it('never lowers protection set since the observe when only billing is repaired (the table is read again)', async () => {
    const resource = table('raced', { billing: { mode: 'onDemand' } });
    const client = await connect(resource);
    await client.create(resource, call);
    await dynamodb.send(new UpdateTableCommand({ TableName: 'raced', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 1, WriteCapacityUnits: 1 } }));
    const observation = await client.observe(resource, call);
    assert.deepEqual(observation.diff?.map((d) => d.field), ['spec.billing.mode']);
    await dynamodb.send(new UpdateTableCommand({ TableName: 'raced', DeletionProtectionEnabled: true }));
    await client.update(resource, observation, call);
    assert.equal((await describeTable('raced'))?.DeletionProtectionEnabled, true);
    await dynamodb.send(new UpdateTableCommand({ TableName: 'raced', DeletionProtectionEnabled: false }));
  });

  it('raises protection the spec asks for that the table lacks', async () => {
    const resource = table('raised', { deletionProtection: true });
    const client = await connect(resource);
    await client.create(resource, call);
    await dynamodb.send(new UpdateTableCommand({ TableName: 'raised', DeletionProtectionEnabled: false }));
    const drifted = await client.observe(resource, call);
    assert.deepEqual(drifted.diff, [{ field: 'spec.deletionProtection', desired: true, actual: false }]);
    assert.equal(await client.update(resource, drifted, call), undefined);
    assert.equal((await describeTable('raised'))?.DeletionProtectionEnabled, true);
    await dynamodb.send(new UpdateTableCommand({ TableName: 'raised', DeletionProtectionEnabled: false }));
    await client.delete(resource, call);
  });

  it('deletes a table with items, and deleting a missing table succeeds', async () => {
    const resource = table('scratch');
    const client = await connect(resource);
    await client.create(resource, call);
    await dynamodb.send(new PutItemCommand({ TableName: 'scratch', Item: { pk: { S: 'a' } } }));
    assert.equal((await client.observe(resource, call)).exists, true);
    await client.delete(resource, call);
    await client.delete(resource, call);
    assert.equal((await client.observe(resource, call)).exists, false);
  });

  it('fails terminally with ValidationException for an invalid spec, and ResourceInUseException for a taken name', async () => {
    const invalid = table('x!');
    await assert.rejects((await connect(invalid)).create(invalid, call), (error: unknown) => {
      assert.ok(error instanceof TerminalError);
      assert.equal(error.code, 'ValidationException');
      assert.match(error.message, /CreateTable failed with ValidationException/);
      return true;
    });
    const existing = table('existing-table');
    const client = await connect(existing);
    await client.create(existing, call);
    // A name in use is never taken for ours when ownership cannot be read (DynamoDB Local has no tags): NotOwned, nothing written.
    await assert.rejects(client.create(existing, call), (error: unknown) => {
      assert.ok(error instanceof NotOwnedError);
      assert.equal(error.code, 'ResourceInUseException');
      assert.match(error.message, /tags cannot be read here/);
      return true;
    });
  });

  it('reports point-in-time recovery that DynamoDB Local cannot turn on as a setting issue naming the field, never as done and never as a hard failure', async () => {
    const resource = table('recoverable', { pointInTimeRecovery: true });
    const client = await connect(resource);
    // Create does not fail; the observe the engine makes right after every create names the field (once).
    await client.create(resource, call);

    const observation = await client.observe(resource, call);
    assert.equal(observation.exists, true);
    // Not a difference update could repair: an issue the engine turns into a condition.
    assert.deepEqual(observation.diff, []);
    assert.deepEqual(observation.settingIssues?.map((i) => [i.field, i.problem]), [['spec.pointInTimeRecovery', 'unapplied']]);
    assert.match(observation.settingIssues?.[0]?.message ?? '', /DescribeContinuousBackups failed with UnknownOperationException/);
  });

  it('reports labels (tags) that DynamoDB Local can neither apply nor read as a setting issue naming spec.labels, with unknown owner tags', async () => {
    const resource = table('labelled', { labels: { team: 'a' } });
    const client = await connect(resource);
    await client.create(resource, call);
    const observation = await client.observe(resource, call);
    assert.equal(observation.ownerTags, undefined);
    assert.deepEqual(observation.settingIssues?.map((i) => [i.field, i.problem]), [['spec.labels', 'unapplied']]);
    assert.match(observation.settingIssues?.[0]?.message ?? '', /ListTagsOfResource failed with UnknownOperationException/);
  });

  describe('probe: existence and owner tags for the delete path', () => {
    it('answers with DescribeTable and ListTagsOfResource where observe makes four calls; a missing table with DescribeTable alone', async () => {
      const resource = table('probed-table', { ttlAttribute: 'expiresAt' });
      const client = await connect(resource);
      await client.create(resource, call);
      client.calls.length = 0;
      const observation = await client.observe(resource, call);
      assert.deepEqual([...client.calls.splice(0)].sort(), ['DescribeContinuousBackups', 'DescribeTable', 'DescribeTimeToLive', 'ListTagsOfResource']);
      // DynamoDB Local has no tags (UnknownOperationException): unknown owner tags, as observe reports them.
      assert.deepEqual(await client.probe?.(resource, call), {
        exists: true,
        ...(observation.ownerTags ? { ownerTags: observation.ownerTags } : {}),
        identity: observation.identity,
        protection: [{ field: 'spec.deletionProtection', enabled: false, blocksDeletion: true }],
      });
      assert.deepEqual(client.calls.splice(0), ['DescribeTable', 'ListTagsOfResource']);
      await client.delete(resource, call);
      client.calls.length = 0;
      assert.deepEqual(await client.probe?.(resource, call), { exists: false });
      assert.deepEqual(client.calls, ['DescribeTable']);
    });

    it('reports a table that is DELETING (or any state but ACTIVE) as existing, with one DescribeTable, as observe does', async () => {
      // DynamoDB Local deletes at once; this endpoint answers DescribeTable as DynamoDB does while a delete runs.
      const server = createServer((request, response) => {
        request.resume();
        const target = String(request.headers['x-amz-target'] ?? '');
        if (!target.endsWith('.DescribeTable')) return void response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ __type: 'com.amazon.coral.validate#ValidationException', message: `unexpected ${target}` }));
        const Table = { TableName: 'leaving', TableStatus: 'DELETING', TableArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/leaving' };
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ Table }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const resource = table('leaving');
        const context = connectionContext(awsProviderConfig({ table: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }), resource);
        const client = await tableConnector.connect(resource, context);
        assert.deepEqual(await client.probe?.(resource, call), { exists: true, protection: [{ field: 'spec.deletionProtection', enabled: false, blocksDeletion: true }] });
        assert.deepEqual(context.calls, ['DescribeTable']);
        assert.equal((await client.observe(resource, call)).exists, true);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('throws what observe throws, never absence, when the credentials are refused', async () => {
      const resource = table('probed-denied');
      await (await connect(resource)).create(resource, call);
      const context = connectionContext(awsProviderConfig({ table: local.endpoint }), resource, { accessKeyId: 'denied-key!', secretAccessKey: 'x' });
      const denied = await tableConnector.connect(resource, context);
      const observed = await denied.observe(resource, call).catch((error: unknown) => error);
      await assert.rejects(denied.probe?.(resource, call) ?? Promise.resolve(), (error: unknown) => {
        assert.ok(error instanceof TerminalError, String(error));
        assert.equal(error.code, (observed as TerminalError).code);
        return true;
      });
    });
  });

  it('reports a table in UPDATING as ready (it serves reads and writes), with its settings read and compared', async () => {
    const resource = table('busy-table', { ttlAttribute: 'expiresAt' });
    await (await connect(resource)).create(resource, call);
    await dynamodb.send(new UpdateTimeToLiveCommand({ TableName: 'busy-table', TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: false } }));
    // DynamoDB Local finishes an UpdateTable at once; this proxy answers DescribeTable as DynamoDB does while one runs.
    const proxy = await startStatusProxy(local.endpoint, 'UPDATING');
    try {
      const context = connectionContext(awsProviderConfig({ table: proxy.endpoint }), resource);
      const client = await tableConnector.connect(resource, context);
      const observation = await client.observe(resource, call);
      assert.equal(observation.atProvider?.state, 'UPDATING');
      assert.equal(observation.ready, true);
      assert.deepEqual(observation.diff, [{ field: 'spec.ttlAttribute', desired: 'expiresAt', actual: undefined }]);
      assert.equal(observation.upToDate, false);
      context.calls.length = 0;
      assert.equal((await client.probe?.(resource, call))?.exists, true);
      assert.deepEqual(context.calls, ['DescribeTable', 'ListTagsOfResource'], 'the probe reads the tags of a usable table, as observe does');
    } finally {
      await proxy.close();
    }
  });

  it('reports its identity (creation time; TableId where the endpoint gives one) and its protections as facts; a table made again has another identity', async () => {
    const resource = table('identified', { deletionProtection: true });
    const client = await connect(resource);
    await client.create(resource, call);
    const first = await client.observe(resource, call);
    const described = await describeTable('identified');
    assert.deepEqual(first.identity, {
      ...(described?.TableId ? { tableId: described.TableId } : {}),
      createdAt: described?.CreationDateTime?.toISOString(),
    });
    assert.deepEqual((await client.observe(resource, call)).identity, first.identity, 'stable across reads');
    // DynamoDB Local has no continuous backups: point-in-time recovery is not reported.
    assert.deepEqual(first.protection, [{ field: 'spec.deletionProtection', enabled: true, blocksDeletion: true }]);

    await dynamodb.send(new UpdateTableCommand({ TableName: 'identified', DeletionProtectionEnabled: false }));
    await client.delete(resource, call);
    await waitUntil(async () => Date.now() - new Date(first.identity?.['createdAt'] ?? 0).getTime() > 1_000);
    await client.create(resource, call);
    const again = await client.observe(resource, call);
    assert.notDeepEqual(again.identity, first.identity);
  });

  it('releases ownership for Retain: UntagResource of the owner tags (DynamoDB Local has no tags: nothing to remove), a missing table is success', async () => {
    const resource = table('released');
    const client = await connect(resource);
    await client.create(resource, call);
    client.calls.length = 0;
    await client.release?.(resource, call);
    assert.deepEqual(client.calls, ['DescribeTable', 'UntagResource']);
    assert.ok(await describeTable('released'), 'the table stays');
    await client.delete(resource, call);
    await client.release?.(resource, call);
  });

  it('reports no setting issue for a table that asks for nothing DynamoDB Local lacks', async () => {
    const resource = table('plain-table', { pointInTimeRecovery: false });
    const client = await connect(resource);
    await client.create(resource, call);
    const observation = await client.observe(resource, call);
    assert.deepEqual(observation.settingIssues ?? [], []);
    assert.equal(observation.upToDate, true);
  });
});
