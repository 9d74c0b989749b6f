import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { generateCertificates, startWebhookServer, type GeneratedCertificates, type WebhookServer } from '@k8or/webhook';
import { HttpsClient } from './helpers/https-client.ts';
import { testWorld } from './helpers/fixtures.ts';

/** The certificate the server at `url` serves, read in a handshake that verifies it against `ca` for `servername`, as kube-apiserver does. */
async function servedCertificate(url: string, ca: string, servername: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(url);
  return await new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ca, servername }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve(certificate);
    });
    socket.once('error', reject);
  });
}

/** One fresh TLS handshake trusting only `ca`: true when the server's certificate verifies against it, else why not. */
async function handshake(url: string, ca: string): Promise<true | string> {
  const client = new HttpsClient(url, ca);
  try {
    const answer = await client.get('/healthz');
    return answer.status === 200 ? true : `status ${answer.status}`;
  } catch (error) {
    return String(error);
  } finally {
    client.close();
  }
}

async function trusts(url: string, ca: string): Promise<boolean> {
  return (await handshake(url, ca)) === true;
}

/** Asserts the server's certificate verifies against `ca`, with the TLS error as the message otherwise. */
async function assertTrusted(url: string, ca: string, message?: string): Promise<void> {
  const result = await handshake(url, ca);
  assert.equal(result, true, `${message ?? 'handshake'}: ${String(result)}`);
}

/** Asserts the server's certificate does not verify against `ca`, and that the reason is the certificate. */
async function assertUntrusted(url: string, ca: string, message?: string): Promise<void> {
  const result = await handshake(url, ca);
  assert.notEqual(result, true, message);
  assert.match(String(result), /certificate|self.signed|unable to verify/i, `${message ?? 'rejected'} for the certificate: ${String(result)}`);
}

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Writes a file the way kubelet updates a projected Secret: a new file renamed over the old one. */
async function replaceFile(path: string, content: string): Promise<void> {
  await writeFile(`${path}.tmp`, content);
  await rename(`${path}.tmp`, path);
}

describe('TLS', () => {
  describe('certificate from files (cert-manager)', () => {
    let dir: string;
    let first: GeneratedCertificates;
    let second: GeneratedCertificates;
    let server: WebhookServer;

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'k8or-webhook-tls-'));
      first = generateCertificates({ hosts: ['localhost', '127.0.0.1'] });
      second = generateCertificates({ hosts: ['localhost', '127.0.0.1'] });
      await writeFile(join(dir, 'tls.crt'), first.certPem);
      await writeFile(join(dir, 'tls.key'), first.keyPem);
      await writeFile(join(dir, 'ca.crt'), first.caPem);
      server = await startWebhookServer({
        port: 0,
        tls: { files: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: join(dir, 'ca.crt') } },
        context: testWorld(),
        logLevel: 'silent',
        processMetrics: false,
      });
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('serves the certificate from the files and reports their CA', async () => {
      assert.equal(server.caPem, first.caPem);
      await assertTrusted(server.url, first.caPem);
      await assertUntrusted(server.url, second.caPem);
    });

    it('keeps the old certificate while a rotation is half written, and switches once the pair matches', async () => {
      await replaceFile(join(dir, 'tls.key'), second.keyPem);
      // The new key with the old certificate is no pair: the server must keep serving the old one.
      await new Promise((resolve) => setTimeout(resolve, 400));
      await assertTrusted(server.url, first.caPem, 'still the old certificate');
      await replaceFile(join(dir, 'ca.crt'), second.caPem);
      await replaceFile(join(dir, 'tls.crt'), second.certPem);
      await eventually('the rotated certificate is served', () => trusts(server.url, second.caPem));
      await assertUntrusted(server.url, first.caPem, 'the old CA no longer verifies new connections');
      assert.equal(server.caPem, second.caPem);
    });
  });

  describe('certificate from a mounted Secret (kubelet swaps a ..data symlink)', () => {
    let dir: string;
    let server: WebhookServer;
    let generation = 0;

    /** Writes a new timestamped directory and atomically repoints `..data` at it, as kubelet's AtomicWriter does. */
    async function project(certs: GeneratedCertificates): Promise<void> {
      const target = `..2026_11_22_${++generation}`;
      await mkdir(join(dir, target));
      await writeFile(join(dir, target, 'tls.crt'), certs.certPem);
      await writeFile(join(dir, target, 'tls.key'), certs.keyPem);
      await writeFile(join(dir, target, 'ca.crt'), certs.caPem);
      await symlink(target, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    }

    after(async () => {
      await server?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('serves the projected certificate and follows a rotation of the whole volume', async () => {
      dir = await mkdtemp(join(tmpdir(), 'k8or-webhook-secret-'));
      const first = generateCertificates({ hosts: ['127.0.0.1'] });
      const second = generateCertificates({ hosts: ['127.0.0.1'] });
      await project(first);
      for (const file of ['tls.crt', 'tls.key', 'ca.crt']) await symlink(join('..data', file), join(dir, file));
      server = await startWebhookServer({
        port: 0,
        tls: { files: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), caFile: join(dir, 'ca.crt') } },
        context: testWorld(),
        logLevel: 'silent',
        processMetrics: false,
      });
      await assertTrusted(server.url, first.caPem);
      await project(second);
      await eventually('the rotated Secret is served', () => trusts(server.url, second.caPem));
      assert.equal(server.caPem, second.caPem);
    });
  });

  describe('self-signed', () => {
    it('generates a CA and a serving certificate for the given hosts, and serves it', async () => {
      const generated = generateCertificates({ hosts: ['k8or-webhook.k8or-system.svc', '127.0.0.1'] });
      const ca = new X509Certificate(generated.caPem);
      const cert = new X509Certificate(generated.certPem);
      assert.equal(ca.ca, true);
      assert.equal(cert.ca, false);
      assert.ok(cert.verify(ca.publicKey), 'signed by the CA');
      assert.match(cert.subjectAltName ?? '', /DNS:k8or-webhook\.k8or-system\.svc/);
      assert.match(cert.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
      assert.ok(cert.checkHost('k8or-webhook.k8or-system.svc'));

      const server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logLevel: 'silent', processMetrics: false });
      try {
        await assertTrusted(server.url, server.caPem);
        await assertUntrusted(server.url, generated.caPem, 'each server has its own CA');
      } finally {
        await server.close();
      }
    });

    it("names the webhook Service's DNS names when given one, so kube-apiserver's call to <svc>.<ns>.svc verifies", async () => {
      const service = { name: 'k8or-webhook', namespace: 'k8or-system' };
      const server = await startWebhookServer({ port: 0, tls: { selfSigned: { service } }, context: testWorld(), logLevel: 'silent', processMetrics: false });
      try {
        const served = await servedCertificate(server.url, server.caPem, 'k8or-webhook.k8or-system.svc');
        assert.deepEqual(
          served.subjectaltname?.split(', ').sort(),
          [
            'DNS:k8or-webhook',
            'DNS:k8or-webhook.k8or-system',
            'DNS:k8or-webhook.k8or-system.svc',
            'DNS:k8or-webhook.k8or-system.svc.cluster.local',
            'DNS:localhost',
            'IP Address:127.0.0.1',
          ],
        );
        await assert.rejects(servedCertificate(server.url, server.caPem, 'k8or-webhook.other-namespace.svc'), /does not match certificate's altnames/);
      } finally {
        await server.close();
      }
    });

    it('names only localhost and 127.0.0.1 without a Service (the sandbox)', async () => {
      const server = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, context: testWorld(), logLevel: 'silent', processMetrics: false });
      try {
        const served = await servedCertificate(server.url, server.caPem, 'localhost');
        assert.deepEqual(served.subjectaltname?.split(', ').sort(), ['DNS:localhost', 'IP Address:127.0.0.1']);
      } finally {
        await server.close();
      }
    });
  });
});
