// The Azurite launcher: free ports, in-memory or persisted state, and no Azurite outliving its parent.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, RestError, StorageSharedKeyCredential } from '@azure/storage-blob';
import { freePort, startAzurite, type Azurite } from '@k8or/local-clouds';
import { assertBackendEndsWithItsKilledParent, isRunning } from '../process-helpers.ts';

const tableService = (azurite: Azurite): TableServiceClient =>
  new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true });

describe('Azurite launcher', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8or-azurite-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves Blob and Table on free ports to the current SDKs (API version check skipped), in memory by default', async () => {
    const [first, second] = await Promise.all([startAzurite(), startAzurite()]);
    try {
      assert.notEqual(first.blobEndpoint, second.blobEndpoint);
      assert.match(first.blobEndpoint, /^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
      await BlobServiceClient.fromConnectionString(first.connectionString).getContainerClient('probe').create();
      assert.equal(await BlobServiceClient.fromConnectionString(second.connectionString).getContainerClient('probe').exists(), false);
      await tableService(first).createTable('probe');
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    assert.equal(isRunning(first.pid), false, 'stop() ended the process');
  });

  it('refuses a wrong account key with 403 AuthorizationFailure, on Blob and on Table', async () => {
    const azurite = await startAzurite();
    try {
      const wrongKey = Buffer.from('a key Azurite never issued, for this test').toString('base64');
      const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, wrongKey), { retryOptions: { maxTries: 1 } });
      await assert.rejects(blobs.getContainerClient('refused').create(), (error: unknown) => {
        assert.ok(error instanceof RestError);
        assert.equal(error.statusCode, 403);
        assert.equal(error.code, 'AuthorizationFailure');
        return true;
      });
      const tables = new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, wrongKey), { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } });
      await assert.rejects(tables.createTable('refused'), (error: unknown) => {
        assert.ok(error instanceof Error && 'statusCode' in error);
        assert.equal(error.statusCode, 403);
        assert.equal((error as { details?: { errorCode?: string } }).details?.errorCode, 'AuthorizationFailure');
        return true;
      });
      assert.equal(await new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey)).getContainerClient('refused').exists(), false);
    } finally {
      await azurite.stop();
    }
  });

  it('keeps containers and tables in dataDir across a restart', async () => {
    const before = await startAzurite({ dataDir });
    await BlobServiceClient.fromConnectionString(before.connectionString).getContainerClient('kept').create();
    await tableService(before).createTable('kept');
    await before.stop();
    const afterRestart = await startAzurite({ dataDir });
    try {
      assert.equal(await BlobServiceClient.fromConnectionString(afterRestart.connectionString).getContainerClient('kept').exists(), true);
      const names: string[] = [];
      for await (const table of tableService(afterRestart).listTables()) names.push(table.name ?? '');
      assert.deepEqual(names, ['kept']);
    } finally {
      await afterRestart.stop();
    }
  });

  it('listens on the Blob and Table ports it is given', async () => {
    const [blobPort, tablePort] = [await freePort(), await freePort()];
    const azurite = await startAzurite({ blobPort, tablePort });
    try {
      assert.equal(azurite.blobEndpoint, `http://127.0.0.1:${blobPort}/devstoreaccount1`);
      assert.equal(azurite.tableEndpoint, `http://127.0.0.1:${tablePort}/devstoreaccount1`);
      await BlobServiceClient.fromConnectionString(azurite.connectionString).getContainerClient('on-given-port').create();
      await tableService(azurite).createTable('givenport');
    } finally {
      await azurite.stop();
    }
  });

  it('ends with its parent, even when the parent\'s whole process group is killed with SIGKILL', async () => {
    await assertBackendEndsWithItsKilledParent('azurite', 'group');
  });
});
