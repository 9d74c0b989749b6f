import type { WebhookServerOptions } from './start.js';

/** A provider plugin the worker imports itself: plugins hold functions, which cannot cross to a thread. */
export interface ProviderModule {
  /** Resolved module URL, e.g. `import.meta.resolve('@k8or/provider-aws')`. */
  url: string;
  /**
   * The named export that is the ProviderPlugin, e.g. `awsProvider`. Without it, the module's default
   * export is a provider package's ContainerModule (`providerModule(plugin)`), as the operator loads them.
   */
  export?: string;
}

/** What the parent hands the worker: the server options, with everything that cannot be cloned as data. */
export interface WorkerStart {
  server: Omit<WebhookServerOptions, 'context' | 'kubeConfig' | 'providers' | 'logger' | 'logLevel'>;
  /** The kubeconfig, as `KubeConfig.exportConfig()` writes it. */
  kubeConfig: string;
  providers: ProviderModule[];
  logLevel: string;
}

export type FromWorker =
  | { type: 'listening'; url: string; caPem: string }
  | { type: 'failed'; message: string }
  | { type: 'synced' }
  | { type: 'log'; line: string }
  | { type: 'metrics'; id: number; text: string }
  | { type: 'closed' };

export type ToWorker = { type: 'metrics'; id: number } | { type: 'close' };
