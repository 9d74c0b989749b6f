// The webhook's worker thread loads no @kubernetes/client-node: in `k8or sandbox` every thread that
// imports it pays for its generated API client and undici in RSS, for nothing core's KubeAccess
// does not do. Module hooks are per thread, so the worker is run in a child process preloaded with
// a resolve hook (a worker inherits its process's --import) that logs each thread's modules.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { installCrds, loadKubeAccess } from '@k8or/core';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

describe('the webhook worker thread', () => {
  let sandbox: Sandbox;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'k8or-worker-modules-'));
    sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error' });
    await installCrds(await loadKubeAccess(join(dir, 'kubeconfig'), {}));
  });
  after(async () => {
    await sandbox?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('loads no @kubernetes/client-node, though its parent holds a client-node KubeConfig', async () => {
    const log = join(dir, 'resolved.log');
    const helper = (name: string) => fileURLToPath(new URL(`./helpers/${name}`, import.meta.url));
    await promisify(execFile)(process.execPath, ['--import', helper('record-resolved.ts'), helper('webhook-worker-child.ts'), join(dir, 'kubeconfig')], {
      env: { ...process.env, K8OR_RESOLVED_LOG: log },
      timeout: 120_000,
    });
    const inWorker = (await readFile(log, 'utf8'))
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('0 '))
      .map((line) => line.slice(line.indexOf(' ') + 1));
    assert.ok(inWorker.some((url) => url.endsWith('/webhook/dist/server/worker-main.js')), 'the hook sees the worker thread');
    assert.ok(inWorker.some((url) => url.includes('/providers/aws/')), 'the worker imported the provider');
    assert.deepEqual(inWorker.filter((url) => url.includes('/@kubernetes/client-node/')), []);
  });
});
