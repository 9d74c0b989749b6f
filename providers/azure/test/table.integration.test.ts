// The table client with the real @azure/data-tables against Azurite, checked by direct reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from '@azure/data-tables';
import { DeletionBlockedError, NotOwnedError, RetryableError, TerminalError } from '@k8or/core';
import { clearAzureClients, tableConnector } from '@k8or/provider-azure';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { accountKeySecret, accountSas, azureProviderConfig, connectionContext, startFaultProxy, stringsIn, table, type FaultProxy } from './support.ts';

/** The engine's call options: a signal that never aborts here. */
const call = { signal: new AbortController().signal };

describe('Table -> Azure Table Storage table, against Azurite', () => {
  let azurite: Azurite;
  let tables: TableServiceClient;
  let proxy: FaultProxy;

  before(async () => {
    azurite = await startAzurite();
    tables = new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true });
    proxy = await startFaultProxy(azurite.tableEndpoint);
  });
  after(async () => {
    clearAzureClients();
    await proxy?.close();
    await azurite?.stop();
  });

  /** Azurite deletes a table at once, Azure a little later: waits until the name is free again. */
  const waitForGone = async (name: string): Promise<void> => {
    for (const deadline = Date.now() + 30_000; (await names()).includes(name); ) {
      if (Date.now() > deadline) throw new Error(`table ${name} still listed after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const names = async (): Promise<string[]> => {
    const found: string[] = [];
    for await (const t of tables.listTables()) found.push(t.name ?? '');
    return found.sort();
  };
  const connect = async (resource: ReturnType<typeof table>, options: { endpoint?: string; secret?: Record<string, string> } = {}) => {
    const context = connectionContext(azureProviderConfig({ table: options.endpoint ?? azurite.tableEndpoint }), resource, options.secret ?? accountKeySecret(azurite));
    return { client: await tableConnector.connect(resource, context), context };
  };

  it('creates a table with its identity marker, observes it ready and up to date with no owner tags (Azure tables carry none)', async () => {
    const orders = table('orders');
    const { client, context } = await connect(orders);
    assert.equal((await client.observe(orders, call)).exists, false);
    const created = await client.create(orders, call);
    assert.deepEqual(context.calls, ['QueryTables', 'CreateTable', 'SetTableACL']);
    assert.ok((await names()).includes('orders'));
    const observation = await client.observe(orders, call);
    assert.deepEqual({ exists: observation.exists, ready: observation.ready, upToDate: observation.upToDate, ownerTags: observation.ownerTags }, { exists: true, ready: true, upToDate: true, ownerTags: undefined });
    assert.deepEqual(created?.identity, observation.identity, 'create reports the identity it made, as observe reads it (the engine records it even when that observe fails)');
    assert.equal(observation.atProvider?.url, `${azurite.tableEndpoint}/orders`);
  });

  it('publishes no SAS: with sasToken credentials, atProvider (id, url) carries no query string and no signature', async () => {
    const sasToken = accountSas(azurite);
    const signature = new URLSearchParams(sasToken).get('sig') ?? '';
    const shared = table('sharedbysas');
    const { client } = await connect(shared, { secret: { sasToken } });
    await client.create(shared, call);
    const observation = await client.observe(shared, call);
    assert.equal(observation.exists, true);
    assert.equal(observation.atProvider?.url, `${azurite.tableEndpoint}/sharedbysas`);
    for (const text of stringsIn(observation)) {
      assert.ok(!text.includes(signature) && !text.includes('sig='), `no SAS in ${text}`);
      if (URL.canParse(text)) assert.equal(new URL(text).search, '', `no query string in ${text}`);
    }
  });

  it('tells a table of another name apart: only the exact name is found', async () => {
    await tables.createTable('ordersArchive');
    const orders2 = table('orders2');
    const { client } = await connect(orders2);
    assert.equal((await client.observe(orders2, call)).exists, false);
  });

  it('refuses to take a table that appeared since observe (TableAlreadyExists): nothing proves it is ours', async () => {
    await tables.createTable('legacy');
    const legacy = table('legacy');
    const { client } = await connect(legacy);
    await assert.rejects(client.create(legacy, call), (error: unknown) => error instanceof NotOwnedError && error.code === 'TableAlreadyExists' && /k8or\.io\/adopt/.test(error.message));
  });

  it('reports what Table Storage does not have (provisioned billing, TTL, PITR, labels) as settings not applied', async () => {
    const rich = table('rich', { billing: { mode: 'provisioned', readCapacity: 5, writeCapacity: 5 }, ttlAttribute: 'expiresAt', pointInTimeRecovery: true, labels: { team: 'a' } });
    const { client } = await connect(rich);
    await client.create(rich, call);
    const observation = (await client.observe(rich, call)) as { settingIssues?: { field: string }[] };
    assert.deepEqual(observation.settingIssues?.map((i) => i.field), ['spec.billing', 'spec.ttlAttribute', 'spec.pointInTimeRecovery', 'spec.labels']);
  });

  it('honours deletionProtection: the table stays until it is turned off', async () => {
    const kept = table('kept', { deletionProtection: true });
    const { client } = await connect(kept);
    await client.create(kept, call);
    await assert.rejects(client.delete(kept, call), (error: unknown) => error instanceof DeletionBlockedError && error.code === 'DeletionProtectionEnabled');
    assert.ok((await names()).includes('kept'));
    await client.delete(table('kept', { deletionProtection: false }), call);
    assert.ok(!(await names()).includes('kept'));
    await client.delete(table('kept'), call); // missing is success
  });

  it('answers a wrong key with a terminal AuthorizationFailure on observe, never "missing"', async () => {
    const orders = table('orders');
    const { client } = await connect(orders, { secret: { accountKey: Buffer.from('not-the-key').toString('base64') } });
    await assert.rejects(client.observe(orders, call), (error: unknown) => error instanceof TerminalError && error.code === 'AuthorizationFailure');
  });

  it("probes with observe's Query Tables and Get Table ACL: no owner tags (tables carry none), the identity marker, absence only when the name is not listed, a wrong key thrown", async () => {
    const probed = table('probed');
    const { client, context } = await connect(probed);
    await client.create(probed, call);
    const observation = await client.observe(probed, call);
    assert.match(observation.identity?.['marker'] ?? '', /^k8or-id-[0-9a-f]{16}$/);
    context.calls.length = 0;
    assert.deepEqual(await client.probe?.(probed, call), { exists: true, identity: observation.identity, protection: [] }, 'no protection in Azure: k8or enforces spec.deletionProtection itself');
    assert.deepEqual(context.calls, ['QueryTables', 'GetTableACL']);
    // The marker grants nothing: a stored access policy that expired in 2000.
    const [policy] = await new TableClient(azurite.tableEndpoint, 'probed', new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true }).getAccessPolicy();
    assert.equal(policy?.id, observation.identity?.['marker']);
    assert.ok((policy?.accessPolicy?.expiry?.getTime() ?? Infinity) < Date.now());
    // A table made again under the name, by anyone, has another identity (here: none).
    await client.delete(probed, call);
    await waitForGone('probed');
    await tables.createTable('probed');
    assert.equal((await client.observe(probed, call)).identity, undefined);
    context.calls.length = 0;
    const { client: wrongKey } = await connect(probed, { secret: { accountKey: Buffer.from('not-the-key').toString('base64') } });
    await assert.rejects(wrongKey.probe?.(probed, call) ?? Promise.resolve(), (error: unknown) => error instanceof TerminalError && error.code === 'AuthorizationFailure');
    await client.delete(probed, call);
    assert.deepEqual(await client.probe?.(probed, call), { exists: false });
  });

  it('classifies 503 ServerBusy as retryable and TableBeingDeleted as retryable after a delay', async () => {
    const busy = table('busy');
    const { client } = await connect(busy, { endpoint: proxy.endpoint });
    proxy.fail(3, 503, 'ServerBusy');
    await assert.rejects(client.observe(busy, call), (error: unknown) => error instanceof RetryableError && error.code === 'ServerBusy');
    proxy.clear();
    proxy.fail(1, 409, 'TableBeingDeleted');
    await assert.rejects(client.create(busy, call), (error: unknown) => error instanceof RetryableError && error.code === 'TableBeingDeleted' && (error.retryAfterMs ?? 0) > 0);
    proxy.clear();
  });
});
