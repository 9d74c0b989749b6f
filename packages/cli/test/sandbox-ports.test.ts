// k8or sandbox --data-dir keeps its backends on the ports it recorded, so the ProviderConfigs (and the
// cloud targets pinned from them) stay the same; a recorded port another process holds is said clearly.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { waitFor } from '@k8or/core/testing';
import { PORTS_FILE, SandboxPorts, type LocalStackEndpoints, type PortTaken } from '@k8or/cli';
import { startK8or, type Running } from './support.ts';

/** A server of "another process" on 127.0.0.1, holding a port. */
async function holdPort(port = 0): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

/** Where the kernel's ephemeral ports begin here (the ports it gives port-0 listeners and outgoing connections). */
const ephemeralFrom = existsSync('/proc/sys/net/ipv4/ip_local_port_range') ? Math.min(32_768, Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])) : 32_768;

const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
const readPorts = (dataDir: string): Record<string, number> => JSON.parse(readFileSync(join(dataDir, PORTS_FILE), 'utf8')) as Record<string, number>;

describe('SandboxPorts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-cli-ports-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives no port without a data dir, and writes nothing', async () => {
    const ports = new SandboxPorts(undefined);
    assert.equal(await ports.portFor('s3'), undefined);
    ports.listening('s3', 'http://127.0.0.1:4321');
    ports.save();
    const again = new SandboxPorts(undefined);
    assert.equal(await again.portFor('s3'), undefined);
  });

  it('records the ports of a run and gives them back on the next start', async () => {
    const dataDir = join(dir, 'records');
    const first = new SandboxPorts(dataDir);
    const lasting = await first.portFor('s3');
    assert.ok(lasting !== undefined && lasting >= 20_000 && lasting < ephemeralFrom, `nothing recorded yet: a free port below the ephemeral range (${ephemeralFrom}), got ${lasting}`);
    const { server, port } = await holdPort();
    await close(server);
    first.listening('s3', `http://127.0.0.1:${port}`);
    first.listening('bigtable', `127.0.0.1:${port + 1}`);
    first.listening('azuriteBlob', `http://127.0.0.1:${port + 2}/devstoreaccount1`);
    first.save();
    assert.deepEqual(readPorts(dataDir), { s3: port, bigtable: port + 1, azuriteBlob: port + 2 });
    const second = new SandboxPorts(dataDir);
    assert.equal(await second.portFor('s3'), port);
  });

  it('gives each backend of a first start with a data dir a port of its own below the kernel ephemeral range', async () => {
    const ports = new SandboxPorts(join(dir, 'lasting'));
    const given: Array<number | undefined> = [];
    for (const backend of ['s3', 'dynamodb', 'gcs', 'gcsHttps', 'bigtable', 'azuriteBlob', 'azuriteTable'] as const) given.push(await ports.portFor(backend));
    assert.equal(new Set(given).size, given.length, `seven ports, all different: ${given.join(', ')}`);
    for (const port of given) {
      assert.ok(port !== undefined && port >= 20_000 && port < ephemeralFrom, `${port} lies below the ephemeral range`);
      const held = await holdPort(port);
      await close(held.server);
    }
  });

  it('says which backend, which port and what to do when a recorded port is taken, and keeps the record', async () => {
    const dataDir = join(dir, 'taken');
    const held = await holdPort();
    try {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, PORTS_FILE), JSON.stringify({ dynamodb: held.port }));
      const notices: PortTaken[] = [];
      const ports = new SandboxPorts(dataDir, (taken) => notices.push(taken));
      assert.equal(await ports.portFor('dynamodb'), undefined, 'a new port');
      assert.equal(notices.length, 1);
      const [notice] = notices;
      assert.equal(notice?.backend, 'dynamodb');
      assert.equal(notice?.port, held.port);
      assert.match(notice?.message ?? '', new RegExp(`^port ${held.port}, recorded in ${join(dataDir, PORTS_FILE)} for the DynamoDB proxy, is in use by another process`));
      assert.match(notice?.message ?? '', /TargetChanged/);
      assert.match(notice?.message ?? '', new RegExp(`free port ${held.port} .* and restart the sandbox`));
      ports.listening('dynamodb', 'http://127.0.0.1:1');
      ports.save();
      assert.deepEqual(readPorts(dataDir), { dynamodb: held.port }, 'the record keeps the port the objects are pinned to');
    } finally {
      await close(held.server);
    }
  });

  it('names a ports file it cannot read, and how to fix it', () => {
    const dataDir = join(dir, 'broken');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, PORTS_FILE), '{ "s3": ');
    assert.throws(() => new SandboxPorts(dataDir), new RegExp(`${join(dataDir, PORTS_FILE)} is not valid JSON .*delete it`));
    writeFileSync(join(dataDir, PORTS_FILE), JSON.stringify({ s3: 70000 }));
    assert.throws(() => new SandboxPorts(dataDir), /the port of s3 must be a whole number from 1 to 65535, got 70000/);
  });
});

describe('k8or sandbox --data-dir with a recorded port taken by another process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-cli-taken-'));
  const dataDir = join(dir, 'data');
  let sandbox: Running | undefined;
  let held: { server: Server; port: number } | undefined;

  after(async () => {
    if (sandbox?.child.exitCode === null) sandbox.child.kill('SIGKILL');
    if (held) await close(held.server);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says so at start, serves the S3 fake on a new port, and keeps the recorded port', async () => {
    held = await holdPort();
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, PORTS_FILE), JSON.stringify({ s3: held.port }));
    const started = startK8or(['sandbox', '--port', '0', '--kubeconfig', join(dir, 'kubeconfig'), '--data-dir', dataDir, '--log-file', join(dir, 'sandbox.log')]);
    sandbox = started;
    await waitFor('k8or sandbox to be ready (or to exit)', () => started.child.exitCode !== null || started.output().includes('k8or sandbox is ready.'), 180_000, 200);
    assert.equal(started.child.exitCode, null, `k8or sandbox exited early:\n${started.output()}`);
    assert.match(started.output(), new RegExp(`NOTICE +S3 fake: port ${held.port}, recorded in ${join(dataDir, PORTS_FILE)} for the S3 fake, is in use by another process`));
    const endpoints = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as LocalStackEndpoints;
    assert.notEqual(new URL(endpoints.s3).port, String(held.port), 'the S3 fake listens on a new port');
    const recorded = readPorts(dataDir);
    assert.equal(recorded['s3'], held.port, 'the record keeps the port the objects are pinned to');
    assert.equal(recorded['gcs'], Number(new URL(endpoints.gcp.gcs).port), 'the other backends are recorded');
    assert.equal(recorded['azuriteBlob'], Number(new URL(endpoints.azurite.blob).port));
    assert.equal(recorded['gcsHttps'], Number(new URL(endpoints.gcp.gcsHttps).port), 'the GCS HTTPS endpoint sandbox.json names');
    // DynamoDB Local needs Java; where it runs, the recorded port is the proxy's, the one the ProviderConfig names.
    if (endpoints.dynamodb) assert.equal(recorded['dynamodb'], Number(new URL(endpoints.dynamodb).port), 'the DynamoDB proxy');

    started.child.kill('SIGTERM');
    assert.equal(await started.exited, 0, started.output());
  });
});
