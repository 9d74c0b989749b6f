import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import type { LocalStackEndpoints } from '@k8or/cli';
import { KubeConfig } from '@kubernetes/client-node';
import { k8or, k8orBin } from './support.ts';

const run = promisify(execFile);
/** What the sandbox's Secrets hold: none of it may appear in a trace. */
const awsCredentials = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one' };
const azuriteKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
/** A well-formed account key Azurite does not know: every request is refused. */
const wrongAzureKey = Buffer.from('this is not the devstoreaccount1 key, azurite refuses it!!').toString('base64');
const SECRETS = [awsCredentials.secretAccessKey, azuriteKey, wrongAzureKey];

interface Problem {
  code: string;
  what: string;
  todo: string;
}
interface Report {
  object: { kind: string; namespace?: string; name: string; deleting?: { since: string; finalizers: string[] } };
  conditions: { type: string; status: string; reason?: string; message?: string }[];
  providerConfig?: { name: string; provider?: string; target?: Record<string, string>; recordedTarget?: Record<string, string>; targetMatches?: boolean; targets?: Record<string, Record<string, string>> };
  credentials?: { source: string; secret?: { namespace: string; name: string; found: boolean; keys?: string[] } };
  cloud?: { externalName?: string; read: string; why?: string; exists?: boolean; ownerTags?: Record<string, string>; ownership?: { verdict: string; proof?: string } };
  schedule?: { period: string; source: string };
  events: { type: string; reason: string; message: string }[];
  outputs?: { configMap: string; found: boolean; data?: Record<string, string> };
  problems: Problem[];
}

const bucket = (name: string, providerConfig: string, extra = ''): string => `---
apiVersion: k8or.io/v1alpha1
kind: Bucket
metadata: { name: ${name}, namespace: default }
spec:
  providerConfigRef: { name: ${providerConfig} }
${extra}`;
const protectedTable = (name: string, providerConfig: string): string => `---
apiVersion: k8or.io/v1alpha1
kind: Table
metadata: { name: ${name}, namespace: default }
spec:
  providerConfigRef: { name: ${providerConfig} }
  partitionKey: { name: id, type: string }
  deletionProtection: true
`;

/**
 * `k8or trace` against `k8or sandbox`, as a user runs both: on AWS, GCP and Azure, an object that
 * is Ready, one that fails (a bucket someone else made; credentials the cloud refuses) and one
 * whose delete is blocked. Human and `-o json` output hold the same facts, and no secret.
 */
describe('k8or trace: why is this object (not) Ready, on every cloud', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-trace-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const env = { ...process.env, KUBECONFIG: kubeconfig };
  let child: ChildProcess;
  let output = '';
  let endpoints: LocalStackEndpoints;

  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', args, { env, timeout: 120_000 })).stdout;
  const apply = (manifest: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const p = spawn('kubectl', ['apply', '-f', '-'], { env });
      let text = '';
      p.stdout.on('data', (c: Buffer) => (text += c.toString()));
      p.stderr.on('data', (c: Buffer) => (text += c.toString()));
      p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`kubectl apply failed: ${text}`))));
      p.stdin.end(manifest);
    });
  /** Waits until a condition of the object has the reason (kubectl wait, as a user would). */
  const waitReason = (ref: string, type: string, reason: string): Promise<string> =>
    kubectl('wait', `--for=jsonpath={.status.conditions[?(@.type=="${type}")].reason}=${reason}`, ref, '--timeout=120s');

  /** `k8or trace` in both formats; checks the exit code, that the tree says what the JSON says, and that no secret shows. */
  /**
   * The tree and the JSON of one object, checked to tell the same facts. They are two runs against
   * a live operator, which may act on the object between them (an Event, a condition): a pair that
   * differs is taken again, up to three times.
   */
  async function trace(...args: string[]): Promise<{ text: string; report: Report }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await traceOnce(...args);
      } catch (error) {
        if (attempt >= 3 || !(error instanceof assert.AssertionError)) throw error;
      }
    }
  }

  async function traceOnce(...args: string[]): Promise<{ text: string; report: Report }> {
    const human = await k8or(['trace', ...args], { env });
    assert.equal(human.code, 0, human.stdout + human.stderr);
    const json = await k8or(['trace', ...args, '-o', 'json'], { env });
    assert.equal(json.code, 0, json.stdout + json.stderr);
    const report = JSON.parse(json.stdout) as Report;
    for (const secret of SECRETS) {
      assert.ok(!human.stdout.includes(secret) && !json.stdout.includes(secret), `a credential shows in the trace of ${args.join(' ')}`);
    }
    assert.doesNotMatch(human.stdout + json.stdout, /https?:\/\/[^\s"]*\?/, 'no URL with a query string');
    // The same facts: every condition, problem and Event of the JSON is in the tree.
    for (const c of report.conditions) assert.ok(human.stdout.includes(`${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}`), `condition ${c.type} in the tree:\n${human.stdout}`);
    for (const p of report.problems) {
      assert.ok(human.stdout.includes(p.what), `problem "${p.what}" in the tree:\n${human.stdout}`);
      assert.ok(human.stdout.includes(`to do: ${p.todo}`), `its remedy in the tree:\n${human.stdout}`);
    }
    for (const e of report.events) assert.ok(human.stdout.includes(`${e.type} ${e.reason}`), `Event ${e.reason} in the tree`);
    if (report.cloud?.externalName) assert.ok(human.stdout.includes(`Cloud resource "${report.cloud.externalName}"`));
    if (report.cloud?.ownership) assert.ok(human.stdout.includes(`whose: ${report.cloud.ownership.verdict}`));
    return { text: human.stdout, report };
  }

  before(async () => {
    child = spawn(process.execPath, [k8orBin, 'sandbox', '--port', '0', '--kubeconfig', kubeconfig, '--log-file', join(dir, 'sandbox.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 180_000;
    while (!output.includes('k8or sandbox is ready.')) {
      if (child.exitCode !== null) throw new Error(`k8or sandbox exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`k8or sandbox did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    endpoints = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints;

    // Buckets someone else made, outside k8or.
    const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials: awsCredentials });
    await s3.send(new CreateBucketCommand({ Bucket: 'someone-elses-aws' }));
    s3.destroy();
    await new Storage({ apiEndpoint: endpoints.gcp.gcs, projectId: 'k8or-sandbox' }).createBucket('someone-elses-gcp');
    await new BlobServiceClient(endpoints.azurite.blob, new StorageSharedKeyCredential('devstoreaccount1', azuriteKey)).getContainerClient('someone-elses-azure').create();

    const wrongSecret = `apiVersion: v1\nkind: Secret\nmetadata: { name: azure-wrong, namespace: k8or-system }\nstringData: { accountKey: "${wrongAzureKey}" }\n`;
    const refusedConfig = `---\napiVersion: k8or.io/v1alpha1\nkind: ProviderConfig\nmetadata: { name: refused-azure }\nspec:\n  provider: azure\n  storageAccount: devstoreaccount1\n  endpoints: { bucket: "${endpoints.azurite.blob}", table: "${endpoints.azurite.table}" }\n  credentials: { source: Secret, secretRef: { namespace: k8or-system, name: azure-wrong } }\n`;
    // A copy of the default ProviderConfig, to be pointed elsewhere once its Bucket exists.
    const moving = `---\napiVersion: k8or.io/v1alpha1\nkind: ProviderConfig\nmetadata: { name: moving-aws }\nspec:\n  provider: aws\n  region: us-east-1\n  endpoints: { bucket: "${endpoints.s3}" }\n  credentials: { source: Secret, secretRef: { namespace: k8or-system, name: aws-credentials } }\n`;
    await apply(wrongSecret + refusedConfig + moving);
    await apply(
      bucket('aws-ready', 'default', '  writeOutputsTo: { name: aws-ready-outputs }\n') +
        bucket('aws-foreign', 'default', '  name: someone-elses-aws\n') +
        protectedTable('aws-keep', 'default') +
        bucket('gcp-ready', 'local-gcp', '  writeOutputsTo: { name: gcp-ready-outputs }\n') +
        bucket('gcp-foreign', 'local-gcp', '  name: someone-elses-gcp\n') +
        protectedTable('gcp-keep', 'local-gcp') +
        bucket('azure-ready', 'local-azure', '  writeOutputsTo: { name: azure-ready-outputs }\n') +
        bucket('azure-refused', 'refused-azure') +
        bucket('azure-foreign', 'local-azure', '  name: someone-elses-azure\n') +
        protectedTable('azure-keep', 'local-azure') +
        bucket('aws-drift', 'default', '  versioning: true\n') +
        bucket('gcp-drift', 'local-gcp', '  versioning: true\n') +
        bucket('azure-drift', 'local-azure', '  publicAccess: Blocked\n') +
        bucket('aws-moved', 'moving-aws'),
    );
    const made = ['bucket/aws-ready', 'bucket/gcp-ready', 'bucket/azure-ready', 'table/aws-keep', 'table/gcp-keep', 'table/azure-keep', 'bucket/aws-drift', 'bucket/gcp-drift', 'bucket/azure-drift', 'bucket/aws-moved'];
    await kubectl('wait', '--for=condition=Ready', ...made, '--timeout=120s');
    await kubectl('delete', 'table', 'aws-keep', 'gcp-keep', 'azure-keep', '--wait=false');
  });

  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [cloud, provider] of [['aws', 'aws'], ['gcp', 'gcp'], ['azure', 'azure']] as const) {
    it(`${cloud}: a Ready Bucket: conditions, target, the cloud resource ours, outputs, no problem`, async () => {
      await kubectl('wait', '--for=condition=Synced', `bucket/${cloud}-ready`, '--timeout=120s');
      const { text, report } = await trace(`bucket/${cloud}-ready`);
      assert.match(text, new RegExp(`^Bucket default/${cloud}-ready\\n`));
      assert.equal(report.conditions.find((c) => c.type === 'Ready')?.status, 'True');
      assert.equal(report.providerConfig?.provider, provider);
      assert.equal(report.providerConfig?.target?.provider, provider);
      assert.equal(report.cloud?.read, 'done');
      assert.equal(report.cloud?.exists, true);
      assert.equal(report.cloud?.ownership?.verdict, 'ours');
      assert.equal(report.outputs?.found, true);
      assert.equal(report.outputs?.data?.externalName, report.cloud?.externalName);
      assert.ok(report.events.some((e) => e.reason === 'CreatedExternalResource'), JSON.stringify(report.events));
      assert.deepEqual(report.problems, []);
      assert.match(text, /Problems: none found/);
      assert.match(text, /Resync\n.*every 1h/);
      if (report.credentials?.secret) {
        assert.equal(report.credentials.secret.found, true);
        assert.match(text, /\(values not shown\)/);
      }
    });

    it(`${cloud}: a Table whose delete is blocked by deletion protection: deleting, the finalizer held, how to let it go`, async () => {
      await waitReason(`table/${cloud}-keep`, 'Synced', 'DeletionBlocked');
      const { text, report } = await trace('table', `${cloud}-keep`, '-n', 'default');
      assert.deepEqual(report.object.deleting?.finalizers, ['k8or.io/finalizer']);
      assert.match(text, /deleting since .*finalizers: k8or\.io\/finalizer/);
      const blocked = report.problems.find((p) => p.code === 'deletion-blocked');
      assert.ok(blocked, JSON.stringify(report.problems));
      assert.match(blocked.what, /^deletion blocked: .*deletion ?protection/i);
      if (cloud === 'azure') {
        // Azure has no protection on a table: k8or enforces the spec's own at each delete try, so lowering the spec lets it go.
        assert.match(blocked.todo, /set spec\.deletionProtection: false \(kubectl patch table\/azure-keep -n default/);
      } else {
        // DynamoDB and Bigtable hold the protection themselves, and a deleting object's spec edit never reaches the cloud.
        assert.match(blocked.todo, /^spec\.deletionProtection: true asked for it, and k8or never lowers a protection while deleting/);
        assert.match(blocked.todo, /turn deletion protection off on the cloud resource yourself/);
        assert.match(blocked.todo, new RegExp(`kubectl annotate table/${cloud}-keep -n default k8or\\.io/deletion-policy=Retain`));
        assert.doesNotMatch(blocked.todo, /kubectl patch/);
      }
      assert.equal(report.cloud?.exists, true);
    });
  }

  it('aws, gcp and azure: a Bucket naming a bucket someone else made: not ours, and how to adopt it', async () => {
    for (const cloud of ['aws', 'gcp', 'azure']) {
      await waitReason(`bucket/${cloud}-foreign`, 'Synced', 'NotOwned');
      const { report } = await trace(`buckets.k8or.io/${cloud}-foreign`);
      assert.equal(report.cloud?.exists, true);
      assert.equal(report.cloud?.ownership?.verdict, 'unproven');
      const problem = report.problems.find((p) => p.code === 'not-owned');
      assert.ok(problem, JSON.stringify(report.problems));
      assert.match(problem.what, new RegExp(`not ours: "someone-elses-${cloud}" exists`));
      assert.match(problem.todo, /add k8or\.io\/adopt=true if you mean to adopt it/);
    }
  });

  it('azure: credentials the cloud refuses: the Secret named, its keys but never its values, what to check', async () => {
    await kubectl('wait', '--for=condition=Synced=False', 'bucket/azure-refused', '--timeout=120s');
    const { text, report } = await trace('bkt/azure-refused');
    assert.deepEqual(report.credentials, { source: 'Secret', secret: { namespace: 'k8or-system', name: 'azure-wrong', found: true, keys: ['accountKey'] } });
    assert.equal(report.cloud?.read, 'failed');
    const problem = report.problems.find((p) => p.code === 'credentials-refused');
    assert.ok(problem, `${JSON.stringify(report.problems)}\n${text}`);
    assert.match(problem.todo, /^check Secret k8or-system\/azure-wrong keys accountKey/);

    const { text: pcText, report: pcReport } = await trace('providerconfig/refused-azure');
    assert.equal(pcReport.object.kind, 'ProviderConfig');
    assert.equal(pcReport.providerConfig?.targets?.Bucket?.storageAccount, 'devstoreaccount1');
    assert.match(pcText, /Secret k8or-system\/azure-wrong: found, keys accountKey \(values not shown\)/);
  });

  it('aws, gcp and azure: a setting changed in the cloud behind k8or\'s back: the live diff, and when k8or sets it back', async () => {
    const name = async (ref: string): Promise<string> => (await kubectl('get', ref, '-o', 'jsonpath={.spec.name}')).trim();
    const change: Record<'aws' | 'gcp' | 'azure', () => Promise<unknown>> = {
      aws: async () => {
        const s3 = new S3Client({ endpoint: endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials: awsCredentials });
        await s3.send(new PutBucketVersioningCommand({ Bucket: await name('bucket/aws-drift'), VersioningConfiguration: { Status: 'Suspended' } }));
        s3.destroy();
      },
      gcp: async () => await new Storage({ apiEndpoint: endpoints.gcp.gcs, projectId: 'k8or-sandbox' }).bucket(await name('bucket/gcp-drift')).setMetadata({ versioning: { enabled: false } }),
      azure: async () => {
        const blobs = new BlobServiceClient(endpoints.azurite.blob, new StorageSharedKeyCredential('devstoreaccount1', azuriteKey));
        await blobs.getContainerClient(await name('bucket/azure-drift')).setAccessPolicy('container');
      },
    };

    for (const [cloud, field] of [['aws', 'spec.versioning'], ['gcp', 'spec.versioning'], ['azure', 'spec.publicAccess']] as const) {
      // The operator may set the cloud back at any moment (any requeue repairs drift): then the change is made again.
      let report: Report | undefined;
      for (let attempt = 1; attempt <= 3 && !report?.problems.some((p) => p.code === 'drift'); attempt++) {
        await change[cloud]();
        ({ report } = await trace(`bucket/${cloud}-drift`));
      }
      assert.ok(report);
      const problem = report.problems.find((p) => p.code === 'drift');
      assert.ok(problem, `${cloud}: ${JSON.stringify(report)}`);
      assert.ok(problem.what.includes(field), problem.what);
      assert.match(problem.todo, /k8or sets the cloud back at its next check \(every 1h\); to do it now, change any annotation \(kubectl annotate bucket\/.*-drift -n default/);
      assert.equal(report.schedule?.source, 'operator-default');
    }
  });

  it('aws: a ProviderConfig pointed elsewhere after the Bucket was made: the target pinned, no cloud call, move it back', async () => {
    // An S3 bucket's name is global and its region its own: what moves a Bucket's client is its endpoint.
    await kubectl('patch', 'providerconfig/moving-aws', '--type', 'merge', '-p', '{"spec":{"endpoints":{"bucket":"http://127.0.0.1:9"}}}');
    const s3 = new URL(endpoints.s3);
    const madeAt = `${s3.protocol}//${s3.host}${s3.pathname.replace(/\/+$/, '')}`;
    const { text, report } = await trace('bucket/aws-moved');
    assert.equal(report.providerConfig?.recordedTarget?.endpoint, madeAt);
    assert.equal(report.providerConfig?.recordedTarget?.provider, 'aws');
    assert.equal(report.providerConfig?.target?.endpoint, 'http://127.0.0.1:9');
    assert.equal(report.providerConfig?.targetMatches, false);
    assert.equal(report.cloud?.read, 'skipped');
    const atCreation = text.split('\n').find((line) => line.includes('target at creation: '));
    assert.ok(atCreation?.includes(`endpoint=${madeAt}`) && atCreation.endsWith(' (DIFFERENT)'), text);
    const problem = report.problems.find((p) => p.code === 'target-changed');
    assert.ok(problem, JSON.stringify(report.problems));
    assert.match(problem.what, /^ProviderConfig "moving-aws" now points elsewhere \(target pinned\)/);
    assert.ok(problem.todo.startsWith(`move ProviderConfig "moving-aws" back to `) && problem.todo.includes(`endpoint=${madeAt}`), problem.todo);
  });

  it('the kubeconfig context, -n, and usage: a missing object exits 1, a bad KIND/NAME exits 2', async () => {
    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    const { KUBECONFIG: _unused, ...noKubeconfig } = env;
    const viaContext = await k8or(['trace', 'bucket/aws-ready', '--kubeconfig', kubeconfig, '--context', config.getCurrentContext(), '-o', 'json'], { env: noKubeconfig });
    assert.equal(viaContext.code, 0, viaContext.stderr);
    assert.equal((JSON.parse(viaContext.stdout) as Report).object.name, 'aws-ready');

    const badContext = await k8or(['trace', 'bucket/aws-ready', '--context', 'nowhere'], { env });
    assert.equal(badContext.code, 2);
    assert.match(badContext.stderr, /--context nowhere: no such context in the kubeconfig/);
    const missing = await k8or(['trace', 'bucket/aws-ready', '-n', 'elsewhere'], { env });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Bucket elsewhere\/aws-ready not found/);
    const badKind = await k8or(['trace', 'pod/aws-ready'], { env });
    assert.equal(badKind.code, 2);
    assert.match(badKind.stderr, /unknown kind "pod"/);
  });
});
