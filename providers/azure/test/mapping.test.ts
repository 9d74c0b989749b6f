import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryableError, TerminalError, type ProviderError } from '@k8or/core';
import { accountFromUrl, blobMapping, classifyAzureError, clientSettings, diffMetadata, ownerMetadataName, ownerTagsIn } from '@k8or/provider-azure';
import { azureProviderConfig, bucket, ownerTagsOf } from './support.ts';

const owner = ownerTagsOf('team-a', 'photos', 'Bucket');

describe('Azure mapping', () => {
  it('writes owner tags as C# identifier metadata names and reads them back without regard to case', () => {
    assert.equal(ownerMetadataName('k8or.io/managed-by'), 'k8or_managed_by');
    const metadata = { K8OR_MANAGED_BY: 'k8or', k8or_cluster: 'test-cluster', k8or_namespace: 'team-a', k8or_name: 'photos', k8or_kind: 'Bucket', team: 'a' };
    assert.deepEqual(ownerTagsIn(metadata, owner), owner);
    assert.deepEqual(ownerTagsIn({ team: 'a' }, owner), {}, 'a container has metadata: none of it k8or\'s is {}, never "no tags"');
    const { k8or_namespace: _removed, ...incomplete } = metadata;
    const { 'k8or.io/namespace': _namespace, ...found } = owner;
    assert.deepEqual(ownerTagsIn(incomplete, owner), found, 'an incomplete record is reported as found: a missing tag proves nothing');
    assert.deepEqual(ownerTagsIn({ ...incomplete, k8or_cluster: 'elsewhere' }, owner), { 'k8or.io/managed-by': 'k8or', 'k8or.io/cluster': 'elsewhere', 'k8or.io/name': 'photos', 'k8or.io/kind': 'Bucket' });
    assert.deepEqual(diffMetadata({ Team: 'a' }, owner, metadata), []);
    assert.deepEqual(ownerTagsIn(metadata, {}), owner, 'every owner tag found, whichever are expected (k8or import expects none)');
  });

  it('names each differing metadata entry by its spec field, extra entries included', () => {
    const metadata = { k8or_managed_by: 'k8or', k8or_cluster: 'elsewhere', k8or_namespace: 'team-a', k8or_name: 'photos', k8or_kind: 'Bucket', extra: '1' };
    assert.deepEqual(diffMetadata({ team: 'a' }, owner, metadata), [
      { field: 'spec.labels.extra', desired: undefined, actual: '1' },
      { field: 'ownerTags.k8or.io/cluster', desired: 'test-cluster', actual: 'elsewhere' },
      { field: 'spec.labels.team', desired: 'a', actual: undefined },
    ]);
  });

  it('maps publicAccess to container access levels, and reports access levels as portable values (container as its nearest, Allowed)', () => {
    assert.equal(blobMapping.accessLevelFor(undefined), 'none');
    assert.equal(blobMapping.accessLevelFor('Blocked'), 'none');
    assert.equal(blobMapping.accessLevelFor('Allowed'), 'blob');
    const observed = { accessLevel: 'container' as const, metadata: {}, etag: undefined, lastModified: undefined, legalHold: false, immutabilityPolicy: false };
    // The container level differs from blob (update sets blob) though both are Allowed in the portable spec.
    assert.deepEqual(blobMapping.diffContainer(bucket('photos', { publicAccess: 'Allowed' }), observed, {})[0], { field: 'spec.publicAccess', desired: 'Allowed', actual: 'Allowed' });
    assert.deepEqual(blobMapping.diffContainer(bucket('photos'), observed, {})[0], { field: 'spec.publicAccess', desired: 'Blocked', actual: 'Allowed' });
    assert.deepEqual(blobMapping.diffContainer(bucket('photos'), { ...observed, accessLevel: 'none' }, {}), []);
    assert.deepEqual(['none', 'blob', 'container'].map((level) => blobMapping.portablePublicAccess(level as blobMapping.AccessLevel)), ['Blocked', 'Allowed', 'Allowed']);
  });

  it('resolves endpoints: per kind, from a connection string, or the account\'s public one (sovereign suffix too)', () => {
    const pc = azureProviderConfig({}, 'prodphotos');
    pc.spec.credentials = { source: 'Environment' };
    assert.deepEqual(clientSettings(pc, undefined, 'Bucket'), { serviceUrl: 'https://prodphotos.blob.core.windows.net', accountName: 'prodphotos', credential: { kind: 'defaultChain' } });
    (pc.spec as { settings?: Record<string, unknown> }).settings = { endpointSuffix: 'core.chinacloudapi.cn' };
    assert.equal(clientSettings(pc, undefined, 'Table').serviceUrl, 'https://prodphotos.table.core.chinacloudapi.cn');

    const fromSecret = azureProviderConfig({});
    delete fromSecret.spec.storageAccount;
    const connectionString = 'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/devstoreaccount1;TableEndpoint=http://127.0.0.1:2/devstoreaccount1;';
    assert.deepEqual(clientSettings(fromSecret, { connectionString }, 'Table'), {
      serviceUrl: 'http://127.0.0.1:2/devstoreaccount1',
      accountName: 'devstoreaccount1',
      credential: { kind: 'sharedKey', accountName: 'devstoreaccount1', accountKey: 'a2V5' },
    });
    assert.deepEqual(clientSettings(azureProviderConfig({ bucket: 'https://x.example/' }, 'acct'), { sasToken: '?sv=1&sig=2' }, 'Bucket').credential, { kind: 'sas', token: 'sv=1&sig=2' });
    assert.equal(accountFromUrl('http://127.0.0.1:10000/devstoreaccount1'), 'devstoreaccount1');
    assert.equal(accountFromUrl('https://acct.blob.core.windows.net'), 'acct');
  });

  it('needs exactly one way to authenticate in a Secret, and says which keys it found', () => {
    const pc = azureProviderConfig({});
    assert.throws(() => clientSettings(pc, {}, 'Bucket'), (error: unknown) => error instanceof TerminalError && error.code === 'MissingCredentials' && /found none/.test(error.message));
    assert.throws(() => clientSettings(pc, { accountKey: 'a', sasToken: 'b' }, 'Bucket'), /found accountKey and sasToken/);
  });

  it('classifies errors that never reached Azure: network failures and aborts retryable, an unavailable credential terminal', () => {
    const network = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    assert.ok(classifyAzureError(network, 'GetContainerProperties') instanceof RetryableError);
    const aborted = Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' });
    assert.ok(classifyAzureError(aborted, 'CreateTable') instanceof RetryableError);
    const noCredential = Object.assign(new Error('DefaultAzureCredential failed to retrieve a token'), { name: 'CredentialUnavailableError' });
    const classified: ProviderError = classifyAzureError(noCredential, 'CreateContainer');
    assert.ok(classified instanceof TerminalError);
    assert.equal(classified.code, 'CredentialUnavailableError');
  });
});
