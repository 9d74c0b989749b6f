// The emptiness check before a delete without forceDelete reads past an empty page: Azure's listings
// may answer "a subset of the results and a marker", and a subset may be empty. The real SDK against
// Azurite, behind a proxy that answers the first List Blobs with no blob and a NextMarker.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { DeletionBlockedError } from '@k8or/core';
import { bucketConnector, clearAzureClients } from '@k8or/provider-azure';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { accountKeySecret, azureProviderConfig, bucket, connectionContext, startCannedProxy } from './support.ts';

const isListBlobs = (url: string): boolean => /[?&]restype=container/.test(url) && /[?&]comp=list/.test(url);

/** Forwards to `target`, except the first List Blobs, answered with an empty page and a marker. */
async function emptyFirstPageProxy(target: string): Promise<{ endpoint: string; listings: () => string[]; close(): Promise<void> }> {
  let answered = false;
  const proxy = await startCannedProxy(target, (url) => {
    if (!isListBlobs(url) || answered) return undefined;
    answered = true;
    const container = url.split('?')[0]?.split('/').filter(Boolean)[1] ?? '';
    // Blob names sort after "a": Azurite's marker is the last name returned.
    return {
      status: 200,
      headers: { 'content-type': 'application/xml', 'x-ms-request-id': 'empty-page', 'x-ms-version': '2025-01-05' },
      body: `<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="${target}" ContainerName="${container}"><MaxResults>1</MaxResults><Blobs /><NextMarker>a</NextMarker></EnumerationResults>`,
    };
  });
  return { endpoint: proxy.endpoint, listings: () => proxy.requests.filter(isListBlobs), close: proxy.close };
}

describe('delete without forceDelete on Azure: an empty page of List Blobs is not an empty container', () => {
  let azurite: Azurite;

  before(async () => {
    azurite = await startAzurite();
  });
  after(async () => {
    clearAzureClients();
    await azurite?.stop();
  });

  it('follows the marker past an empty first page, finds the blob, and leaves the container', async () => {
    const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey));
    await blobs.getContainerClient('keep-me').create();
    await blobs.getContainerClient('keep-me').getBlockBlobClient('z-data').upload('precious', 8);
    const proxy = await emptyFirstPageProxy(azurite.blobEndpoint);
    try {
      const resource = bucket('keep-me');
      const client = await bucketConnector.connect(resource, connectionContext(azureProviderConfig({ bucket: proxy.endpoint }), resource, accountKeySecret(azurite)));

      await assert.rejects(client.delete(resource, { signal: AbortSignal.timeout(30_000) }), (error: unknown) => error instanceof DeletionBlockedError && /z-data/.test(error.message));

      assert.equal(proxy.listings().length, 2, 'the second page was read');
      assert.ok(/[?&]marker=a(&|$)/.test(proxy.listings()[1] ?? ''), 'from the marker of the first');
      assert.equal(await blobs.getContainerClient('keep-me').exists(), true, 'the container and its blob are still there');
    } finally {
      await proxy.close();
    }
  });
});
