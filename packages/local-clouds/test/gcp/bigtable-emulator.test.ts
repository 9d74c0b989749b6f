import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { findCbtemulator, freePort, startBigtableEmulator } from '@k8or/local-clouds';
import { assertBackendEndsWithItsKilledParent } from '../process-helpers.ts';

const located = findCbtemulator();
const canConnect = (host: string): Promise<boolean> =>
  new Promise((resolve) => {
    const [address, port] = host.split(':');
    const socket = connect(Number(port), address ?? '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('Bigtable emulator launcher', () => {
  it('starts cbtemulator on a free port of 127.0.0.1 and stops it', { skip: 'missing' in located ? located.missing : false }, async () => {
    const emulator = await startBigtableEmulator();
    assert.match(emulator.host, /^127\.0\.0\.1:\d+$/);
    assert.equal(emulator.persistent, false);
    assert.equal(await canConnect(emulator.host), true);
    await emulator.stop();
    assert.equal(await canConnect(emulator.host), false);
  });

  it('listens on the port it is given', { skip: 'missing' in located ? located.missing : false }, async () => {
    const port = await freePort();
    const emulator = await startBigtableEmulator({ port });
    try {
      assert.equal(emulator.host, `127.0.0.1:${port}`);
      assert.equal(await canConnect(emulator.host), true);
    } finally {
      await emulator.stop();
    }
  });

  it('leaves no emulator and no bound port behind when its parent\'s whole process group is killed with SIGKILL', { skip: 'missing' in located ? located.missing : false }, async () => {
    await assertBackendEndsWithItsKilledParent('bigtable', 'group');
  });

  it('says how to install the emulator when the binary is missing', async () => {
    const previous = process.env['K8OR_CBTEMULATOR'];
    process.env['K8OR_CBTEMULATOR'] = '/nonexistent/cbtemulator';
    try {
      const missing = findCbtemulator();
      assert.ok('missing' in missing);
      await assert.rejects(startBigtableEmulator(), /K8OR_CBTEMULATOR=\/nonexistent\/cbtemulator does not exist/);
    } finally {
      if (previous === undefined) delete process.env['K8OR_CBTEMULATOR'];
      else process.env['K8OR_CBTEMULATOR'] = previous;
    }
  });
});
