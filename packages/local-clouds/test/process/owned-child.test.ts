import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnedChildSpawnError, spawnOwnedChild } from '@k8or/local-clouds';
import { assertBackendEndsWithItsKilledParent, isRunning } from '../process-helpers.ts';

describe('spawnOwnedChild', () => {
  it('ends the backend and frees its port when the parent is killed with SIGKILL', async () => {
    await assertBackendEndsWithItsKilledParent('server');
  });

  it('leaves nothing running when the parent\'s whole process group is killed with SIGKILL at once', async () => {
    await assertBackendEndsWithItsKilledParent('server', 'group');
  });


  it('stops the backend on stop() and reports how it ended', async () => {
    const child = spawnOwnedChild('sleep', ['600']);
    const pid = await child.pid;
    assert.ok(isRunning(pid));
    assert.equal(child.hasExited(), false);
    await child.stop();
    assert.equal(child.hasExited(), true);
    assert.equal(isRunning(pid), false);
    assert.deepEqual(await child.exited, { code: null, signal: 'SIGTERM' });
    await child.stop();
  });

  it('kills a backend that ignores SIGTERM once the grace period is over', async () => {
    const child = spawnOwnedChild(process.execPath, ['-e', "process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);"], {
      stdout: 'pipe',
      stopGraceMs: 200,
    });
    const pid = await child.pid;
    await new Promise((resolve) => child.stdout?.once('data', resolve));
    await child.stop();
    assert.equal(isRunning(pid), false);
    assert.deepEqual(await child.exited, { code: null, signal: 'SIGKILL' });
  });

  it('passes the backend exit code through', async () => {
    const child = spawnOwnedChild(process.execPath, ['-e', 'process.exit(3)']);
    assert.deepEqual(await child.exited, { code: 3, signal: null });
  });

  it('names the command and the system error when the backend cannot start', async () => {
    const child = spawnOwnedChild('k8or-no-such-command', ['--version']);
    await assert.rejects(child.pid, (error: unknown) => {
      assert.ok(error instanceof OwnedChildSpawnError);
      assert.equal(error.code, 'ENOENT');
      assert.match(error.message, /cannot run k8or-no-such-command: .*ENOENT/);
      return true;
    });
    assert.equal((await child.exited).code, 127);
  });
});
