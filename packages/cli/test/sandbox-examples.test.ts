// Every manifest under examples/sandbox/ reaches Ready=True and Synced=True in `k8or sandbox`, as a
// new user applies them; and the sandbox refuses AWS credentials it did not issue.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { LocalStackEndpoints } from '@k8or/cli';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/k8or.js', import.meta.url));
const examples = fileURLToPath(new URL('../../../examples/sandbox/', import.meta.url));

/** Every manifest file under a folder, recursively, in a stable order. */
function manifestsUnder(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .flatMap((name) => {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) return manifestsUnder(path);
      return /\.ya?ml$/.test(name) ? [path] : [];
    });
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface ManagedObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: { providerConfigRef?: { name?: string } };
  status?: { conditions?: Condition[] };
}

const conditionOf = (object: ManagedObject | undefined, type: string): Condition | undefined => object?.status?.conditions?.find((c) => c.type === type);
const describeConditions = (object: ManagedObject | undefined): string =>
  (object?.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`).join('; ') || 'no conditions';

describe('k8or sandbox: every example manifest reaches Ready and Synced', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-examples-'));
  const kubeconfig = join(dir, 'kubeconfig');
  let child: ChildProcess;
  let output = '';
  let endpoints: LocalStackEndpoints;
  const kubectl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 120_000 });
    return stdout;
  };
  const kubectlApply = (manifest: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const p = spawn('kubectl', ['apply', '-f', '-'], { env: { ...process.env, KUBECONFIG: kubeconfig } });
      let text = '';
      p.stdout.on('data', (c: Buffer) => (text += c.toString()));
      p.stderr.on('data', (c: Buffer) => (text += c.toString()));
      p.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`kubectl apply: ${text}`))));
      p.stdin.end(manifest);
    });
  const get = async (kind: string, name: string, namespace = 'default'): Promise<ManagedObject | undefined> => {
    try {
      return JSON.parse(await kubectl('get', kind.toLowerCase(), name, '-n', namespace, '-o', 'json')) as ManagedObject;
    } catch {
      return undefined;
    }
  };
  /** Polls until `done` holds for the object, or the deadline passes; answers the last object seen. */
  const waitForObject = async (kind: string, name: string, done: (o: ManagedObject | undefined) => boolean, timeoutMs = 240_000): Promise<ManagedObject | undefined> => {
    const deadline = Date.now() + timeoutMs;
    let object = await get(kind, name);
    while (!done(object) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      object = await get(kind, name);
    }
    return object;
  };

  before(async () => {
    child = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--log-file', join(dir, 'sandbox.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 180_000;
    while (!output.includes('k8or sandbox is ready.')) {
      if (child.exitCode !== null) throw new Error(`k8or sandbox exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`k8or sandbox did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    endpoints = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints;
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 60_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the local AWS credentials in sandbox.json, readable by its owner only', () => {
    assert.deepEqual(endpoints.credentials.aws, { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one', region: 'us-east-1' });
    assert.equal(statSync(join(dir, 'sandbox.json')).mode & 0o077, 0);
  });

  for (const file of manifestsUnder(examples)) {
    const name = relative(examples, file);
    it(`examples/sandbox/${name}: every object reaches Ready=True and Synced=True`, async (t) => {
      const objects = parseAllDocuments(readFileSync(file, 'utf8')).map((document) => document.toJS() as ManagedObject).filter((o) => o && (o.kind === 'Bucket' || o.kind === 'Table'));
      assert.ok(objects.length > 0, `${name} holds a Bucket or a Table`);
      const needsBigtable = objects.some((o) => o.kind === 'Table' && o.spec?.providerConfigRef?.name === 'local-gcp');
      if (needsBigtable && endpoints.gcp.bigtable === undefined) return t.skip(`the Bigtable emulator is not running here (${endpoints.gcp.bigtableNote})`);
      await kubectl('apply', '-f', file);
      const failures: string[] = [];
      for (const object of objects) {
        const seen = await waitForObject(object.kind, object.metadata.name, (o) => conditionOf(o, 'Ready')?.status === 'True' && conditionOf(o, 'Synced')?.status === 'True');
        if (conditionOf(seen, 'Ready')?.status !== 'True' || conditionOf(seen, 'Synced')?.status !== 'True') failures.push(`${object.kind} ${object.metadata.name}: ${describeConditions(seen)}`);
      }
      assert.deepEqual(failures, []);
    });
  }

  describe('refuses AWS credentials it did not issue, and says so in status', () => {
    const provider = async (name: string, accessKeyId: string, secretAccessKey: string): Promise<void> => {
      const defaults = JSON.parse(await kubectl('get', 'providerconfig', 'default', '-o', 'json')) as { spec: Record<string, unknown> };
      await kubectlApply(
        JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'k8or-system' }, type: 'Opaque', stringData: { accessKeyId, secretAccessKey } }),
      );
      await kubectlApply(
        JSON.stringify({
          apiVersion: 'k8or.io/v1alpha1',
          kind: 'ProviderConfig',
          metadata: { name },
          spec: { ...defaults.spec, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name } } },
        }),
      );
    };
    const refused = async (kind: 'Bucket' | 'Table', name: string, providerConfig: string, code: RegExp): Promise<void> => {
      const spec = kind === 'Bucket' ? {} : { partitionKey: { name: 'id', type: 'string' } };
      await kubectlApply(JSON.stringify({ apiVersion: 'k8or.io/v1alpha1', kind, metadata: { name, namespace: 'default' }, spec: { ...spec, providerConfigRef: { name: providerConfig } } }));
      const seen = await waitForObject(kind, name, (o) => code.test(conditionOf(o, 'Synced')?.message ?? ''));
      assert.match(conditionOf(seen, 'Synced')?.message ?? '', code, describeConditions(seen));
      assert.equal(conditionOf(seen, 'Synced')?.status, 'False');
      assert.notEqual(conditionOf(seen, 'Ready')?.status, 'True');
    };

    it('a wrong secret: SignatureDoesNotMatch from S3, InvalidSignatureException from DynamoDB', async () => {
      await provider('aws-wrong-secret', 'AKIASANDBOXEXAMPLE00', 'not-the-sandbox-secret');
      await refused('Bucket', 'wrong-secret-bucket', 'aws-wrong-secret', /SignatureDoesNotMatch/);
      await refused('Table', 'wrong-secret-table', 'aws-wrong-secret', /InvalidSignatureException/);
    });

    it('an access key it never issued: InvalidAccessKeyId from S3, UnrecognizedClientException from DynamoDB', async () => {
      await provider('aws-unknown-key', 'AKIANOTTHESANDBOXKEY', 'sandbox-secret-access-key-not-a-real-one');
      await refused('Bucket', 'unknown-key-bucket', 'aws-unknown-key', /InvalidAccessKeyId/);
      await refused('Table', 'unknown-key-table', 'aws-unknown-key', /UnrecognizedClientException/);
    });
  });
});
