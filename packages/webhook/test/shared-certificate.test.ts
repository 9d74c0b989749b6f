import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { SharedCertificate, generateCa, issueServingCertificate, serviceDnsNames, type CertificateAuthority } from '@k8or/webhook';

// The replicas of the webhook share one CA and serving certificate through a Secret, against the
// embedded API server: create-if-absent, renewal by one writer, the CA kept (or rotated with the old one trusted).

const NAMESPACE = 'k8or-system';
const HOSTS = ['localhost', '127.0.0.1', ...serviceDnsNames({ name: 'k8or-webhook', namespace: NAMESPACE })];
const b64 = (text: string): string => Buffer.from(text).toString('base64');

describe('a webhook certificate the replicas share through a Secret', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let secretName = 0;
  const replica = (name: string): SharedCertificate => new SharedCertificate({ kubeConfig, namespace: NAMESPACE, name, hosts: HOSTS, logger: pino({ level: 'silent' }) });
  const fresh = (): string => `webhook-cert-${++secretName}`;
  /** Time passes: the Secret now holds a serving certificate (and CA) with `days` of life left. */
  const ageSecret = async (name: string, ca: CertificateAuthority, days: number): Promise<void> => {
    const api = kubeConfig.makeApiClient(CoreV1Api);
    const serving = issueServingCertificate(ca, { hosts: HOSTS, validityDays: days });
    const secret = await api.readNamespacedSecret({ namespace: NAMESPACE, name });
    secret.data = { 'tls.crt': b64(serving.certPem), 'tls.key': b64(serving.keyPem), 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) };
    await api.replaceNamespacedSecret({ namespace: NAMESPACE, name, body: secret });
  };
  const caOf = async (name: string): Promise<CertificateAuthority> => {
    const data = (await kubeConfig.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: NAMESPACE, name })).data ?? {};
    const text = (key: string): string => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
    return { certPem: text('ca.crt'), keyPem: text('ca.key') };
  };

  before(async () => {
    sandbox = await startSandbox({ recordRequests: true });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  });
  after(async () => {
    await sandbox?.stop();
  });

  it('two replicas starting at once serve one certificate: the create that loses reads the winner\'s', async () => {
    const name = fresh();
    const from = sandbox.requestLog.length;
    const [a, b] = await Promise.all([replica(name).ensure(), replica(name).ensure()]);
    assert.equal(a.cert, b.cert);
    assert.equal(a.caPem, b.caPem);
    const cert = new X509Certificate(a.cert);
    assert.ok(cert.checkIssued(new X509Certificate(a.caPem)), 'signed by the shared CA');
    assert.equal(cert.checkHost(`k8or-webhook.${NAMESPACE}.svc`), `k8or-webhook.${NAMESPACE}.svc`);
    const created = sandbox.requestLog.slice(from).filter((r) => r.verb === 'create' && r.resource === 'secrets' && r.status === 201);
    assert.equal(created.length, 1, 'one Secret created');
  });

  it('renews a serving certificate with a third of its life left, by one writer, keeping the CA', async () => {
    const name = fresh();
    await replica(name).ensure();
    const ca = await caOf(name);
    await ageSecret(name, ca, 0.001);
    const from = sandbox.requestLog.length;
    const [a, b] = await Promise.all([replica(name).ensure(), replica(name).ensure()]);
    assert.equal(a.cert, b.cert, 'both serve the renewed one');
    assert.ok(new Date(new X509Certificate(a.cert).validTo).getTime() > Date.now() + 300 * 86_400_000, 'a year ahead');
    assert.equal(a.caPem, ca.certPem, 'the caBundle the API server trusts is unchanged');
    const renewals = sandbox.requestLog.slice(from).filter((r) => r.verb === 'update' && r.resource === 'secrets' && r.name === name && r.status === 200);
    assert.equal(renewals.length, 1, 'one writer');
    assert.equal((await replica(name).ensure()).cert, a.cert, 'and nothing more to do');
  });

  it('replaces a CA near its end and keeps the old one in the bundle, so what it signed stays trusted', async () => {
    const name = fresh();
    await replica(name).ensure();
    const ending = generateCa(0.001);
    await ageSecret(name, ending, 0.0005);
    const renewed = await replica(name).ensure();
    const bundle = renewed.caPem.split('-----END CERTIFICATE-----').filter((part) => part.includes('BEGIN'));
    assert.equal(bundle.length, 2, 'the new CA and the old one');
    assert.ok(new X509Certificate(renewed.cert).checkIssued(new X509Certificate(`${bundle[0]!.trim()}\n-----END CERTIFICATE-----\n`)), 'signed by the new CA, first in the bundle');
    assert.ok(renewed.caPem.includes(ending.certPem.trim()), 'the old CA still trusted');
  });
});
