import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface AzuriteOptions {
  /** Keep blobs, containers and tables in this folder across restarts (`--location`); in memory when absent. */
  dataDir?: string;
  /** How long to wait for both services to listen (default 60 s, generous for loaded machines). */
  startTimeoutMs?: number;
}

export interface Azurite {
  /** `http://127.0.0.1:PORT/devstoreaccount1`: the Blob service endpoint of the dev account. */
  blobEndpoint: string;
  /** `http://127.0.0.1:PORT/devstoreaccount1`: the Table service endpoint of the dev account. */
  tableEndpoint: string;
  /** The storage account Azurite serves: Azurite's well-known development account. */
  accountName: string;
  /** That account's published key (Azurite's README); not a secret. */
  accountKey: string;
  /** A connection string with the account, key and both endpoints. */
  connectionString: string;
  /** The Azurite process. */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Azurite's well-known development account and its published key. */
export const AZURITE_ACCOUNT = {
  name: 'devstoreaccount1',
  key: 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==',
} as const;

/**
 * Loaded into the Azurite process before Azurite itself: the process exits when its stdin closes,
 * which happens when the parent dies however it ends (SIGKILL included), so no Azurite outlives it.
 */
const EXIT_WITH_PARENT = `data:text/javascript,${encodeURIComponent("process.stdin.on('end',()=>process.exit(0)).on('error',()=>process.exit(0)).resume();")}`;

const LISTENING = /Azurite (Blob|Table) service is successfully listening at (http:\/\/\S+)/g;

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts Azurite from the npm package (its Blob and Table services, and the Queue service it always
 * starts) on free ports of 127.0.0.1, under the Node that runs this process, and resolves once both
 * services listen. `--skipApiVersionCheck` lets the current SDKs in, whose API version runs ahead of
 * Azurite's. `stop()` ends it; so does the end of this process, however it ends.
 */
export async function startAzurite(options: AzuriteOptions = {}): Promise<Azurite> {
  const require = createRequire(import.meta.url);
  const main = require.resolve('azurite/dist/src/azurite.js');
  const storage = options.dataDir ? ['--location', options.dataDir] : ['--inMemoryPersistence'];
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const args = [
    '--import',
    EXIT_WITH_PARENT,
    main,
    ...['--blobHost', '127.0.0.1', '--blobPort', '0', '--queueHost', '127.0.0.1', '--queuePort', '0', '--tableHost', '127.0.0.1', '--tablePort', '0'],
    ...storage,
    '--skipApiVersionCheck',
    '--disableTelemetry',
    '--silent',
  ];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: options.dataDir ?? process.cwd() });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited(child);
    clearTimeout(timer);
  };

  let output = '';
  const endpoints: Partial<Record<'Blob' | 'Table', string>> = {};
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Azurite did not start within ${options.startTimeoutMs ?? 60_000} ms: ${output.trim()}`)), options.startTimeoutMs ?? 60_000);
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const read = (chunk: Buffer): void => {
        output = (output + chunk.toString('utf8')).slice(-8_000);
        for (const match of output.matchAll(LISTENING)) endpoints[match[1] as 'Blob' | 'Table'] = match[2];
        if (endpoints.Blob && endpoints.Table) settle();
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('error', (error) => settle(new Error(`cannot run Azurite with ${process.execPath}: ${error.message}`)));
      child.once('exit', (code, signal) => settle(new Error(`Azurite exited (${signal ?? `code ${code}`}) before it listened: ${output.trim()}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // Keep draining the pipes, so a chatty Azurite never blocks on a full one.
  child.stdout.resume();
  child.stderr.resume();
  const blobEndpoint = `${endpoints.Blob}/${AZURITE_ACCOUNT.name}`;
  const tableEndpoint = `${endpoints.Table}/${AZURITE_ACCOUNT.name}`;
  return {
    blobEndpoint,
    tableEndpoint,
    accountName: AZURITE_ACCOUNT.name,
    accountKey: AZURITE_ACCOUNT.key,
    pid: child.pid,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT.name};AccountKey=${AZURITE_ACCOUNT.key};BlobEndpoint=${blobEndpoint};TableEndpoint=${tableEndpoint};`,
    stop,
  };
}
