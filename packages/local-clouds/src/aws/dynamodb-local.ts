import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';

export interface DynamoDbLocalOptions {
  /** Port to listen on (default: a free ephemeral port). */
  port?: number;
  /** How long to wait for the JVM to answer (default 60 s, generous for loaded machines). */
  startTimeoutMs?: number;
  /** The java binary (default `$JAVA_HOME/bin/java`, else `java` on PATH). */
  javaPath?: string;
}

export interface DynamoDbLocal {
  /** `http://127.0.0.1:PORT`, for the SDK's `endpoint`. */
  endpoint: string;
  stop(): Promise<void>;
}

/** The DynamoDB Local jar and its native libraries, as shipped by the npm package amplify-dynamodb-simulator. */
function emulatorDirectory(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True once DynamoDB Local answers HTTP (any answer: an unsigned request gets a 400). */
async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, { method: 'POST', signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

const running = new Set<ChildProcess>();
// A test runner that exits without stop() must not leave a JVM behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts DynamoDB Local (the real AWS jar, in memory, one shared database for every access key and
 * region) and resolves once it answers. `stop()` ends the JVM; so does the exit of this process.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const directory = emulatorDirectory();
  const port = options.port ?? (await freePort());
  const args = [`-Djava.library.path=${join(directory, 'DynamoDBLocal_lib')}`, '-jar', join(directory, 'DynamoDBLocal.jar'), '-inMemory', '-sharedDb', '-port', String(port)];
  const java = options.javaPath ?? (process.env['JAVA_HOME'] ? join(process.env['JAVA_HOME'], 'bin', 'java') : 'java');
  const child = spawn(java, args, { cwd: directory, stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    running.delete(child);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited(child);
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  while (!(await answers(endpoint))) {
    if (spawnError) {
      running.delete(child);
      throw new Error(`DynamoDB Local needs Java 17 or later: cannot run ${java} (${spawnError.message})`);
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`DynamoDB Local did not start on port ${port}: ${stderr.trim() || `exit code ${child.exitCode}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { endpoint, stop };
}
