import { createHash } from 'node:crypto';
import type { AwsClientSettings } from './config.js';

/** The most SDK clients kept at once; credential rotations and many regions evict the oldest. */
const MAX_CLIENTS = 32;

/**
 * SDK clients reused across reconciles (each holds a connection pool), keyed by their settings.
 * The key carries a hash of the secret, never the secret itself.
 */
export class ClientCache<C extends { destroy(): void }> {
  readonly #clients = new Map<string, C>();
  readonly #create: (settings: AwsClientSettings) => C;

  constructor(create: (settings: AwsClientSettings) => C) {
    this.#create = create;
  }

  get(settings: AwsClientSettings): C {
    const key = settingsKey(settings);
    const cached = this.#clients.get(key);
    if (cached) return cached;
    const client = this.#create(settings);
    this.#clients.set(key, client);
    for (const [oldKey, oldClient] of this.#clients) {
      if (this.#clients.size <= MAX_CLIENTS) break;
      this.#clients.delete(oldKey);
      oldClient.destroy();
    }
    return client;
  }

  /** Closes every client (their keep-alive sockets). */
  destroyAll(): void {
    for (const client of this.#clients.values()) client.destroy();
    this.#clients.clear();
  }
}

function settingsKey(settings: AwsClientSettings): string {
  const { credentials, ...rest } = settings;
  const secret = credentials
    ? `${credentials.accessKeyId}:${createHash('sha256').update(`${credentials.secretAccessKey}\0${credentials.sessionToken ?? ''}`).digest('hex')}`
    : 'default-chain';
  return JSON.stringify({ ...rest, secret });
}
