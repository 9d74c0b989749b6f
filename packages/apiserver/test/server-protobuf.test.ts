// kubectl 1.3x sends protobuf bodies for `kubectl create namespace|configmap|secret`: the sandbox reads them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { metadataOf, request, startTestSandbox, type TestSandbox } from './helpers.ts';

const run = promisify(execFile);
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

describe('protobuf request bodies and review kinds (kubectl 1.33)', { skip: !existsSync(KUBECTL) && 'kubectl 1.33 not installed' }, () => {
  let t: TestSandbox;
  let dir: string;
  let kubectl: (...args: string[]) => Promise<string>;

  before(async () => {
    t = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), 'k8or-sandbox-pb-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, t.sandbox.kubeconfig);
    kubectl = async (...args) => (await run(KUBECTL, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args])).stdout;
  });
  after(async () => {
    await t.sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a namespace, a configmap and a secret from protobuf', async () => {
    await kubectl('create', 'namespace', 'team-a');
    await kubectl('create', 'configmap', 'settings', '-n', 'team-a', '--from-literal=mode=fast', '--from-literal=level=3');
    await kubectl('create', 'secret', 'generic', 'creds', '-n', 'team-a', '--from-literal=token=s3cr3t');
    const protobufWrites = t.sandbox.requestLog.filter((e) => e.verb === 'create' && e.status === 201);
    assert.equal(protobufWrites.length, 3);

    const ns = await request(t.sandbox, 'GET', '/api/v1/namespaces/team-a');
    assert.equal((ns.json?.['status'] as Record<string, unknown>)['phase'], 'Active');
    assert.equal(metadataOf(ns.json)['generateName'], undefined, 'empty protobuf strings are omitted as in JSON');
    const cm = await request(t.sandbox, 'GET', '/api/v1/namespaces/team-a/configmaps/settings');
    assert.deepEqual(cm.json?.['data'], { mode: 'fast', level: '3' });
    const secret = await request(t.sandbox, 'GET', '/api/v1/namespaces/team-a/secrets/creds');
    assert.equal(secret.json?.['type'], 'Opaque');
    assert.equal(Buffer.from(String((secret.json?.['data'] as Record<string, unknown>)['token']), 'base64').toString(), 's3cr3t');
    const managed = metadataOf(cm.json)['managedFields'] as Array<Record<string, unknown>>;
    assert.equal(managed[0]?.['manager'], 'kubectl-create');
  });

  it('answers the review kinds kubectl auth uses, and serves Services', async () => {
    assert.equal((await kubectl('auth', 'can-i', 'delete', 'namespaces')).trim(), 'yes');
    assert.match(await kubectl('auth', 'whoami'), /Username\s+k8or-sandbox-admin/);
    await kubectl('create', 'service', 'clusterip', 'web', '-n', 'team-a', '--tcp=80:8080');
    const svc = await request(t.sandbox, 'GET', '/api/v1/namespaces/team-a/services/web');
    const spec = svc.json?.['spec'] as Record<string, unknown>;
    assert.deepEqual(spec['ports'], [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }]);
    assert.match(String(spec['clusterIP']), /^10\.96\./);
    assert.match(await kubectl('cluster-info'), /Kubernetes control plane.*is running at/);
    assert.match(await kubectl('get', 'svc', '-n', 'team-a'), /web\s+ClusterIP\s+10\.96\.\d+\.\d+\s+<none>\s+80\/TCP/);
  });

  it('shows them in kubectl get with the usual columns', async () => {
    const out = await kubectl('get', 'configmaps,secrets', '-n', 'team-a');
    assert.match(out, /configmap\/settings\s+2\s+\d+s/);
    assert.match(out, /secret\/creds\s+Opaque\s+1\s+\d+s/);
  });
});

/** protobuf field `number` of wire type 2 (length-delimited). */
function bytesField(number: number, value: Buffer | string): Buffer {
  const data = Buffer.isBuffer(value) ? value : Buffer.from(value);
  const length: number[] = [];
  let n = data.length;
  do {
    length.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n > 0);
  return Buffer.concat([Buffer.from([(number << 3) | 2, ...length]), data]);
}

/** The "k8s\0" envelope around a runtime.Unknown, as client-go's protobuf serializer writes it. */
function protobufEnvelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const typeMeta = Buffer.concat([bytesField(1, apiVersion), bytesField(2, kind)]);
  return Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), bytesField(1, typeMeta), bytesField(2, raw)]);
}

describe('protobuf DeleteOptions (the body of a typed client\'s DELETE, e.g. Helm purging its release Secrets)', () => {
  let t: TestSandbox;
  before(async () => {
    t = await startTestSandbox();
  });
  after(async () => {
    await t.sandbox.stop();
  });

  it('reads the preconditions and the propagation policy', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    await request(t.sandbox, 'POST', path, { body: { metadata: { name: 'release' }, data: { a: 'b' } } });
    const deleteWith = (uid: string): Promise<{ status: number; json: Record<string, unknown> | undefined }> =>
      request(t.sandbox, 'DELETE', `${path}/release`, {
        contentType: 'application/vnd.kubernetes.protobuf',
        body: protobufEnvelope('v1', 'DeleteOptions', Buffer.concat([bytesField(2, bytesField(1, uid)), bytesField(4, 'Background')])),
      });
    const stale = await deleteWith('not-the-uid');
    assert.equal(stale.status, 409, JSON.stringify(stale.json));
    assert.match(String(stale.json?.['message']), /Precondition failed: UID in precondition: not-the-uid/);
    const current = await request(t.sandbox, 'GET', `${path}/release`);
    assert.equal((await deleteWith(String(metadataOf(current.json)['uid']))).status, 200);
    assert.equal((await request(t.sandbox, 'GET', `${path}/release`)).status, 404);
  });
});
