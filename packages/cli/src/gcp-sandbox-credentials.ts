// What the sandbox's GCP side issues: a service-account key (the GCS fake accepts JWTs signed with it
// and no other), and a CA whose certificate the fake serves HTTPS with. Both are fake and local only;
// under --data-dir they are kept, so a restarted sandbox accepts the key its Secret holds.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificateAuthority, createServingCertificate, type CertificateAuthority, type ServingCertificate } from '@k8or/apiserver';

/** A service-account key file's fields, as the Cloud console hands them out. */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
}

export interface GcpSandboxCredentials {
  key: ServiceAccountKeyFile;
  /** The key's public half, which the GCS fake checks every JWT of the account against. */
  publicKeyPem: string;
  ca: CertificateAuthority;
  serving: ServingCertificate;
}

function issueKey(project: string): { key: ServiceAccountKeyFile; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key: ServiceAccountKeyFile = {
    type: 'service_account',
    project_id: project,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: `k8or-sandbox@${project}.iam.gserviceaccount.com`,
    client_id: String(BigInt(`0x${randomBytes(8).toString('hex')}`)),
    token_uri: 'https://oauth2.googleapis.com/token',
  };
  return { key, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** `make()`'s value, kept in `dir/name` when `dir` is given (made once, read back after a restart). */
function kept<T>(dir: string | undefined, name: string, make: () => T): T {
  if (!dir) return make();
  const file = join(dir, name);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as T;
  const value = make();
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(value), { mode: 0o600 });
  return value;
}

/** The sandbox's GCP credentials and CA, kept in `dataDir` when given. */
export function gcpSandboxCredentials(project: string, dataDir: string | undefined): GcpSandboxCredentials {
  const { key, publicKeyPem } = kept(dataDir, 'service-account.json', () => issueKey(project));
  const ca = kept(dataDir, 'ca.json', () => createCertificateAuthority('k8or-sandbox-clouds-ca'));
  return { key, publicKeyPem, ca, serving: createServingCertificate(ca) };
}
