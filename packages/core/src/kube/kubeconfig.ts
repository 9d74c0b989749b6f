import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type https from 'node:https';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import type { KubeAccess } from './access.js';

/**
 * Reads a kubeconfig as client-node's `KubeConfig.loadFromFile` /
 * `loadFromDefault` do, for the cases an operator meets: in-cluster service
 * account, bearer token or token file, client certificates, a CA, insecure
 * skip-verify. Importing client-node costs a process about 84 MiB of RSS (its
 * generated API client and undici), for the two things core uses it for; so
 * only a kubeconfig this reader does not handle (exec or auth-provider
 * plugins, basic auth, a proxy, a TLS server name, several files in
 * KUBECONFIG) loads client-node's `KubeConfig` instead.
 *
 * Order without a file, as client-node: `$KUBECONFIG`, `~/.kube/config`, the
 * in-cluster service account, else `http://localhost:8080`.
 */
export async function loadKubeAccess(file?: string, env: NodeJS.ProcessEnv = process.env): Promise<KubeAccess> {
  const path = file ?? defaultKubeconfigPath(env);
  if (path === undefined) {
    const inCluster = inClusterAccess(env);
    if (inCluster) return inCluster;
    return await clientNodeKubeConfig({});
  }
  const access = fromKubeconfig(parseYaml(await readFile(path, 'utf8')), dirname(path));
  return access ?? (await clientNodeKubeConfig({ file: path }));
}

/**
 * A kubeconfig given as text (YAML or JSON, such as client-node's `KubeConfig.exportConfig()`
 * writes, to hand a worker thread its parent's kubeconfig), read as `loadKubeAccess` reads a
 * file: client-node's `KubeConfig.loadFromString` only for what this reader leaves to it.
 * Relative file paths in it resolve from `baseDir`.
 */
export async function kubeAccessFromText(text: string, baseDir = process.cwd()): Promise<KubeAccess> {
  return fromKubeconfig(parseYaml(text), baseDir) ?? (await clientNodeKubeConfig({ text }));
}

/** The kubeconfig file to read without `--kubeconfig`, or undefined for in-cluster (or client-node's choice). */
function defaultKubeconfigPath(env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = env['KUBECONFIG'];
  if (fromEnv) return fromEnv.includes(':') ? undefined : fromEnv;
  const home = resolve(homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

function inClusterAccess(env: NodeJS.ProcessEnv): KubeAccess | undefined {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (env['KUBECONFIG'] || !host || !port || !existsSync(`${SERVICE_ACCOUNT_DIR}/token`)) return undefined;
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new StaticKubeAccess({ server, caFile: `${SERVICE_ACCOUNT_DIR}/ca.crt`, tokenFile: `${SERVICE_ACCOUNT_DIR}/token` });
}

interface AccessSettings {
  server: string;
  ca?: Buffer;
  caFile?: string;
  insecure?: boolean;
  cert?: Buffer;
  certFile?: string;
  key?: Buffer;
  keyFile?: string;
  token?: string;
  tokenFile?: string;
}

/** Cluster and user fields this reader understands; anything else hands the file to client-node. */
const CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'extensions']);
const USER_FIELDS = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'extensions']);

/** The current context's access, or undefined when it needs something only client-node does. */
export function fromKubeconfig(document: unknown, baseDir: string): KubeAccess | undefined {
  const config = record(document);
  const contextName = config['current-context'];
  const named = (list: unknown, name: unknown, field: string): Record<string, unknown> | undefined => {
    const entry = (Array.isArray(list) ? list : []).map(record).find((e) => e['name'] === name);
    return entry ? record(entry[field]) : undefined;
  };
  const context = named(config['contexts'], contextName, 'context');
  if (!context) throw new Error(`kubeconfig: current-context "${String(contextName)}" names no context`);
  const cluster = named(config['clusters'], context['cluster'], 'cluster');
  if (!cluster || typeof cluster['server'] !== 'string') throw new Error(`kubeconfig: context "${String(contextName)}" names no cluster with a server`);
  const user = named(config['users'], context['user'], 'user') ?? {};
  // A field set to null is absent (client-node's exportConfig writes every field it knows, unset ones as null).
  const unknownField = (entry: Record<string, unknown>, known: ReadonlySet<string>) => Object.entries(entry).some(([k, v]) => v !== null && v !== undefined && !known.has(k));
  if (unknownField(cluster, CLUSTER_FIELDS) || unknownField(user, USER_FIELDS)) return undefined;
  const file = (value: unknown) => (typeof value === 'string' ? resolve(baseDir, value) : undefined);
  const data = (value: unknown) => (typeof value === 'string' ? Buffer.from(value, 'base64') : undefined);
  const settings: AccessSettings = { server: cluster['server'] };
  const assign = <K extends keyof AccessSettings>(key: K, value: AccessSettings[K] | undefined): void => {
    if (value !== undefined) settings[key] = value;
  };
  assign('ca', data(cluster['certificate-authority-data']));
  assign('caFile', file(cluster['certificate-authority']));
  assign('insecure', cluster['insecure-skip-tls-verify'] === true ? true : undefined);
  assign('cert', data(user['client-certificate-data']));
  assign('certFile', file(user['client-certificate']));
  assign('key', data(user['client-key-data']));
  assign('keyFile', file(user['client-key']));
  assign('token', typeof user['token'] === 'string' ? user['token'] : undefined);
  assign('tokenFile', file(user['tokenFile']));
  return new StaticKubeAccess(settings);
}

/** Files (CA, certificate, key, token) are read on every call, so rotated ones take effect. */
class StaticKubeAccess implements KubeAccess {
  readonly #settings: AccessSettings;
  readonly #cluster: { server: string };

  constructor(settings: AccessSettings) {
    this.#settings = settings;
    this.#cluster = { server: settings.server };
  }

  getCurrentCluster(): { readonly server: string } {
    return this.#cluster;
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const s = this.#settings;
    const read = (path: string | undefined) => (path === undefined ? undefined : readFile(path));
    const [caFile, certFile, keyFile, tokenFile] = await Promise.all([read(s.caFile), read(s.certFile), read(s.keyFile), read(s.tokenFile)]);
    const ca = s.ca ?? caFile;
    const cert = s.cert ?? certFile;
    const key = s.key ?? keyFile;
    const token = s.token ?? tokenFile?.toString('utf8').trim();
    if (ca) options.ca = ca;
    if (cert) options.cert = cert;
    if (key) options.key = key;
    if (s.insecure) options.rejectUnauthorized = false;
    if (token) options.headers = { ...options.headers, Authorization: `Bearer ${token}` };
  }
}

/** client-node's KubeConfig, loaded only for what this reader leaves to it. */
async function clientNodeKubeConfig(from: { file?: string; text?: string }): Promise<KubeAccess> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (from.file) kubeConfig.loadFromFile(from.file);
  else if (from.text !== undefined) kubeConfig.loadFromString(from.text);
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
