import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

export interface GeneratedCertificates {
  /** The CA that signed the serving certificate: what goes into `caBundle`. */
  caPem: string;
  certPem: string;
  keyPem: string;
}

export interface SelfSignedOptions {
  /** DNS names and IP addresses the serving certificate is valid for. */
  hosts: readonly string[];
  validityDays?: number;
  commonName?: string;
}

/**
 * The names kube-apiserver may use for a webhook Service (it calls `<svc>.<ns>.svc`; the
 * others are what clients inside the cluster resolve), so a self-signed certificate that
 * names them all passes TLS verification in a real cluster.
 */
export function serviceDnsNames(service: { name: string; namespace: string }): string[] {
  const { name, namespace } = service;
  return [name, `${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`];
}

/** A CA: its certificate and the key that signs serving certificates. */
export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

/**
 * A fresh CA and a serving certificate it signed, for clusters without
 * cert-manager and for the sandbox. Keys come from node:crypto (fast, native);
 * node-forge only builds and signs the X.509 certificates.
 */
export function generateCertificates(options: SelfSignedOptions): GeneratedCertificates {
  const days = options.validityDays ?? 365;
  const ca = generateCa(days);
  const serving = issueServingCertificate(ca, options);
  return { caPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem };
}

/** A self-signed CA valid for `days`. */
export function generateCa(days: number): CertificateAuthority {
  const ca = keyPair();
  const caCert = certificate(ca.publicKey, days);
  caCert.setSubject(CA_SUBJECT);
  caCert.setIssuer(CA_SUBJECT);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(caCert), keyPem: forge.pki.privateKeyToPem(ca.privateKey) };
}

/** A serving certificate for `hosts`, signed by `ca`, valid for `validityDays` (default 365). */
export function issueServingCertificate(ca: CertificateAuthority, options: SelfSignedOptions): { certPem: string; keyPem: string } {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const server = keyPair();
  const cert = certificate(server.publicKey, options.validityDays ?? 365);
  cert.setSubject([{ name: 'commonName', value: options.commonName ?? options.hosts[0] ?? 'k8or-webhook' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: options.hosts.map((host) => (isIP(host) ? { type: 7, ip: host } : { type: 2, value: host })) },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(server.privateKey) };
}

const CA_SUBJECT = [{ name: 'commonName', value: 'k8or-webhook-ca' }];

function keyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const forgeKey = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()) as forge.pki.rsa.PrivateKey;
  return { privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function certificate(publicKey: forge.pki.rsa.PublicKey, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // RFC 5280: a positive serial of at most 20 bytes; clearing the top bit keeps DER from reading it as negative.
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x10;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 5 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + days * 86_400_000);
  return cert;
}
