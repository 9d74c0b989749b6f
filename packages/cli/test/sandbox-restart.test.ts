// `k8or sandbox --data-dir DIR`, stopped and started again, serves the same objects and the same
// cloud state, and creates nothing in the cloud on the second start. A SIGKILL leaves no process and
// no bound port behind.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { HeadBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { waitFor } from '@k8or/core/testing';
import type { LocalStackEndpoints } from '@k8or/cli';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const examples = fileURLToPath(new URL('../../../examples/sandbox/', import.meta.url));
const credentials = { accessKeyId: 'AKIASANDBOXEXAMPLE00', secretAccessKey: 'sandbox-secret-access-key-not-a-real-one' };

interface RunningSandbox {
  child: ChildProcess;
  output: () => string;
  endpoints: LocalStackEndpoints;
}

async function startSandboxCli(dir: string, dataDir: string): Promise<RunningSandbox> {
  // A process group of its own, as a CI runner or a terminal gives it, so a test can SIGKILL the whole group.
  const child = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--kubeconfig', join(dir, 'kubeconfig'), '--log-file', join(dir, 'sandbox.log'), '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Ready when it says so; an exit before that fails at once, with what it printed.
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`k8or sandbox was not ready after 180 s:\n${output}`)), 180_000);
    child.stdout?.on('data', () => {
      if (!output.includes('k8or sandbox is ready.')) return;
      clearTimeout(deadline);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`k8or sandbox exited with ${code}:\n${output}`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return { child, output: () => output, endpoints: JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints };
}

async function stopWith(sandbox: RunningSandbox, signal: NodeJS.Signals): Promise<number | null> {
  if (sandbox.child.exitCode !== null) return sandbox.child.exitCode;
  const exited = new Promise<number | null>((resolve) => sandbox.child.once('exit', (code) => resolve(code)));
  sandbox.child.kill(signal);
  return exited;
}

/** Every process below `pid` (guardians, JVMs, emulators), read from /proc. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function isListening(hostPort: string): Promise<boolean> {
  const url = new URL(hostPort.includes('://') ? hostPort : `http://${hostPort}`);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The k8or_cloud_calls_total samples of the engine, by operation (the SDK's: CreateBucket, DescribeTable, ...). */
async function cloudCalls(probes: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${probes}/metrics`)).text();
  const calls = new Map<string, number>();
  for (const match of text.matchAll(/^k8or_cloud_calls_total\{([^}]*)\} (\d+)/gm)) {
    const operation = /operation="([^"]+)"/.exec(match[1] ?? '')?.[1] ?? '';
    calls.set(operation, (calls.get(operation) ?? 0) + Number(match[2]));
  }
  return calls;
}

/** The create calls among them, by name. */
const creates = (calls: Map<string, number>): string[] => [...calls.keys()].filter((operation) => operation.startsWith('Create')).sort();

describe('k8or sandbox --data-dir, stopped and started again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-cli-restart-'));
  const dataDir = join(dir, 'data');
  const kubeconfig = join(dir, 'kubeconfig');
  const running: RunningSandbox[] = [];
  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 120_000 })).stdout;
  const manifests = ['-f', join(examples, 'bucket.yaml'), '-f', join(examples, 'table.yaml')];
  let bucketName = '';
  let tableName = '';
  let uids = '';

  after(async () => {
    for (const sandbox of running) if (sandbox.child.exitCode === null) sandbox.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the objects, the buckets, the tables and what they hold, and creates nothing in the cloud again', async () => {
    const first = await startSandboxCli(dir, dataDir);
    running.push(first);
    await kubectl('apply', ...manifests);
    await kubectl('wait', '--for=condition=Ready', 'bucket/photos', 'table/orders', '--timeout=120s');
    bucketName = (await kubectl('get', 'bucket', 'photos', '-o', 'jsonpath={.spec.name}')).trim();
    tableName = (await kubectl('get', 'table', 'orders', '-o', 'jsonpath={.spec.name}')).trim();
    uids = await kubectl('get', 'bucket/photos', 'table/orders', '-o', 'jsonpath={.items[*].metadata.uid}');
    const firstCalls = await cloudCalls(first.endpoints.probes);
    assert.deepEqual(creates(firstCalls), ['CreateBucket', 'CreateTable'], 'the first start created the bucket and the table');

    const s3 = new S3Client({ endpoint: first.endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    await s3.send(new PutObjectCommand({ Bucket: bucketName, Key: 'cats/tom.jpg', Body: 'meow' }));
    s3.destroy();
    assert.ok(first.endpoints.dynamodb, 'DynamoDB Local runs');
    const dynamodb = new DynamoDBClient({ endpoint: first.endpoints.dynamodb, region: 'us-east-1', credentials });
    await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: { customerId: { S: 'c-1' }, orderedAt: { N: '20261123' }, total: { N: '42' } } }));
    dynamodb.destroy();
    assert.equal(await stopWith(first, 'SIGTERM'), 0, first.output());

    const second = await startSandboxCli(dir, dataDir);
    running.push(second);
    assert.equal(await kubectl('get', 'bucket/photos', 'table/orders', '-o', 'jsonpath={.items[*].metadata.uid}'), uids, 'the same objects');
    // Both are in sync: the engine looks at them again at their slots of the sandbox's 30 s interval (observe), not at once, and finds them: no create, no new Event.
    await waitFor(
      'the engine to look at the bucket and the table again',
      async () => {
        const calls = await cloudCalls(second.endpoints.probes);
        return (calls.get('GetBucketLocation') ?? 0) > 0 && (calls.get('DescribeTable') ?? 0) > 0;
      },
      120_000,
      250,
    );
    await kubectl('wait', '--for=condition=Ready', 'bucket/photos', 'table/orders', '--timeout=120s');
    const secondCalls = await cloudCalls(second.endpoints.probes);
    assert.deepEqual(creates(secondCalls), [], `no cloud create on the second start: ${JSON.stringify([...secondCalls])}`);
    const events = await kubectl('get', 'events', '--field-selector', 'reason=CreatedExternalResource', '-o', 'jsonpath={.items[*].involvedObject.name}');
    assert.deepEqual(events.split(' ').filter(Boolean).sort(), ['orders', 'photos'], 'one CreatedExternalResource Event each, from the first start');

    const s3Again = new S3Client({ endpoint: second.endpoints.s3, region: 'us-east-1', forcePathStyle: true, credentials });
    await s3Again.send(new HeadBucketCommand({ Bucket: bucketName }));
    assert.deepEqual((await s3Again.send(new ListObjectsV2Command({ Bucket: bucketName }))).Contents?.map((o) => [o.Key, o.Size]), [['cats/tom.jpg', 4]]);
    s3Again.destroy();
    const dynamodbAgain = new DynamoDBClient({ endpoint: second.endpoints.dynamodb, region: 'us-east-1', credentials });
    const item = await dynamodbAgain.send(new GetItemCommand({ TableName: tableName, Key: { customerId: { S: 'c-1' }, orderedAt: { N: '20261123' } } }));
    assert.deepEqual(item.Item?.['total'], { N: '42' });
    dynamodbAgain.destroy();
  });

  it('leaves no process and no bound port behind when its whole process group is killed with SIGKILL', async () => {
    const sandbox = running.at(-1)?.child.exitCode === null ? running.at(-1)! : await startSandboxCli(dir, dataDir);
    if (!running.includes(sandbox)) running.push(sandbox);
    const pid = sandbox.child.pid!;
    const children = descendantsOf(pid);
    assert.ok(children.length > 0, 'the sandbox runs its backends as child processes');
    const { apiServer, webhook, probes, s3, dynamodb, gcp, azurite } = sandbox.endpoints;
    const addresses = [apiServer, webhook, probes, s3, dynamodb, gcp.gcs, gcp.gcsHttps, gcp.bigtable, azurite.blob, azurite.table].filter((a): a is string => typeof a === 'string');
    for (const address of addresses) assert.ok(await isListening(address), `${address} is served`);

    // As CI runners, `timeout -s KILL` and terminal multiplexers kill: every process of the group at once.
    const exited = new Promise<number | null>((resolve) => sandbox.child.once('exit', (code) => resolve(code)));
    process.kill(-pid, 'SIGKILL');
    assert.equal(await exited, null);
    await waitFor('every child process of the sandbox to end', () => children.every((child) => !isRunning(child)), 60_000, 100);
    for (const address of addresses) await waitFor(`${address} to be free`, async () => !(await isListening(address)), 30_000, 100);
  });
});
