import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dump as toYaml, load as parseYaml } from 'js-yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeRest, corePath, kubeAccessFromText, loadKubeAccess } from '@k8or/core';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

/** The sandbox's kubeconfig as an object, to vary its user and cluster entries. */
type Kubeconfig = { clusters: { cluster: Record<string, unknown> }[]; users: { user: Record<string, unknown> }[] };

describe('loadKubeAccess: a kubeconfig without client-node', () => {
  let sandbox: Sandbox;
  let dir: string;

  before(async () => {
    sandbox = await startSandbox();
    dir = mkdtempSync(join(tmpdir(), 'k8or-kubeconfig-'));
  });
  after(async () => {
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function writeKubeconfig(name: string, change: (config: Kubeconfig) => void): string {
    const config = parseYaml(sandbox.kubeconfig) as Kubeconfig;
    change(config);
    const path = join(dir, name);
    writeFileSync(path, toYaml(config));
    return path;
  }

  /** Reads kube-system through KubeRest with the loaded access: server, CA and credentials all used. */
  async function readsTheCluster(file: string): Promise<boolean> {
    const rest = new KubeRest(await loadKubeAccess(file, {}));
    try {
      return (await rest.get(corePath('namespaces', undefined, 'kube-system'))) !== undefined;
    } finally {
      rest.close();
    }
  }

  it('connects with the CA data and bearer token of the current context', async () => {
    const path = writeKubeconfig('token', () => undefined);
    const access = await loadKubeAccess(path, {});
    assert.equal(access.getCurrentCluster()?.server, sandbox.url);
    assert.equal(access.constructor.name === 'KubeConfig', false, 'read without client-node');
    assert.equal(await readsTheCluster(path), true);
  });

  it('reads a tokenFile and a certificate-authority file relative to the kubeconfig, again on every request', async () => {
    writeFileSync(join(dir, 'ca.crt'), sandbox.caPem);
    writeFileSync(join(dir, 'token'), 'not-the-token\n');
    const path = writeKubeconfig('files', (config) => {
      const cluster = config.clusters[0]!.cluster;
      delete cluster['certificate-authority-data'];
      cluster['certificate-authority'] = 'ca.crt';
      const user = config.users[0]!.user;
      delete user['token'];
      user['tokenFile'] = 'token';
    });
    await assert.rejects(readsTheCluster(path), /401/);
    writeFileSync(join(dir, 'token'), `${sandbox.token}\n`);
    assert.equal(await readsTheCluster(path), true, 'the rotated token is read');
  });

  it('refuses an unknown CA unless insecure-skip-tls-verify says so', async () => {
    const untrusted = writeKubeconfig('untrusted', (config) => {
      delete config.clusters[0]!.cluster['certificate-authority-data'];
    });
    await assert.rejects(readsTheCluster(untrusted), /certificate/);
    const insecure = writeKubeconfig('insecure', (config) => {
      delete config.clusters[0]!.cluster['certificate-authority-data'];
      config.clusters[0]!.cluster['insecure-skip-tls-verify'] = true;
    });
    assert.equal(await readsTheCluster(insecure), true);
  });

  it('hands a user with an exec plugin to client-node\'s KubeConfig', async () => {
    const path = writeKubeconfig('exec', (config) => {
      config.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'echo', args: ['{}'] } };
    });
    const access = await loadKubeAccess(path, {});
    assert.equal(access.constructor.name, 'KubeConfig');
    assert.equal(access.getCurrentCluster()?.server, sandbox.url);
  });

  it('reads kubeconfig text (client-node\'s exportConfig, fields set to null) without client-node, and hands an exec user to it', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    const access = await kubeAccessFromText(kubeConfig.exportConfig());
    assert.notEqual(access.constructor.name, 'KubeConfig');
    const rest = new KubeRest(access);
    try {
      assert.ok(await rest.get(corePath('namespaces', undefined, 'kube-system')));
    } finally {
      rest.close();
    }

    const nulls = parseYaml(sandbox.kubeconfig) as Kubeconfig;
    nulls.users[0]!.user = { ...nulls.users[0]!.user, exec: null, 'auth-provider': null };
    nulls.clusters[0]!.cluster = { ...nulls.clusters[0]!.cluster, 'proxy-url': null };
    assert.notEqual((await kubeAccessFromText(JSON.stringify(nulls))).constructor.name, 'KubeConfig', 'a null field is an absent one');

    const exec = parseYaml(sandbox.kubeconfig) as Kubeconfig;
    exec.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'echo', args: ['{}'] } };
    assert.equal((await kubeAccessFromText(JSON.stringify(exec))).constructor.name, 'KubeConfig');
  });

  it('names the context it cannot find', async () => {
    const path = join(dir, 'broken');
    writeFileSync(path, toYaml({ 'current-context': 'nowhere', contexts: [], clusters: [], users: [] }));
    await assert.rejects(loadKubeAccess(path, {}), /current-context "nowhere" names no context/);
  });
});
