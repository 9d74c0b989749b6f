// The request log is for tests that count requests: a long-running server (k8or sandbox) keeps none,
// so its memory does not grow with every request it serves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSandbox } from '@k8or/apiserver';
import { request } from './helpers.ts';

describe('request log', () => {
  it('keeps no request unless asked to, and says how to ask', async () => {
    const sandbox = await startSandbox();
    try {
      for (let i = 0; i < 20; i++) assert.equal((await request(sandbox, 'GET', '/api/v1/namespaces')).status, 200);
      assert.throws(() => sandbox.requestLog, /the request log is off: start the sandbox with recordRequests: true/);
      sandbox.clearRequestLog();
    } finally {
      await sandbox.stop();
    }
  });

  it('records every request in order with recordRequests: true', async () => {
    const sandbox = await startSandbox({ recordRequests: true });
    try {
      await request(sandbox, 'GET', '/api/v1/namespaces');
      await request(sandbox, 'GET', '/api/v1/namespaces/default');
      assert.deepEqual(sandbox.requestLog.map((e) => [e.verb, e.resource, e.name ?? '', e.status]), [
        ['list', 'namespaces', '', 200],
        ['get', 'namespaces', 'default', 200],
      ]);
      sandbox.clearRequestLog();
      assert.equal(sandbox.requestLog.length, 0);
    } finally {
      await sandbox.stop();
    }
  });
});
