import { readFileSync } from 'node:fs';

/** Where the operator runs when nothing says otherwise (the Helm chart's namespace). */
export const DEFAULT_OPERATOR_NAMESPACE = 'k8or-system';
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The operator's own namespace: `POD_NAMESPACE` (the downward API), else the
 * namespace of the pod's service account, else `k8or-system`.
 */
export function operatorNamespace(env: NodeJS.ProcessEnv = process.env, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): string {
  const fromEnv = env['POD_NAMESPACE']?.trim();
  if (fromEnv) return fromEnv;
  try {
    const fromFile = readFile(SERVICE_ACCOUNT_NAMESPACE_FILE).trim();
    if (fromFile) return fromFile;
  } catch {
    // not in a pod
  }
  return DEFAULT_OPERATOR_NAMESPACE;
}

/** Namespaces whose Secrets the operator reads: a list, or `'*'` for every namespace (only when configured so). */
export type SecretNamespaces = readonly string[] | '*';

/**
 * The namespaces whose credentials Secrets the operator caches and reads: the
 * configured ones, else only its own namespace, so it never caches every
 * Secret of the cluster by default. The engine watches them; the webhook
 * refuses a ProviderConfig whose Secret lies elsewhere.
 */
export function secretNamespacesFor(configured: SecretNamespaces | undefined, ownNamespace: string = operatorNamespace()): SecretNamespaces {
  if (configured === '*') return '*';
  return configured && configured.length > 0 ? configured : [ownNamespace];
}

export function canReadSecretsIn(namespaces: SecretNamespaces, namespace: string): boolean {
  return namespaces === '*' || namespaces.includes(namespace);
}
