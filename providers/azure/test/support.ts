// The Azure side of the direct-call fixtures (the shared ones come from @k8or/provider-testkit), and a fault proxy for Azurite.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AccountSASPermissions, StorageSharedKeyCredential, generateAccountSASQueryParameters } from '@azure/storage-blob';
import type { ProviderConfig } from '@k8or/api';
import { startAzurite, startFaultProxy as startCloudFaultProxy, type Azurite, type CloudDialectName, type FaultProxy as CloudFaultProxy } from '@k8or/local-clouds';
import { clearAzureClients } from '@k8or/provider-azure';

export { bucket, connectionContext, ownerTagsOf, startCannedProxy, table } from '@k8or/provider-testkit';

/** A ProviderConfig for Azurite's dev account, its key read from a Secret. */
export function azureProviderConfig(endpoints: { bucket?: string; table?: string }, account = 'devstoreaccount1'): ProviderConfig {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'default' },
    spec: { provider: 'azure', storageAccount: account, endpoints, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'azure-creds' } } },
  };
}

/** Azurite with local-clouds' fault proxy (no faults until a test sets them) in front of its Blob and its Table service. */
export interface ProxiedAzurite {
  azurite: Azurite;
  proxies: Map<CloudDialectName, CloudFaultProxy>;
  /** Drops the provider's cached clients, then stops the proxies and Azurite. */
  stop(): Promise<void>;
}

export async function startProxiedAzurite(): Promise<ProxiedAzurite> {
  const azurite = await startAzurite();
  const proxies = new Map<CloudDialectName, CloudFaultProxy>([
    ['azure-blob', await startCloudFaultProxy({ target: azurite.blobEndpoint, dialect: 'azure-blob' })],
    ['azure-table', await startCloudFaultProxy({ target: azurite.tableEndpoint, dialect: 'azure-table' })],
  ]);
  return {
    azurite,
    proxies,
    async stop() {
      clearAzureClients();
      for (const proxy of proxies.values()) await proxy.stop();
      await azurite.stop();
    },
  };
}

/** The Secret data holding Azurite's account key. */
export const accountKeySecret = (azurite: Azurite): Record<string, string> => ({ accountKey: azurite.accountKey });

/**
 * An HTTP proxy in front of one Azurite service that answers the next requests with an Azure
 * error of our choosing (status, x-ms-error-code and the XML or JSON body Azure sends), and
 * forwards everything else: the SDK sees the wire answers a busy or denying Azure gives.
 */
export interface FaultProxy {
  /** The proxied endpoint (same path as the target's, so the account segment stays). */
  endpoint: string;
  /** Answers the next `times` requests with `status` and `code`. */
  fail(times: number, status: number, code: string): void;
  /** Drops the faults not yet answered. */
  clear(): void;
  /** Requests answered with an injected error so far. */
  injected: number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const base = new URL(target);
  const faults: { status: number; code: string }[] = [];
  let injected = 0;
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const upstream = httpRequest({ host: base.hostname, port: base.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server: Server = createServer((req, res) => {
    const fault = faults.shift();
    if (!fault) return forward(req, res);
    injected += 1;
    req.resume();
    const json = (req.headers['accept'] ?? '').includes('json');
    const body = json
      ? JSON.stringify({ 'odata.error': { code: fault.code, message: { lang: 'en-US', value: `${fault.code} injected` } } })
      : `<?xml version="1.0" encoding="utf-8"?><Error><Code>${fault.code}</Code><Message>${fault.code} injected</Message></Error>`;
    res.writeHead(fault.status, { 'content-type': json ? 'application/json' : 'application/xml', 'x-ms-error-code': fault.code });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}${base.pathname}`,
    fail(times, status, code) {
      for (let i = 0; i < times; i += 1) faults.push({ status, code });
    },
    clear() {
      faults.length = 0;
    },
    get injected() {
      return injected;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}


/** An account SAS for Azurite's dev account: every service, resource type and permission, for an hour. */
export function accountSas(azurite: Azurite): string {
  const key = new StorageSharedKeyCredential('devstoreaccount1', azurite.accountKey);
  const expiresOn = new Date(Date.now() + 3_600_000);
  return generateAccountSASQueryParameters({ permissions: AccountSASPermissions.parse('rwdlacup'), services: 'bt', resourceTypes: 'sco', expiresOn }, key).toString();
}

/** Every string inside a value (object values and array items, recursively): where a secret could hide. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}
