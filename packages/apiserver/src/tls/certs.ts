/** A throwaway CA and a serving certificate for 127.0.0.1 / localhost. */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface CertificateAuthority { certPem: string; keyPem: string }
export interface ServingCertificate { certPem: string; keyPem: string }

function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey; keyPem: string } {
  // Node generates RSA keys natively (fast); node-forge only signs the certificates.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(keyPem);
  const publicKey = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
  return { publicKey, privateKey: forgeKey, keyPem };
}

function serialNumber(): string {
  // positive serial: clear the top bit
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, years: number): void {
  cert.validity.notBefore = new Date(Date.now() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(Date.now() + years * 365 * 24 * 60 * 60 * 1000);
}

export function createCertificateAuthority(commonName = 'k8or-sandbox-ca'): CertificateAuthority {
  const keys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialNumber();
  validity(cert, 10);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** A serving certificate signed by `ca`, valid for the given DNS names and IP addresses. */
export function createServingCertificate(
  ca: CertificateAuthority,
  hosts: { dns: string[]; ips: string[] } = { dns: ['localhost'], ips: ['127.0.0.1', '::1'] },
): ServingCertificate {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialNumber();
  validity(cert, 5);
  cert.setSubject([{ name: 'commonName', value: 'kube-apiserver' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [...hosts.dns.map((value) => ({ type: 2, value })), ...hosts.ips.map((ip) => ({ type: 7, ip }))],
    },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}
