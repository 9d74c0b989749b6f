import { strict as assert } from 'node:assert';
import http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeApiError, KubeRest, type KubeAccess } from '@k8or/core';

/** A plain HTTP server that records each request and answers as `answer` says (or never). */
function startRecordingServer(answer: (request: http.IncomingMessage, response: http.ServerResponse) => void) {
  const seen: { method: string; url: string; authorization: string | undefined }[] = [];
  const server = http.createServer((request, response) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization });
    answer(request, response);
  });
  return { server, seen };
}

function accessTo(server: string, token: () => string): KubeAccess {
  return {
    getCurrentCluster: () => ({ server }),
    applyToHTTPSOptions: async (options: https.RequestOptions) => {
      options.headers = { ...options.headers, Authorization: `Bearer ${token()}` };
    },
  };
}

describe('KubeRest: each request has its deadline, its abort and its path', () => {
  const silent = startRecordingServer(() => {
    // never answers: the client's deadline or abort must end the request
  });
  const echo = startRecordingServer((request, response) => {
    response.writeHead(request.url?.includes('missing') ? 404 : 200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(request.url?.includes('missing') ? { kind: 'Status', reason: 'NotFound', message: 'not here' } : { url: request.url }));
  });
  let silentUrl: string;
  let echoUrl: string;

  before(async () => {
    for (const { server } of [silent, echo]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.server.address() as AddressInfo).port}`;
    echoUrl = `http://127.0.0.1:${(echo.server.address() as AddressInfo).port}`;
  });
  after(() => {
    for (const { server } of [silent, echo]) server.closeAllConnections();
    for (const { server } of [silent, echo]) server.close();
  });

  it('rejects a request the server does not answer within the timeout, naming the request', async () => {
    const rest = new KubeRest(accessTo(silentUrl, () => 't'), { timeoutMs: 300 });
    try {
      await assert.rejects(rest.get('/api/v1/namespaces/a'), /GET \/api\/v1\/namespaces\/a: no answer within 300 ms/);
    } finally {
      rest.close();
    }
  });

  it('rejects at once when the caller aborts, and never reports the abort as not found', async () => {
    const rest = new KubeRest(accessTo(silentUrl, () => 't'), { timeoutMs: 60_000 });
    const controller = new AbortController();
    try {
      const pending = rest.get('/api/v1/namespaces/b', controller.signal);
      controller.abort(new Error('stopping'));
      await assert.rejects(pending, (error: Error) => error.name === 'AbortError' || /stopping/.test(error.message));
      const aborted = new AbortController();
      aborted.abort(new Error('already stopped'));
      await assert.rejects(rest.get('/api/v1/namespaces/c', aborted.signal), /already stopped/);
    } finally {
      rest.close();
    }
  });

  it("keeps the server URL's path prefix, and sends the kubeconfig's credentials on every request", async () => {
    let token = 'first';
    const rest = new KubeRest(accessTo(`${echoUrl}/k8s/clusters/c-1/`, () => token));
    try {
      assert.deepEqual(await rest.get('/api/v1/namespaces'), { url: '/k8s/clusters/c-1/api/v1/namespaces' });
      token = 'second';
      await rest.create('/api/v1/namespaces', { metadata: { name: 'x' } });
      const last = echo.seen.at(-1)!;
      assert.equal(last.method, 'POST');
      assert.equal(last.url, '/k8s/clusters/c-1/api/v1/namespaces');
      // Re-read once a minute, not per request: the first token is still in use.
      assert.equal(last.authorization, 'Bearer first');
      assert.equal(await rest.get('/api/v1/namespaces/missing'), undefined);
      await assert.rejects(rest.create('/api/v1/missing', {}), (error: unknown) => error instanceof KubeApiError && error.status === 404 && /not here/.test(error.message));
    } finally {
      rest.close();
    }
  });
});
