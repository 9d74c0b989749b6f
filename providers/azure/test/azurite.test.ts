// The Azurite launcher: free ports, in-memory or persisted state, and no Azurite outliving its parent.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient } from '@azure/storage-blob';
import { waitFor } from '@k8or/core';
import { startAzurite } from './azurite.ts';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('Azurite launcher', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'k8or-azurite-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves Blob and Table on free ports to the current SDKs (API version check skipped), in memory by default', async () => {
    const [first, second] = await Promise.all([startAzurite(), startAzurite()]);
    try {
      assert.notEqual(first.blobEndpoint, second.blobEndpoint);
      assert.match(first.blobEndpoint, /^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
      const blobs = BlobServiceClient.fromConnectionString(first.connectionString);
      await blobs.getContainerClient('probe').create();
      assert.equal(await BlobServiceClient.fromConnectionString(second.connectionString).getContainerClient('probe').exists(), false);
      const tables = new TableServiceClient(first.tableEndpoint, new AzureNamedKeyCredential(first.accountName, first.accountKey), { allowInsecureConnection: true });
      await tables.createTable('probe');
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    assert.ok(first.pid !== undefined && !alive(first.pid), 'stop() ended the process');
  });

  it('keeps containers and tables in dataDir across a restart', async () => {
    const before = await startAzurite({ dataDir });
    await BlobServiceClient.fromConnectionString(before.connectionString).getContainerClient('kept').create();
    await new TableServiceClient(before.tableEndpoint, new AzureNamedKeyCredential(before.accountName, before.accountKey), { allowInsecureConnection: true }).createTable('kept');
    await before.stop();
    const afterRestart = await startAzurite({ dataDir });
    try {
      assert.equal(await BlobServiceClient.fromConnectionString(afterRestart.connectionString).getContainerClient('kept').exists(), true);
      const tables = new TableServiceClient(afterRestart.tableEndpoint, new AzureNamedKeyCredential(afterRestart.accountName, afterRestart.accountKey), { allowInsecureConnection: true });
      const names: string[] = [];
      for await (const table of tables.listTables()) names.push(table.name ?? '');
      assert.deepEqual(names, ['kept']);
    } finally {
      await afterRestart.stop();
    }
  });

  it('dies with its parent, even when the parent is killed with SIGKILL', async () => {
    const holder = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'azurite-holder.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: holder.stdout }).once('line', resolve);
      holder.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
    });
    const { pid } = JSON.parse(line) as { pid: number };
    assert.ok(alive(pid));
    holder.kill('SIGKILL');
    await waitFor('Azurite gone after its parent was killed', () => !alive(pid), 60_000, 100);
  });
});
