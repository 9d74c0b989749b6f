import { createHash } from 'node:crypto';
import type { GcpSettings } from './settings.js';

/** The most clients kept at once; credential rotations and many ProviderConfigs evict the oldest. */
const MAX_CLIENTS = 32;

/**
 * Google clients reused across reconciles (each holds connections, gRPC channels and tokens), keyed
 * by their settings. The key carries a hash of the service-account key, never the key itself.
 */
export class ClientCache<C> {
  readonly #clients = new Map<string, C>();

  constructor(
    private readonly create: (settings: GcpSettings) => C,
    private readonly close: (client: C) => void | Promise<void>,
  ) {}

  get(settings: GcpSettings): C {
    const key = settingsKey(settings);
    const cached = this.#clients.get(key);
    if (cached) return cached;
    const client = this.create(settings);
    this.#clients.set(key, client);
    for (const [oldKey, oldClient] of this.#clients) {
      if (this.#clients.size <= MAX_CLIENTS) break;
      this.#clients.delete(oldKey);
      void this.close(oldClient);
    }
    return client;
  }

  async closeAll(): Promise<void> {
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(clients.map((client) => this.close(client)));
  }
}

function settingsKey(settings: GcpSettings): string {
  const { serviceAccountKey, ...rest } = settings;
  const secret = serviceAccountKey
    ? `${serviceAccountKey.client_email}:${createHash('sha256').update(serviceAccountKey.private_key).digest('hex')}`
    : 'application-default';
  return JSON.stringify({ ...rest, secret });
}
