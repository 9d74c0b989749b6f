import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { loadKubeAccess, type KubeAccess } from '@k8or/core';
import { openWatchStream } from '../dist/informer/watch-stream.js';

/** A watch endpoint that sends one event and keeps the stream open, as a quiet watch does. */
function startWatchServer(): Promise<Server> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'one', resourceVersion: '1' } } })}\n`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Opens a watch whose first event handler aborts the stream; resolves with how it ended and the events seen. */
async function abortFromHandler(access: KubeAccess, path: string): Promise<{ end: unknown; events: string[] }> {
  const events: string[] = [];
  const stream = openWatchStream(access, path, {
    query: {},
    inactivityMs: 30_000,
    userAgent: 'watch-stream-test',
    onEvent: (type) => {
      events.push(type);
      stream.abort();
    },
  });
  const end = await stream.ended;
  return { end, events };
}

/** Watches a plain-HTTP test server until the stream ends: how it ended and the names of the objects seen. Closes the server. */
async function watchNames(server: Server, inactivityMs: number, types?: ReadonlySet<string>): Promise<{ end: unknown; names: string[] }> {
  const { port } = server.address() as AddressInfo;
  const access = { getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }), applyToHTTPSOptions: async () => undefined } as KubeAccess;
  const names: string[] = [];
  try {
    const stream = openWatchStream(access, '/api/v1/configmaps', {
      query: {},
      inactivityMs,
      userAgent: 'watch-stream-test',
      ...(types ? { types } : {}),
      onEvent: (_type, object) => void names.push((object as { metadata: { name: string } }).metadata.name),
    });
    return { end: await stream.ended, names };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe('openWatchStream', () => {
  let server: Server;
  let access: { getCurrentCluster(): { server: string }; applyToHTTPSOptions(): Promise<void> };
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown): void => void uncaught.push(error);

  before(async () => {
    server = await startWatchServer();
    const { port } = server.address() as AddressInfo;
    access = { getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }), applyToHTTPSOptions: async () => undefined };
    process.on('uncaughtException', onUncaught);
  });

  after(() => {
    process.off('uncaughtException', onUncaught);
    server.closeAllConnections();
    server.close();
  });

  // The informer aborts its stream from inside an event handler (e.g. on a 410 ERROR event);
  // before the fix that destroyed the socket with an AbortError no one listened for, and the
  // unhandled 'error' event ended the operator process.
  it('ends quietly when aborted from inside an event handler, with the response under way (HTTP)', async () => {
    const { end, events } = await abortFromHandler(access as KubeAccess, '/api/v1/configmaps');
    assert.deepEqual(end, { reason: 'aborted' });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(events, ['ADDED']);
    assert.deepEqual(uncaught, [], 'no error escapes the stream');
  });

  it('ends quietly when aborted from inside an event handler over TLS (the API server)', async () => {
    const sandbox: Sandbox = await startSandbox();
    try {
      const file = join(mkdtempSync(join(tmpdir(), 'watch-stream-')), 'kubeconfig');
      writeFileSync(file, sandbox.kubeconfig);
      const tls = await loadKubeAccess(file, {});
      for (let round = 0; round < 5; round += 1) {
        const { end, events } = await abortFromHandler(tls, '/api/v1/namespaces');
        assert.deepEqual(end, { reason: 'aborted' });
        assert.equal(events[0], 'ADDED');
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(uncaught, [], 'no error escapes the stream');
    } finally {
      await sandbox.stop();
    }
  });
});

describe('openWatchStream: inactivity and framing', () => {
  /** A watch endpoint that writes `events` one every `gapMs`, two lines per write split mid-line, then goes silent. */
  function startTalkativeServer(events: number, gapMs: number): Promise<Server> {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const next = (): void => {
        if (sent >= events) return;
        const line = (n: number): string => `${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: `o${n}`, resourceVersion: String(n) } } })}\n`;
        const text = line(sent) + (sent + 1 < events ? line(sent + 1) : '');
        sent += sent + 1 < events ? 2 : 1;
        // split inside a line: the stream must join the halves
        response.write(text.slice(0, 17));
        response.write(text.slice(17));
        setTimeout(next, gapMs);
      };
      next();
    });
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  }

  it('stays open while bytes keep coming, decodes lines split across chunks, and ends as inactive once they stop', async () => {
    // 30 events, two per 100 ms: the stream lives about 1.5 s, longer than the 1 s window, which only the silence at the end exceeds.
    const server = await startTalkativeServer(30, 100);
    const { end, names } = await watchNames(server, 1_000);
    assert.deepEqual(end, { reason: 'inactive' });
    assert.deepEqual(names, Array.from({ length: 30 }, (_, n) => `o${n}`));
  });
});

describe('openWatchStream: bytes', () => {
  it('decodes a character whose bytes arrive in two chunks, and a last line only once its newline has come', async () => {
    const line = Buffer.from(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'münchen', resourceVersion: '1' } } })}\n`);
    const split = line.indexOf(Buffer.from('ü')) + 1; // between the two bytes of ü
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(line.subarray(0, split));
      setTimeout(() => response.write(line.subarray(split)), 50);
      setTimeout(() => response.end(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'no-newline' } } })), 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { end, names } = await watchNames(server, 30_000);
    assert.deepEqual(end, { reason: 'closed' });
    assert.deepEqual(names, ['münchen']);
  });
});

describe('openWatchStream: the event types asked for', () => {
  it('tells only the types asked for and ERROR, whatever order a line\'s keys come in, and never decodes a line its type already rules out', async () => {
    const event = (type: string, name: string): string => `${JSON.stringify({ type, object: { metadata: { name, resourceVersion: '1' } } })}\n`;
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(event('ADDED', 'added'));
      // Not JSON: decoding it would end the stream as an error. Its type is in its first bytes.
      response.write('{"type":"DELETED","object":{"metadata":{"name":"gone" \n');
      response.write(event('MODIFIED', 'modified'));
      // The type last: decoded, and dropped for its type.
      response.write(`${JSON.stringify({ object: { metadata: { name: 'deleted-type-last' } }, type: 'DELETED' })}\n`);
      response.write(event('BOOKMARK', 'bookmark'));
      response.end(event('ERROR', 'error'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { end, names } = await watchNames(server, 30_000, new Set(['ADDED', 'MODIFIED']));
    assert.deepEqual(end, { reason: 'closed' });
    // Each object is named after its event's type.
    assert.deepEqual(names, ['added', 'modified', 'error']);
  });
});
