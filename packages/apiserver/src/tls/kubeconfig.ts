import { stringify } from 'yaml';

/** A kubeconfig with one cluster (CA data inline), one bearer-token user and a current context. */
export function renderKubeconfig(options: { server: string; caPem: string; token: string; name?: string }): string {
  const name = options.name ?? 'k8or-sandbox';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: options.server, 'certificate-authority-data': Buffer.from(options.caPem).toString('base64') } }],
    users: [{ name: `${name}-admin`, user: { token: options.token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
