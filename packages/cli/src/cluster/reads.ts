import { GROUP, VERSION, type ProviderConfig } from '@k8or/api';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Namespace } from '@kubernetes/client-node';

/** A `--context` the kubeconfig does not have: a usage error. */
export class ClusterContextError extends Error {}

/** Objects a list call pages through at a time. */
const PAGE = 500;

/** One Event of an object, as `kubectl describe` shows it. */
export interface ObjectEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  /** When it last happened (RFC 3339), if the Event says. */
  last?: string;
}

/** Read-only access to what plan, import, validate and trace need from a cluster: GETs and LISTs, nothing else. */
export class ClusterReader {
  readonly #core: CoreV1Api;
  readonly #custom: CustomObjectsApi;

  constructor(readonly kubeConfig: KubeConfig) {
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /**
   * From `--kubeconfig FILE`, else KUBECONFIG, else in-cluster or ~/.kube/config; with `context`, that
   * context of it instead of the current one (an unknown context is a ClusterContextError).
   */
  static from(file: string | undefined, context?: string): ClusterReader {
    const kubeConfig = new KubeConfig();
    if (file) kubeConfig.loadFromFile(file);
    else kubeConfig.loadFromDefault();
    if (context !== undefined) {
      if (!kubeConfig.getContextObject(context)) {
        const known = kubeConfig.getContexts().map((c) => c.name);
        throw new ClusterContextError(`--context ${context}: no such context in the kubeconfig (contexts: ${known.join(', ') || 'none'})`);
      }
      kubeConfig.setCurrentContext(context);
    }
    return new ClusterReader(kubeConfig);
  }

  /** Every ProviderConfig of the cluster (a LIST, page by page). */
  async providerConfigs(): Promise<ProviderConfig[]> {
    return (await this.listAll('providerconfigs')) as ProviderConfig[];
  }

  providerConfig(name: string): Promise<ProviderConfig | undefined> {
    return orUndefined(this.#custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: 'providerconfigs', name }) as Promise<ProviderConfig>);
  }

  managed(plural: string, namespace: string, name: string): Promise<unknown> {
    return orUndefined(this.#custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural, namespace, name }) as Promise<unknown>);
  }

  /** Every object of a k8or resource (`providerconfigs`, `buckets`, `tables`), in every namespace. */
  listAll(plural: string): Promise<unknown[]> {
    return allPages<unknown>(async (next) => {
      const page = (await this.#custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural, limit: PAGE, ...(next ? { _continue: next } : {}) })) as { items?: unknown[]; metadata?: { continue?: string } };
      return { items: page.items ?? [], next: page.metadata?.continue };
    });
  }

  /** Every Namespace of the cluster (a LIST, page by page). */
  namespaces(): Promise<V1Namespace[]> {
    return allPages<V1Namespace>(async (next) => {
      const page = await this.#core.listNamespace({ limit: PAGE, ...(next ? { _continue: next } : {}) });
      return { items: page.items, next: page.metadata?._continue };
    });
  }

  namespace(name: string): Promise<unknown> {
    return orUndefined(this.#core.readNamespace({ name }));
  }

  async secretData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const secret = await orUndefined(this.#core.readNamespacedSecret({ namespace, name }));
    if (!secret) return undefined;
    return Object.fromEntries(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
  }

  /** Just the names of a Secret's keys: what a report may show of it. Undefined when there is no such Secret. */
  async secretKeys(namespace: string, name: string): Promise<string[] | undefined> {
    const secret = await orUndefined(this.#core.readNamespacedSecret({ namespace, name }));
    return secret ? Object.keys({ ...(secret.data ?? {}), ...(secret.stringData ?? {}) }).sort() : undefined;
  }

  async configMapData(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    const configMap = await orUndefined(this.#core.readNamespacedConfigMap({ namespace, name }));
    return configMap ? { ...(configMap.data ?? {}) } : undefined;
  }

  /** The Events about one object (core/v1, as the engine records them), oldest first; `namespace` undefined for a cluster-scoped object. */
  async events(namespace: string | undefined, kind: string, name: string, uid: string | undefined): Promise<ObjectEvent[]> {
    const fieldSelector = [`involvedObject.kind=${kind}`, `involvedObject.name=${name}`, ...(uid ? [`involvedObject.uid=${uid}`] : [])].join(',');
    const list = namespace === undefined ? await this.#core.listEventForAllNamespaces({ fieldSelector }) : await this.#core.listNamespacedEvent({ namespace, fieldSelector });
    const when = (e: (typeof list.items)[number]): string | undefined => toIso(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp);
    return list.items
      .map((e) => {
        const last = when(e);
        return { type: e.type ?? 'Normal', reason: e.reason ?? '', message: e.message ?? '', count: e.series?.count ?? e.count ?? 1, ...(last ? { last } : {}) };
      })
      .sort((a, b) => (a.last ?? '').localeCompare(b.last ?? ''));
  }

  /** The operator's default cluster id: the uid of kube-system. */
  async kubeSystemUid(): Promise<string | undefined> {
    const namespace = await this.namespace('kube-system');
    return (namespace as { metadata?: { uid?: string } } | undefined)?.metadata?.uid;
  }
}

/** Lists page by page (`limit` and `continue`) until the last. */
async function allPages<T>(page: (next: string | undefined) => Promise<{ items: T[]; next: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined;
  do {
    const answer = await page(next);
    items.push(...answer.items);
    next = answer.next || undefined;
  } while (next);
  return items;
}

function toIso(value: Date | string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value instanceof Date ? value.toISOString() : String(value);
}

/** A definite 404 is absence; every other failure (403, timeout) is an error. */
async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (typeof error === 'object' && error !== null && (error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/**
 * What a failed call to the API server says, in kube's words where it answered (`403: providerconfigs.k8or.io
 * is forbidden: ...`), else the error's own message (a refused connection, a timeout).
 */
export function apiErrorMessage(error: unknown): string {
  const e = error as { code?: unknown; body?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'number') {
    let message: unknown;
    try {
      message = (typeof e.body === 'string' ? (JSON.parse(e.body) as { message?: unknown }) : (e.body as { message?: unknown } | undefined))?.message;
    } catch {
      message = undefined;
    }
    return `${e.code}: ${typeof message === 'string' ? message : String(e.body ?? '')}`;
  }
  return typeof e?.message === 'string' ? e.message : String(error);
}
