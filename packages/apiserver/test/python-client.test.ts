// Fidelity with a client k8or does not use: the Python kubernetes client (Debian's python3-kubernetes),
// where installed. It lists, creates, gets, patches and deletes a Bucket, and its watch must receive
// ADDED, MODIFIED and DELETED. CI installs nothing with apt: there the test skips and says why.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { allCrds } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { request } from './helpers.ts';
import { pythonWithKubernetes } from './kubectl-helpers.ts';

const python = pythonWithKubernetes();

interface PythonRun {
  listed: string[];
  created: { name: string; uid: string };
  got: { labels: Record<string, string>; versioning: boolean };
  patched: { versioning: boolean; generation: number };
  listedAfterCreate: string[];
  deleted: string;
  events: { type: string; name: string; versioning: boolean }[];
  watchEnded: boolean;
}

// The skip is the test's, not the suite's: node's summary counts a skipped test, not a skipped suite.
const missing = python === undefined ? 'python3-kubernetes is not installed (apt-get install python3-kubernetes)' : false;

describe('the Python kubernetes client against the sandbox', () => {
  let sandbox: Sandbox | undefined;
  let home: string | undefined;

  before(async () => {
    if (missing) return;
    home = await mkdtemp(join(tmpdir(), 'k8or-python-client-'));
    sandbox = await startSandbox({ kubeconfigPath: join(home, 'kubeconfig') });
    for (const crd of allCrds()) {
      const created = await request(sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
      assert.equal(created.status, 201, created.text);
    }
  });

  after(async () => {
    await sandbox?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('lists, creates, gets, patches and deletes a Bucket, and its watch sees ADDED, MODIFIED and DELETED', { skip: missing }, async () => {
    const script = fileURLToPath(new URL('./fixtures/python-client.py', import.meta.url));
    const { stdout } = await promisify(execFile)(python!, [script, join(home!, 'kubeconfig')], { timeout: 180_000, env: { ...process.env, HOME: home! } });
    const run = JSON.parse(stdout) as PythonRun;
    assert.deepEqual(run.listed, []);
    assert.equal(run.created.name, 'py-photos');
    assert.ok(run.created.uid);
    assert.deepEqual(run.got, { labels: { client: 'python' }, versioning: false });
    assert.deepEqual(run.patched, { versioning: true, generation: 2 });
    assert.deepEqual(run.listedAfterCreate, ['py-photos']);
    assert.equal(run.deleted, 'Bucket', 'a custom resource deleted at once comes back as the object, as from kube-apiserver');
    assert.equal(run.watchEnded, true);
    assert.deepEqual(run.events, [
      { type: 'ADDED', name: 'py-photos', versioning: false },
      { type: 'MODIFIED', name: 'py-photos', versioning: true },
      { type: 'DELETED', name: 'py-photos', versioning: true },
    ]);
  });
});
