import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerEnv } from '../support/chart-deployment.ts';
import { credentialsSecretData, providerConfigNamed, providersOf, readProviderSettings, sandboxProviderSettings, writeProviderSettings } from '../support/provider-settings.ts';

// What K8OR_E2E_PROVIDER_CONFIGS takes, and the env a replica run as a process gets from the
// Deployment: no cluster needed.

describe('the provider settings file (K8OR_E2E_PROVIDER_CONFIGS)', () => {
  let dir: string;
  const file = (name: string): string => join(dir, name);
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'k8or-settings-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads ProviderConfigs and the Secrets they name; stringData wins over data, as the API server merges them', async () => {
    await writeFile(file('aws.yaml'), `
apiVersion: v1
kind: Secret
metadata: { name: aws-keys, namespace: k8or-system }
data:
  accessKeyId: ${Buffer.from('AKIAFROMDATA').toString('base64')}
  secretAccessKey: ${Buffer.from('from-data').toString('base64')}
stringData:
  secretAccessKey: from-string-data
---
apiVersion: k8or.io/v1alpha1
kind: ProviderConfig
metadata: { name: default }
spec:
  provider: aws
  region: eu-west-1
  credentials: { source: Secret, secretRef: { namespace: k8or-system, name: aws-keys } }
---
apiVersion: k8or.io/v1alpha1
kind: ProviderConfig
metadata: { name: gcp }
spec: { provider: gcp, project: p, credentials: { source: Environment } }
`);
    const settings = await readProviderSettings(file('aws.yaml'));
    assert.deepEqual(providersOf(settings), ['aws', 'gcp']);
    assert.deepEqual(credentialsSecretData(settings, providerConfigNamed(settings, 'default')!), { accessKeyId: 'AKIAFROMDATA', secretAccessKey: 'from-string-data' });
    assert.equal(credentialsSecretData(settings, providerConfigNamed(settings, 'gcp')!), undefined);
  });

  it('refuses what is not a ProviderConfig or a Secret, a Secret without a namespace, and a Secret named but missing', async () => {
    const refusals: Array<[string, RegExp]> = [
      ['apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: x }\n', /Deployment x \(apps\/v1\) is neither a ProviderConfig/],
      ['apiVersion: v1\nkind: Secret\nmetadata: { name: keys }\n', /Secret keys needs metadata.namespace/],
      ['apiVersion: k8or.io/v1alpha1\nkind: ProviderConfig\nmetadata: { name: default }\nspec: { provider: aws, credentials: { source: Secret, secretRef: { namespace: ns, name: gone } } }\n', /ProviderConfig default names Secret ns\/gone, which the file does not hold/],
    ];
    for (const [i, [text, message]] of refusals.entries()) {
      await writeFile(file(`bad-${i}.yaml`), text);
      await assert.rejects(readProviderSettings(file(`bad-${i}.yaml`)), message);
    }
  });

  it('the sandbox\'s settings come back unchanged from the file they are written to', async () => {
    const settings = sandboxProviderSettings('k8or-system', { s3: 'http://127.0.0.1:1', dynamodb: 'http://127.0.0.1:2', gcs: 'http://127.0.0.1:3', bigtable: undefined });
    await writeProviderSettings(file('sandbox.yaml'), settings);
    assert.deepEqual(await readProviderSettings(file('sandbox.yaml')), settings);
    assert.equal(providerConfigNamed(settings, 'local-gcp')?.spec.bigtableInstance, undefined, 'no Bigtable instance without the emulator');
  });
});

describe("a replica's env, as the kubelet builds it from the Deployment", () => {
  const secrets: Record<string, Record<string, string>> = { 'aws-env': { AWS_ACCESS_KEY_ID: 'AKIA', AWS_REGION: 'eu-west-1' }, keys: { token: 't0k3n' } };
  const secret = async (name: string): Promise<Record<string, string> | undefined> => secrets[name];
  const POD = { name: 'k8or-pod-0', namespace: 'k8or-system' };

  it('envFrom Secrets first, then env values and Secret keys', async () => {
    const env = await containerEnv({
      args: [],
      envFrom: [{ secretRef: { name: 'aws-env' } }, { secretRef: { name: 'absent', optional: true } }],
      env: [
        { name: 'AWS_REGION', value: 'us-east-1' },
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'keys', key: 'token' } } },
        { name: 'K8OR_SHARD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
    }, secret, POD);
    assert.deepEqual(env, { AWS_ACCESS_KEY_ID: 'AKIA', AWS_REGION: 'us-east-1', TOKEN: 't0k3n', K8OR_SHARD_NAME: 'k8or-pod-0' });
  });

  it('refuses what a process cannot be given as the Pod would: a missing Secret, a field of the Pod it does not have', async () => {
    await assert.rejects(containerEnv({ args: [], envFrom: [{ secretRef: { name: 'absent' } }] }, secret, POD), /Secret absent does not exist/);
    await assert.rejects(containerEnv({ args: [], env: [{ name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }] }, secret, POD), /env IP: .* is not resolved/);
  });
});
