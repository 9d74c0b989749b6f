import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { spawnOwnedChild } from '../process/owned-child.js';

export interface AzuriteOptions {
  /** Keep containers, blobs and tables in this folder across restarts (`--location`); in memory when absent. */
  dataDir?: string;
  /** Port of the Blob service on 127.0.0.1 (default: a free one, Azurite binds port 0). */
  blobPort?: number;
  /** Port of the Table service on 127.0.0.1 (default: a free one). */
  tablePort?: number;
  /** How long to wait for both services to listen (default 60 s, generous for loaded machines). */
  startTimeoutMs?: number;
}

export interface Azurite {
  /** `http://127.0.0.1:PORT/devstoreaccount1`: the Blob service endpoint of the dev account. */
  blobEndpoint: string;
  /** `http://127.0.0.1:PORT/devstoreaccount1`: the Table service endpoint of the dev account. */
  tableEndpoint: string;
  /** The storage account Azurite serves: its well-known development account. */
  accountName: string;
  /** That account's published key (Azurite's README); not a secret. */
  accountKey: string;
  /** A connection string with the account, key and both endpoints. */
  connectionString: string;
  /** The Azurite process. */
  pid: number;
  stop(): Promise<void>;
}

/** Azurite's well-known development account and its published key. */
export const AZURITE_ACCOUNT = {
  name: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
} as const;

const LISTENING = /Azurite (Blob|Table) service is successfully listening at (http:\/\/\S+)/g;

/**
 * Starts Azurite from the npm package (its Blob and Table services, and the Queue service it always
 * starts) on 127.0.0.1, on the given Blob and Table ports or free ones (it binds port 0 and prints
 * the port; the Queue service always gets a free one), under the Node that runs
 * this process, and resolves once both services listen. `--skipApiVersionCheck` lets the current
 * SDKs in, whose API version runs ahead of Azurite's. `stop()` ends it; so does the end of this
 * process, however it ends (see spawnOwnedChild).
 */
export async function startAzurite(options: AzuriteOptions = {}): Promise<Azurite> {
  const main = createRequire(import.meta.url).resolve('azurite/dist/src/azurite.js');
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const args = [
    main,
    ...['--blobHost', '127.0.0.1', '--blobPort', String(options.blobPort ?? 0), '--queueHost', '127.0.0.1', '--queuePort', '0', '--tableHost', '127.0.0.1', '--tablePort', String(options.tablePort ?? 0)],
    ...(options.dataDir ? ['--location', options.dataDir] : ['--inMemoryPersistence']),
    '--skipApiVersionCheck',
    '--disableTelemetry',
    '--silent',
  ];
  const child = spawnOwnedChild(process.execPath, args, { cwd: options.dataDir ?? process.cwd(), stdout: 'pipe', stderr: 'pipe' });
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  let output = '';
  const endpoints: Partial<Record<'Blob' | 'Table', string>> = {};
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Azurite did not start within ${timeoutMs} ms: ${output.trim()}`)), timeoutMs);
    const read = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-8_000);
      for (const match of output.matchAll(LISTENING)) endpoints[match[1] as 'Blob' | 'Table'] = match[2];
      if (endpoints.Blob && endpoints.Table) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    void child.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`Azurite exited (${signal ?? `code ${code}`}) before it listened: ${output.trim()}`));
    });
  });
  let pid: number;
  try {
    pid = await child.pid;
    await listening;
  } catch (error) {
    await child.stop();
    throw error;
  }
  const blobEndpoint = `${endpoints.Blob}/${AZURITE_ACCOUNT.name}`;
  const tableEndpoint = `${endpoints.Table}/${AZURITE_ACCOUNT.name}`;
  return {
    blobEndpoint,
    tableEndpoint,
    accountName: AZURITE_ACCOUNT.name,
    accountKey: AZURITE_ACCOUNT.key,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT.name};AccountKey=${AZURITE_ACCOUNT.key};BlobEndpoint=${blobEndpoint};TableEndpoint=${tableEndpoint};`,
    pid,
    stop: () => child.stop(),
  };
}
