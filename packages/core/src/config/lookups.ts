import type { ProviderConfig } from '@k8or/api';
import type { KubernetesObject } from '@kubernetes/client-node';
import { corePath, k8orPath } from '../kube/paths.js';
import type { KubeRest } from '../kube/rest.js';
import type { Indexer } from '../informer/indexer.js';
import type { NamespaceInfo } from '../reconcile/ports.js';
import type { ConfigLookups, SecretData } from '../reconcile/ports.js';

/** core/v1 Secret, the parts the engine reads. */
export interface Secret extends KubernetesObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A Secret's data, base64-decoded (stringData wins, as the API server would merge it). */
export function decodeSecret(secret: Secret): SecretData {
  const decoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) decoded[key] = Buffer.from(value, 'base64').toString('utf8');
  return { ...decoded, ...secret.stringData };
}

/** Reads namespaces, ProviderConfigs and Secrets from the API on every call: for tools and tests without informers. */
export class ApiLookups implements ConfigLookups {
  readonly #rest: KubeRest;

  constructor(rest: KubeRest) {
    this.#rest = rest;
  }

  async namespace(name: string): Promise<NamespaceInfo | undefined> {
    return await this.#rest.get<NamespaceInfo>(corePath('namespaces', undefined, name));
  }

  async providerConfig(name: string): Promise<ProviderConfig | undefined> {
    return await this.#rest.get<ProviderConfig>(k8orPath('ProviderConfig', undefined, name));
  }

  async secret(namespace: string, name: string): Promise<SecretData | undefined> {
    const secret = await this.#rest.get<Secret>(corePath('secrets', namespace, name));
    return secret ? decodeSecret(secret) : undefined;
  }
}

/**
 * Reads from informer caches (watched, so no API request per reconcile). The
 * engine re-queues dependent resources when one of these objects changes, so
 * a cache that is a moment behind only delays a reconcile, never loses it.
 *
 * Namespaces are the exception: a resource's namespace always exists, so a
 * cache miss means the cache is behind, and answering "no namespace" would
 * drop its `k8or.io/provider-config` annotation and send the resource to the
 * `default` ProviderConfig, possibly another account. A miss reads it live.
 */
export class CachedLookups implements ConfigLookups {
  readonly #namespaces: Indexer<KubernetesObject> | undefined;
  readonly #providerConfigs: Indexer<KubernetesObject>;
  readonly #secrets: Indexer<KubernetesObject>;
  readonly #live: ApiLookups;

  constructor(
    caches: { namespaces?: Indexer<KubernetesObject>; providerConfigs: Indexer<KubernetesObject>; secrets: Indexer<KubernetesObject> },
    rest: KubeRest,
  ) {
    this.#namespaces = caches.namespaces;
    this.#providerConfigs = caches.providerConfigs;
    this.#secrets = caches.secrets;
    this.#live = new ApiLookups(rest);
  }

  async namespace(name: string): Promise<NamespaceInfo | undefined> {
    const cached = this.#namespaces?.get(name) as NamespaceInfo | undefined;
    return cached ?? (await this.#live.namespace(name));
  }

  async providerConfig(name: string): Promise<ProviderConfig | undefined> {
    return this.#providerConfigs.get(name) as ProviderConfig | undefined;
  }

  async secret(namespace: string, name: string): Promise<SecretData | undefined> {
    const secret = this.#secrets.get(`${namespace}/${name}`) as Secret | undefined;
    return secret ? decodeSecret(secret) : undefined;
  }
}
