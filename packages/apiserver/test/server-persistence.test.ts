// --data-dir: objects, resourceVersions, the CA and the token survive a restart; the bin serves and stops on signals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { eventually, installWidgetCrd, metadataOf, request, startTestSandbox, widget, WIDGETS } from './helpers.ts';

describe('data dir', () => {
  it('keeps objects, CRDs, resourceVersions and credentials across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'k8or-sandbox-'));
    try {
      const first = await startTestSandbox({ dataDir });
      await installWidgetCrd(first.sandbox);
      await request(first.sandbox, 'POST', WIDGETS, { body: widget('kept', { size: 4 }) });
      await request(first.sandbox, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'team' } } });
      await request(first.sandbox, 'POST', '/api/v1/namespaces/team/configmaps', { body: { metadata: { name: 'cfg' }, data: { a: 'b' } } });
      const rvBefore = Number(metadataOf((await request(first.sandbox, 'GET', WIDGETS)).json)['resourceVersion']);
      const { token, caPem } = first.sandbox;
      await first.sandbox.stop();

      const second = await startTestSandbox({ dataDir });
      try {
        assert.equal(second.sandbox.token, token);
        assert.equal(second.sandbox.caPem, caPem);
        const kept = await request(second.sandbox, 'GET', `${WIDGETS}/kept`);
        assert.equal(kept.status, 200, 'the CRD is served again and the widget is back');
        assert.equal(((kept.json?.['spec'] as Record<string, unknown>)['size']), 4);
        const cfg = await request(second.sandbox, 'GET', '/api/v1/namespaces/team/configmaps/cfg');
        assert.deepEqual(cfg.json?.['data'], { a: 'b' });
        const created = await request(second.sandbox, 'POST', WIDGETS, { body: widget('after-restart') });
        assert.ok(Number(metadataOf(created.json)['resourceVersion']) > rvBefore, 'resourceVersions keep increasing');
        const namespaces = await request(second.sandbox, 'GET', '/api/v1/namespaces');
        const names = ((namespaces.json?.['items'] as Array<Record<string, unknown>>) ?? []).map((n) => metadataOf(n)['name']);
        assert.equal(names.filter((n) => n === 'default').length, 1);
      } finally {
        await second.sandbox.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('k8or-apiserver bin', () => {
  it('writes the kubeconfig once serving and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8or-apiserver-bin-'));
    const kubeconfigPath = join(dir, 'kubeconfig');
    const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
    const child = spawn(process.execPath, [cli, '--kubeconfig', kubeconfigPath, '--port', '0', '--data-dir', join(dir, 'data'), '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(() => existsSync(kubeconfigPath), 30_000, 'kubeconfig written');
      const kc = new KubeConfig();
      kc.loadFromString(readFileSync(kubeconfigPath, 'utf8'));
      const list = await kc.makeApiClient(CoreV1Api).listNamespace();
      assert.ok(list.items.some((n) => n.metadata?.name === 'default'));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.ok(existsSync(join(dir, 'data', 'state.json')), 'state saved on stop');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without --kubeconfig', async () => {
    const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
    const child = spawn(process.execPath, [cli], { stdio: 'ignore' });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 2);
  });
});
