import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { freePort } from '../process/free-port.js';
import { OwnedChildSpawnError, spawnOwnedChild } from '../process/owned-child.js';
import { loopbackLauncher } from './dynamodb-local-loopback.js';

export interface DynamoDbLocalOptions {
  /** Port to listen on (default: a free ephemeral port). */
  port?: number;
  /** How long to wait for the JVM to answer its first DynamoDB call (default 180 s, generous for loaded machines). */
  startTimeoutMs?: number;
  /** The java binary (default `$JAVA_HOME/bin/java`, else `java` on PATH). */
  javaPath?: string;
  /** Keep tables and items in this folder across restarts (DynamoDB Local's `-dbPath`; default: memory). */
  dataDir?: string;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:PORT`, for the SDK's `endpoint`. */
  endpoint: string;
  /**
   * Where the JVM listens: `127.0.0.1`, or `*` (every interface) where no Java compiler is installed
   * to build the launcher that binds it to loopback; `listenWarning` then says so.
   */
  listensOn: '127.0.0.1' | '*';
  listenWarning?: string;
  /** The JVM's process id. */
  pid: number;
  stop(): Promise<void>;
}

/** The DynamoDB Local jar and its native libraries, as shipped by the npm package amplify-dynamodb-simulator. */
function emulatorDirectory(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

/**
 * True once DynamoDB Local answers a real DynamoDB call. Its HTTP server answers seconds before its
 * request path has loaded (the SDK's model, JSON, SQLite): on a loaded machine that first call took
 * long enough to eat a test's whole wait for a Table. The launcher pays it, before it resolves.
 */
async function answers(client: DynamoDBClient): Promise<boolean> {
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(30_000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts DynamoDB Local (the real AWS jar, one shared database for every access key and region, in
 * memory or in `dataDir`), listening on 127.0.0.1 only, and resolves once it answers. `stop()` ends
 * the JVM; so does the end of this process, however it ends (see spawnOwnedChild). It checks no
 * signature and has no tagging or continuous backups: `startDynamoDbProxy` in front of it adds them.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const directory = emulatorDirectory();
  const jar = join(directory, 'DynamoDBLocal.jar');
  const port = options.port ?? (await freePort());
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const storage = options.dataDir ? ['-dbPath', resolve(options.dataDir)] : ['-inMemory'];
  const java = options.javaPath ?? (process.env['JAVA_HOME'] ? join(process.env['JAVA_HOME'], 'bin', 'java') : 'java');
  const launcher = await loopbackLauncher(jar, java);
  const main = 'mainClass' in launcher ? ['-cp', `${launcher.classpath}:${jar}`, launcher.mainClass] : ['-jar', jar];
  const args = [`-Djava.library.path=${join(directory, 'DynamoDBLocal_lib')}`, ...main, ...storage, '-sharedDb', '-disableTelemetry', '-port', String(port)];
  const child = spawnOwnedChild(java, args, { cwd: directory, stderr: 'pipe' });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  let pid: number;
  try {
    pid = await child.pid;
  } catch (error) {
    if (error instanceof OwnedChildSpawnError) throw new Error(`DynamoDB Local needs Java 17 or later: ${error.message}`);
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 180_000);
  const probe = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'k8orlauncher', secretAccessKey: 'k8orlauncher' }, maxAttempts: 1 });
  try {
    while (!(await answers(probe))) {
      if (child.hasExited() || Date.now() > deadline) {
        await child.stop();
        throw new Error(`DynamoDB Local did not start on port ${port}: ${stderr.trim() || `exit code ${(await child.exited).code}`}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    probe.destroy();
  }
  const listen = 'mainClass' in launcher ? { listensOn: '127.0.0.1' as const } : { listensOn: '*' as const, listenWarning: `DynamoDB Local listens on every interface (port ${port}): ${launcher.unavailable}; install a JDK to bind it to 127.0.0.1` };
  return { endpoint, pid, ...listen, stop: () => child.stop() };
}
