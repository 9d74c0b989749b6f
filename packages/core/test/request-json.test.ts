import { strict as assert } from 'node:assert';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { createCertificateAuthority, createServingCertificate, type CertificateAuthority } from '@k8or/apiserver';
import { requestJson } from '@k8or/core';

/**
 * The informer's lists and every Lease call (leader election, the shard ring: a leader reads the
 * shard Leases twice a second) go through requestJson: it must keep its connections, not open
 * one, with a TLS handshake, per request.
 */
describe('requestJson: the connections it keeps', () => {
  let ca: CertificateAuthority;
  let server: https.Server;
  let url: string;
  let handshakes = 0;
  /** A kubeconfig as client-node loads one: its applyToHTTPSOptions hands out an agent of its own, which keeps no connection. */
  const kubeconfigTrusting = (caPem: string, kubeConfig = new KubeConfig(), proxyUrl?: string): KubeConfig => {
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false, ...(proxyUrl ? { proxyUrl } : {}) }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kubeConfig;
  };

  before(async () => {
    ca = createCertificateAuthority('request-json-test-ca');
    const serving = createServingCertificate(ca);
    server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ path: request.url, authorization: request.headers.authorization }));
    });
    server.on('secureConnection', () => handshakes++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('sends one request after another over one TLS connection, the credentials read again for each', async () => {
    const access = kubeconfigTrusting(ca.certPem);
    const from = handshakes;
    for (let i = 0; i < 10; i++) {
      assert.deepEqual(await requestJson(access, 'GET', `/apis/coordination.k8s.io/v1/namespaces/k8or-system/leases?i=${i}`), {
        path: `/apis/coordination.k8s.io/v1/namespaces/k8or-system/leases?i=${i}`,
        authorization: 'Bearer t',
      });
    }
    assert.equal(handshakes - from, 1);
  });

  it('opens a new connection when the kubeconfig brings other TLS material, and checks the server against it', async () => {
    const access = kubeconfigTrusting(ca.certPem);
    await requestJson(access, 'GET', '/api/v1/namespaces');
    const from = handshakes;
    // The same CA loaded again (a new buffer): the same material, the same connection.
    kubeconfigTrusting(ca.certPem, access);
    await requestJson(access, 'GET', '/api/v1/namespaces');
    assert.equal(handshakes - from, 0);
    // A CA that did not sign the server's certificate: not the kept connection; refused.
    kubeconfigTrusting(createCertificateAuthority('another-ca').certPem, access);
    await assert.rejects(requestJson(access, 'GET', '/api/v1/namespaces'), /self-signed|unable to verify|certificate/i);
    kubeconfigTrusting(ca.certPem, access);
    await requestJson(access, 'GET', '/api/v1/namespaces');
    assert.equal(handshakes - from, 1);
  });

  it("goes through the kubeconfig's proxy-url, as client-node's agent does", async () => {
    const tunnels: string[] = [];
    const proxy = http.createServer();
    proxy.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      tunnels.push(request.url ?? '');
      const [host, port] = (request.url ?? '').split(':');
      const upstream = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const access = kubeconfigTrusting(ca.certPem, new KubeConfig(), `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
      assert.deepEqual(await requestJson(access, 'GET', '/api/v1/namespaces'), { path: '/api/v1/namespaces', authorization: 'Bearer t' });
      assert.deepEqual(tunnels, [new URL(url).host]);
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
  });
});
