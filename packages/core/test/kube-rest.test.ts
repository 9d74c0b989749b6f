import { strict as assert } from 'node:assert';
import { X509Certificate } from 'node:crypto';
import { getEventListeners } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createCertificateAuthority, createServingCertificate } from '@k8or/apiserver';
import { KubeApiError, KubeRest, type KubeAccess } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';

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

async function listening<T extends http.Server>(server: T): Promise<T> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function stop(server: http.Server): void {
  server.closeAllConnections();
  server.close();
}

describe('KubeRest: what failed is never taken for an answer', () => {
  it('rejects a write whose connection breaks after the server has stored it, and does not send it again', async () => {
    const stored: string[] = [];
    const server = await listening(
      http.createServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          stored.push(`${request.method} ${body}`);
          // Stored, then the connection is cut before any answer.
          response.socket?.destroy();
        });
      }),
    );
    const rest = new KubeRest(accessTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => 't'));
    try {
      await assert.rejects(rest.patch('/apis/k8or.io/v1alpha1/namespaces/a/buckets/b', { metadata: { annotations: { x: '1' } } }), (error: unknown) => !(error instanceof KubeApiError));
      assert.deepEqual(stored, ['PATCH {"metadata":{"annotations":{"x":"1"}}}']);
      // A read whose connection breaks is an error too, never "not found".
      await assert.rejects(rest.get('/apis/k8or.io/v1alpha1/namespaces/a/buckets/b'));
    } finally {
      rest.close();
      stop(server);
    }
  });

  it('surfaces a 403 with its status, reason and message; a read refused is an error, not absence', async () => {
    const server = await listening(
      http.createServer((_request, response) => {
        response.writeHead(403, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Forbidden', message: 'buckets is forbidden', code: 403 }));
      }),
    );
    const rest = new KubeRest(accessTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => 't'));
    try {
      await assert.rejects(
        rest.get('/apis/k8or.io/v1alpha1/namespaces/a/buckets/b'),
        (error: unknown) => error instanceof KubeApiError && error.status === 403 && error.reason === 'Forbidden' && /buckets is forbidden/.test(error.message),
      );
    } finally {
      rest.close();
      stop(server);
    }
  });

  it('fails every request after close, without opening a connection', async () => {
    let connections = 0;
    const server = await listening(http.createServer((_request, response) => response.end('{}')));
    server.on('connection', () => connections++);
    const rest = new KubeRest(accessTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => 't'));
    try {
      await rest.get('/api/v1/namespaces');
      assert.equal(connections, 1);
      rest.close();
      await assert.rejects(rest.get('/api/v1/namespaces'));
      assert.equal(connections, 1);
    } finally {
      stop(server);
    }
  });
});

describe("KubeRest: the kubeconfig's credentials", () => {
  it('sends basic auth as an Authorization header', async () => {
    const seen: (string | undefined)[] = [];
    const server = await listening(
      http.createServer((request, response) => {
        seen.push(request.headers.authorization);
        response.end('{}');
      }),
    );
    const access: KubeAccess = {
      getCurrentCluster: () => ({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
      applyToHTTPSOptions: async (options: https.RequestOptions) => {
        options.auth = 'admin:s3cret';
      },
    };
    const rest = new KubeRest(access);
    try {
      await rest.get('/api/v1/namespaces');
      assert.deepEqual(seen, [`Basic ${Buffer.from('admin:s3cret').toString('base64')}`]);
    } finally {
      rest.close();
      stop(server);
    }
  });

  it("verifies the server against the kubeconfig's CA and presents its client certificate", async () => {
    const ca = createCertificateAuthority('kube-rest-test-ca');
    const serving = createServingCertificate(ca);
    const client = createServingCertificate(ca);
    const peers: string[] = [];
    const server = await listening(
      https.createServer({ cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false }, (request, response) => {
        peers.push((request.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? 'none');
        response.end('{"ok":true}');
      }),
    );
    const port = (server.address() as AddressInfo).port;
    const withCa = (caPem: string, url = `https://127.0.0.1:${port}`): KubeAccess => ({
      getCurrentCluster: () => ({ server: url }),
      applyToHTTPSOptions: async (options: https.RequestOptions) => {
        options.ca = Buffer.from(caPem);
        options.cert = Buffer.from(client.certPem);
        options.key = Buffer.from(client.keyPem);
      },
    });
    const rest = new KubeRest(withCa(ca.certPem));
    const stranger = new KubeRest(withCa(createCertificateAuthority('another-ca').certPem));
    const byName = new KubeRest(withCa(ca.certPem, `https://localhost:${port}`));
    // A name the certificate does not carry, though it is the same server.
    const wrongName = new KubeRest({
      ...withCa(ca.certPem, `https://localhost:${port}`),
      applyToHTTPSOptions: async (options: https.RequestOptions) => {
        await withCa(ca.certPem).applyToHTTPSOptions(options);
        options.servername = 'api.example.com';
      },
    });
    try {
      assert.deepEqual(await rest.get('/api/v1/namespaces'), { ok: true });
      assert.deepEqual(peers, [new X509Certificate(client.certPem).fingerprint256]);
      await assert.rejects(stranger.get('/api/v1/namespaces'), (error: unknown) => !(error instanceof KubeApiError));
      assert.equal(peers.length, 1);
      // By name: the certificate names localhost, and the connection checks that name.
      assert.deepEqual(await byName.get('/api/v1/namespaces'), { ok: true });
      await assert.rejects(wrongName.get('/api/v1/namespaces'), /localhost|altnames|Hostname/i);
    } finally {
      rest.close();
      stranger.close();
      byName.close();
      wrongName.close();
      stop(server);
    }
  });
});

describe('KubeRest: abort signals', () => {
  it('aborts every request in flight under a signal, listening to the signal once however many there are', async () => {
    let received = 0;
    const server = await listening(
      http.createServer(() => {
        received++; // and never answers
      }),
    );
    const rest = new KubeRest(accessTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => 't'), { timeoutMs: 60_000 });
    const controller = new AbortController();
    try {
      const pending = Array.from({ length: 10 }, (_, i) => rest.get(`/api/v1/namespaces/n${i}`, controller.signal));
      await waitFor('all ten requests at the server', () => received === 10);
      assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
      controller.abort(new Error('engine stopping'));
      const results = await Promise.allSettled(pending);
      assert.deepEqual(
        results.map((r) => (r.status === 'rejected' && r.reason instanceof Error ? r.reason.message : r.status)),
        Array.from({ length: 10 }, () => 'engine stopping'),
      );
    } finally {
      rest.close();
      stop(server);
    }
  });
});

describe('KubeRest: a kept-alive TLS connection keeps nothing of the answers it carried', () => {
  // node's https Agent keeps, for a socket's lifetime, the request that opened it (its TLS ticket
  // listener shares a closure scope with it), and the request holds its listeners.
  const ca = createCertificateAuthority('kept-alive-test-ca');
  const serving = createServingCertificate(ca);
  let requests = 0;
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (_request, response) => {
    requests++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ metadata: { name: `b-${i}` }, spec: { name: `bucket-${i}` } })) }));
  });
  let url: string;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('a list page, once decoded and dropped by its reader, is garbage while its socket stays open', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const rest = new KubeRest({
      getCurrentCluster: () => ({ server: url }),
      applyToHTTPSOptions: async (options: https.RequestOptions) => {
        options.ca = Buffer.from(ca.certPem);
        options.headers = { ...options.headers, Authorization: 'Bearer t' };
      },
    });
    try {
      let page = await rest.get<{ items: unknown[] }>('/apis/k8or.io/v1alpha1/buckets?limit=200');
      assert.equal(page?.items.length, 200);
      const decoded = new WeakRef(page!);
      page = undefined;
      // Weak references are cleared only after the turn that made them: GC across turns.
      await waitFor('the decoded page collected', async () => {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
        return decoded.deref() === undefined;
      }, 2_000, 20);
      assert.equal(requests, 1, 'one request, its connection still open and idle');
    } finally {
      rest.close();
    }
  });
});
