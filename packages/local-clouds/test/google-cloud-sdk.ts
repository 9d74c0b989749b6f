// Runs the Google Cloud SDK's own clients (gcloud, gsutil) against a local fake, each call bounded:
// gcloud retries some failures without end, so a call that overstays is killed with its whole group.
import { spawn, spawnSync } from 'node:child_process';
import { createSign, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why `command` cannot be used here, or undefined when it runs. */
export function missingTool(command: 'gcloud' | 'gsutil'): string | undefined {
  const probe = spawnSync(command, ['version'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, CLOUDSDK_CONFIG: mkdtempSync(join(tmpdir(), 'k8or-probe-')) } });
  if (probe.error) return `${command} is not installed (install the Google Cloud SDK to run this test): ${probe.error.message}`;
  return probe.status === 0 ? undefined : `${command} does not run: ${probe.stderr.trim().split('\n').at(-1) ?? ''}`;
}

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` with `env` (added to a clean Cloud SDK environment: no CA bundle or
 * credentials of this machine; Python's requests lets REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE
 * override gcloud's own CA file), input on stdin when given; kills its process group after `timeoutMs`.
 */
export function runTool(command: string, args: readonly string[], env: Record<string, string>, options: { input?: Buffer; timeoutMs?: number } = {}): Promise<ToolResult> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(CLOUDSDK_|BOTO_|HTTPLIB2_CA_CERTS$|REQUESTS_CA_BUNDLE$|CURL_CA_BUNDLE$|GOOGLE_APPLICATION_CREDENTIALS$)/.test(name)),
  );
  const child = spawn(command, args, { env: { ...base, ...env }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.input);
  const timeoutMs = options.timeoutMs ?? 180_000;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // it ended meanwhile
      }
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A fresh gcloud configuration folder, so no setting of this machine's user leaks in. */
export const freshCloudSdkConfig = (): string => mkdtempSync(join(tmpdir(), 'k8or-gcloud-'));

/**
 * A service-account key pair: its public half, a self-signed JWT access token of it (as
 * google-auth-library makes them), and a key file with a `token_uri` of choice.
 */
export function serviceAccount(email: string): {
  publicKeyPem: string;
  token: (signWith?: 'own-key' | 'other-key') => string;
  keyFile: (tokenUri: string, signWith?: 'own-key' | 'other-key') => string;
} {
  const own = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    publicKeyPem: own.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    token: (signWith = 'own-key') => {
      const now = Math.floor(Date.now() / 1000);
      const signed = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode({ iss: email, sub: email, aud: 'https://storage.googleapis.com/', iat: now, exp: now + 3600 })}`;
      const key = signWith === 'own-key' ? own.privateKey : other.privateKey;
      return `${signed}.${createSign('RSA-SHA256').update(signed).sign(key).toString('base64url')}`;
    },
    keyFile: (tokenUri, signWith = 'own-key') => {
      const key = signWith === 'own-key' ? own.privateKey : other.privateKey;
      const project = email.split('@')[1]?.split('.')[0] ?? 'project';
      return tempFile(
        'key.json',
        JSON.stringify({ type: 'service_account', project_id: project, private_key_id: 'k1', private_key: key.export({ type: 'pkcs8', format: 'pem' }).toString(), client_email: email, client_id: '1', token_uri: tokenUri }),
      );
    },
  };
}

/** Writes `text` to a new file in a fresh temporary folder and returns its path. */
export function tempFile(name: string, text: string | Buffer): string {
  const file = join(mkdtempSync(join(tmpdir(), 'k8or-file-')), name);
  writeFileSync(file, text);
  return file;
}
