import { createHash } from 'node:crypto';
import type { TableClient, TableServiceClient } from '@azure/data-tables';
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient } from '@azure/storage-blob';
import type { AzureClientSettings } from './config.js';
import { attemptCountPolicy } from './attempt-count.js';
import { attemptTimeoutPolicy, ATTEMPT_TIMEOUT_MS } from './attempt-timeout.js';
import { retryAfterPolicy } from './retry-after.js';
import { retryTokenPolicy, type PolicyPipeline } from './retry-tokens.js';
import { dataTables, identity, storageBlob } from './azure-sdk.js';

/** The most SDK clients kept per service; credential rotations and many accounts evict the oldest. */
const MAX_CLIENTS = 32;
/**
 * SDK tries per call; the engine retries beyond this with its own backoff, so no call blocks for long.
 * Blob retries 500, 503 and network errors (never 429); Tables retries 408, 5xx and network errors,
 * and a 429 or 503 with Retry-After (docs/providers/azure.md, "Retries and rate limits").
 */
const MAX_TRIES = 3;
const RETRY_DELAY_MS = 500;
const MAX_RETRY_DELAY_MS = 5_000;

let defaultChain: TokenCredential | undefined;
/** One DefaultAzureCredential for the process: it caches tokens. */
const defaultCredential = (): TokenCredential => (defaultChain ??= new identity.DefaultAzureCredential());

/** Plain http is for emulators (Azurite); the Tables SDK refuses to send credentials over it unless told. */
const isHttp = (url: string): boolean => url.startsWith('http:');

/** How the SDK clients are built beyond their settings; internal (tests shorten the per-attempt timeout). */
export interface AzureClientTuning {
  /** How long one HTTP attempt may take; ATTEMPT_TIMEOUT_MS when absent. */
  attemptTimeoutMs?: number;
}

/** The per-attempt policies, in the order they run after the SDK's retry policy (the timeout innermost, so a token wait is not an attempt). */
const perAttemptPolicies = (tuning: AzureClientTuning) => [attemptCountPolicy, retryTokenPolicy, retryAfterPolicy, attemptTimeoutPolicy(tuning.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS)];

function newBlobServiceClient(settings: AzureClientSettings, tuning: AzureClientTuning): BlobServiceClient {
  const options = { retryOptions: { maxTries: MAX_TRIES, retryDelayInMs: RETRY_DELAY_MS, maxRetryDelayInMs: MAX_RETRY_DELAY_MS } };
  const { credential, serviceUrl } = settings;
  const client =
    credential.kind === 'sharedKey'
      ? new storageBlob.BlobServiceClient(serviceUrl, new storageBlob.StorageSharedKeyCredential(credential.accountName, credential.accountKey), options)
      : credential.kind === 'sas'
        ? new storageBlob.BlobServiceClient(`${serviceUrl}?${credential.token}`, new storageBlob.AnonymousCredential(), options)
        : new storageBlob.BlobServiceClient(serviceUrl, defaultCredential(), options);
  return withPerAttemptPolicies(client, tuning);
}

/**
 * Adds the per-attempt policies after the Blob SDK's retry policy. The SDK takes no `additionalPolicies`; its
 * client keeps the core pipeline in `storageClientContext`, and the container clients made from the
 * service client share that pipeline. Checked, so an SDK that moves it fails loudly rather than
 * leaving retries unpaced (test/retry-tokens.integration.test.ts covers it).
 */
function withPerAttemptPolicies(client: BlobServiceClient, tuning: AzureClientTuning): BlobServiceClient {
  const context = (client as unknown as { storageClientContext?: { pipeline?: PolicyPipeline } }).storageClientContext;
  if (typeof context?.pipeline?.addPolicy !== 'function') throw new Error('@azure/storage-blob keeps no core pipeline where expected: the per-attempt rate-limit policy cannot be added');
  for (const policy of perAttemptPolicies(tuning)) context.pipeline.addPolicy(policy, { afterPhase: 'Retry' });
  return client;
}

const tableOptions = (settings: AzureClientSettings, tuning: AzureClientTuning) => ({
  allowInsecureConnection: isHttp(settings.serviceUrl),
  retryOptions: { maxRetries: MAX_TRIES - 1, retryDelayInMs: RETRY_DELAY_MS, maxRetryDelayInMs: MAX_RETRY_DELAY_MS },
  additionalPolicies: perAttemptPolicies(tuning).map((policy) => ({ policy, position: 'perRetry' as const })),
});

function newTableServiceClient(settings: AzureClientSettings, tuning: AzureClientTuning): TableServiceClient {
  const options = tableOptions(settings, tuning);
  const { credential, serviceUrl } = settings;
  if (credential.kind === 'sharedKey') return new dataTables.TableServiceClient(serviceUrl, new dataTables.AzureNamedKeyCredential(credential.accountName, credential.accountKey), options);
  if (credential.kind === 'sas') return new dataTables.TableServiceClient(serviceUrl, new dataTables.AzureSASCredential(credential.token), options);
  return new dataTables.TableServiceClient(serviceUrl, defaultCredential(), options);
}

/** A client for one table (its access policies), with the service client's credentials and policies. */
export function tableClient(settings: AzureClientSettings, tableName: string, tuning: AzureClientTuning = {}): TableClient {
  const options = tableOptions(settings, tuning);
  const { credential, serviceUrl } = settings;
  if (credential.kind === 'sharedKey') return new dataTables.TableClient(serviceUrl, tableName, new dataTables.AzureNamedKeyCredential(credential.accountName, credential.accountKey), options);
  if (credential.kind === 'sas') return new dataTables.TableClient(serviceUrl, tableName, new dataTables.AzureSASCredential(credential.token), options);
  return new dataTables.TableClient(serviceUrl, tableName, defaultCredential(), options);
}

/** The cache key: every setting and the tuning, with a hash of the secret in place of the secret. */
function settingsKey(settings: AzureClientSettings, tuning: AzureClientTuning): string {
  const { credential, ...rest } = settings;
  const secret =
    credential.kind === 'sharedKey'
      ? `${credential.accountName}:${createHash('sha256').update(credential.accountKey).digest('hex')}`
      : credential.kind === 'sas'
        ? createHash('sha256').update(credential.token).digest('hex')
        : 'default-chain';
  return JSON.stringify({ ...rest, kind: credential.kind, secret, attemptTimeoutMs: tuning.attemptTimeoutMs });
}

/** SDK clients reused across reconciles (each holds a connection pool), keyed by their settings. */
class ClientCache<C> {
  readonly #clients = new Map<string, C>();
  constructor(private readonly create: (settings: AzureClientSettings, tuning: AzureClientTuning) => C) {}

  get(settings: AzureClientSettings, tuning: AzureClientTuning): C {
    const key = settingsKey(settings, tuning);
    const cached = this.#clients.get(key);
    if (cached) return cached;
    const client = this.create(settings, tuning);
    this.#clients.set(key, client);
    for (const oldKey of this.#clients.keys()) {
      if (this.#clients.size <= MAX_CLIENTS) break;
      this.#clients.delete(oldKey);
    }
    return client;
  }

  clear(): void {
    this.#clients.clear();
  }
}

const blobClients = new ClientCache(newBlobServiceClient);
const tableClients = new ClientCache(newTableServiceClient);

export const blobServiceClient = (settings: AzureClientSettings, tuning: AzureClientTuning = {}): BlobServiceClient => blobClients.get(settings, tuning);
export const tableServiceClient = (settings: AzureClientSettings, tuning: AzureClientTuning = {}): TableServiceClient => tableClients.get(settings, tuning);

/** Forgets every cached client (the Azure SDK's clients need no closing; their sockets idle out). */
export function clearAzureClients(): void {
  blobClients.clear();
  tableClients.clear();
}
