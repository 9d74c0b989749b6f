import type https from 'node:https';

/**
 * What core needs of a kubeconfig: the current cluster's server URL, and the
 * TLS and credential options for a request to it. client-node's `KubeConfig`
 * fits as it is; `loadKubeAccess` (`./kubeconfig.ts`) gives one without
 * loading client-node.
 */
export interface KubeAccess {
  /** `proxyUrl`: the kubeconfig's `proxy-url`, which client-node's agent (set by applyToHTTPSOptions) goes through. */
  getCurrentCluster(): { readonly server: string; readonly proxyUrl?: string | undefined } | null;
  /** Sets `ca`, `cert`, `key`, `rejectUnauthorized` and the `authorization` header; called before every request, so rotated tokens are read again. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}
