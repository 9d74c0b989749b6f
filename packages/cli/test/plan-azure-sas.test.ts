// `k8or plan` for an Azure Table through an account SAS, against Azurite: the plan says what the
// engine does (core's refuseCreate): deletion policy Delete is refused before any create, Retain creates.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountSASPermissions, StorageSharedKeyCredential, generateAccountSASQueryParameters } from '@azure/storage-blob';
import { API_VERSION } from '@k8or/api';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { k8or } from './support.ts';

describe('k8or plan: an Azure Table through an account SAS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-plan-sas-'));
  let azurite: Azurite;

  before(async () => {
    azurite = await startAzurite();
  });
  after(async () => {
    await azurite?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is blocked under deletion policy Delete, naming spec.deletionPolicy and the rule, and a create under Retain', async () => {
    const sasToken = generateAccountSASQueryParameters(
      { permissions: AccountSASPermissions.parse('rwdlacup'), services: 'bt', resourceTypes: 'sco', expiresOn: new Date(Date.now() + 3_600_000) },
      new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey),
    ).toString();
    const providerConfig = join(dir, 'pc.yaml');
    writeFileSync(
      providerConfig,
      `apiVersion: ${API_VERSION}\nkind: ProviderConfig\nmetadata: { name: sas }\nspec:\n  provider: azure\n  storageAccount: ${azurite.accountName}\n  endpoints: { table: "${azurite.tableEndpoint}" }\n  credentials: { source: Secret, secretRef: { namespace: k8or-system, name: sas } }\n`,
    );
    const table = (name: string, policy: string): string =>
      `---\napiVersion: ${API_VERSION}\nkind: Table\nmetadata: { name: ${name}, namespace: default }\nspec:\n  name: ${name}Sas\n  providerConfigRef: { name: sas }\n  partitionKey: { name: id, type: string }\n  deletionPolicy: ${policy}\n`;
    const resources = join(dir, 'res.yaml');
    writeFileSync(resources, `apiVersion: v1\nkind: Secret\nmetadata: { name: sas, namespace: k8or-system }\nstringData: { sasToken: ${JSON.stringify(sasToken)} }\n${table('orders', 'Delete')}${table('kept', 'Retain')}`);
    const { KUBECONFIG: _unused, ...noCluster } = process.env;
    const result = await k8or(['plan', '-f', resources, '--provider-config', providerConfig, '--cluster-id', 'plan-sas'], { env: noCluster });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Table default\/orders: blocked[^\n]*spec\.deletionPolicy: Delete is refused[^\n]*deletion-policy\.needs-evidence/);
    assert.match(result.stdout, /Table default\/kept: create "keptSas"/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(new URLSearchParams(sasToken).get('sig')!.slice(0, 12).replace(/[+/]/g, '.')), 'no SAS signature printed');
  });
});
