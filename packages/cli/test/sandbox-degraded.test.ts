import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitFor } from '@k8or/core/testing';
import { k8or, startK8or } from './support.ts';

const run = promisify(execFile);
const bucketExample = fileURLToPath(new URL('../../../examples/sandbox/bucket.yaml', import.meta.url));

describe('k8or sandbox with a backend that cannot start, and k8or plan against it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-degraded-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reports it with the fix, keeps the rest running, and stops cleanly on Ctrl-C', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    // No Java where DynamoDB Local looks for it.
    const sandbox = startK8or(['sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--log-file', join(dir, 'sandbox.log')], { ...process.env, JAVA_HOME: join(dir, 'no-java') });
    try {
      await waitFor('the sandbox is ready', () => {
        if (sandbox.child.exitCode !== null) throw new Error(`k8or sandbox exited early:\n${sandbox.output()}`);
        return sandbox.output().includes('k8or sandbox is ready.');
      }, 180_000);
      assert.match(sandbox.output(), /FAILED {3}DynamoDB Local: install Java 17/);
      assert.match(sandbox.output(), /ready {4}AWS backends/);
      const env = { ...process.env, KUBECONFIG: kubeconfig };
      await run('kubectl', ['apply', '-f', bucketExample], { env, timeout: 120_000 });
      await run('kubectl', ['wait', '--for=condition=Ready', 'bucket/photos', '--timeout=90s'], { env, timeout: 120_000 });

      // k8or plan and import against the running sandbox, with no --cluster-id: the sandbox's id is the
      // operator's default (kube-system's uid), so plan recognises the Bucket it made as this cluster's;
      // import skips it, as the object photos names it.
      const fresh = join(dir, 'fresh.yaml');
      writeFileSync(fresh, readFileSync(bucketExample, 'utf8').replace('name: photos', 'name: thumbnails'));
      const plan = await k8or(['plan', '-f', bucketExample, '-f', fresh], { env });
      assert.equal(plan.code, 0, plan.stdout + plan.stderr);
      assert.match(plan.stdout, /Bucket default\/photos: no change "[a-z0-9-]+" \(ProviderConfig default\)/);
      assert.match(plan.stdout, /Bucket default\/thumbnails: create "[a-z0-9-]+" \(ProviderConfig default\)/);
      const imported = await k8or(['import', '--provider-config', 'default', '--kinds', 'Bucket'], { env });
      assert.equal(imported.code, 0, imported.stdout + imported.stderr);
      assert.match(imported.stderr, /Bucket "[a-z0-9-]+" is already named by Bucket default\/photos \(one object per cloud resource\); skipped/);

      sandbox.child.kill('SIGINT');
      assert.equal(await sandbox.exited, 0, sandbox.output());
      assert.match(sandbox.output(), /stopping\.\.\.\nstopped\.\n/);
    } finally {
      if (sandbox.child.exitCode === null) sandbox.child.kill('SIGKILL');
    }
  });
});
