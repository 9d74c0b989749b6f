// freePort: a port below the kernel's ephemeral range, so no other program's port-0 listener or
// outgoing connection takes it before the backend that was given it binds it.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { ephemeralPortsFrom, freePort, isFree } from '@k8or/local-clouds';

describe('freePort', () => {
  it('gives free ports below the ephemeral range, none it was told to avoid', async () => {
    const given = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const port = await freePort('127.0.0.1', given);
      assert.ok(port >= 20_000 && port < ephemeralPortsFrom(), `${port} lies below the ephemeral range (from ${ephemeralPortsFrom()})`);
      assert.ok(!given.has(port), `${port} was given before`);
      assert.equal(await isFree(port), true);
      given.add(port);
    }
  });

  it('isFree says no for a port something listens on', async () => {
    const server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    try {
      assert.equal(await isFree(port), false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
