import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { spawnOwnedChild } from '../process/index.js';

/** Environment variable naming the cbtemulator binary, ahead of the one found beside gcloud. */
export const CBTEMULATOR_ENV = 'K8OR_CBTEMULATOR';

export interface BigtableEmulatorOptions {
  /** The cbtemulator binary (default: $K8OR_CBTEMULATOR, else the Google Cloud SDK's, found through `gcloud` on PATH). */
  binary?: string;
  /** Accepted for symmetry with the other backends: the emulator keeps everything in memory (see `persistent`). */
  dataDir?: string;
  /** Port on 127.0.0.1 (default: a free one, the emulator binds port 0). */
  port?: number;
  /** How long to wait for the emulator to listen (default 30 s). */
  startTimeoutMs?: number;
}

export interface BigtableEmulator {
  /** `127.0.0.1:PORT`: the value of BIGTABLE_EMULATOR_HOST, and the Bigtable client's `apiEndpoint`. */
  host: string;
  /** Always false: the emulator keeps no state across restarts. */
  persistent: false;
  /** The emulator's process id. */
  pid: number;
  stop(): Promise<void>;
}

const INSTALL_HINT =
  'install the Google Cloud SDK with its Bigtable emulator (`gcloud components install bigtable`, or the Debian package google-cloud-cli-bigtable-emulator), or set K8OR_CBTEMULATOR to the cbtemulator binary';

function onPath(command: string): string | undefined {
  for (const directory of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(directory, command);
    if (directory && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Where cbtemulator is: $K8OR_CBTEMULATOR, else `platform/bigtable-emulator/cbtemulator` under the
 * Google Cloud SDK root of the `gcloud` on PATH. Undefined (with the reason) when it is not installed.
 */
export function findCbtemulator(): { path: string } | { missing: string } {
  const override = process.env[CBTEMULATOR_ENV];
  if (override) return existsSync(override) ? { path: override } : { missing: `${CBTEMULATOR_ENV}=${override} does not exist` };
  const gcloud = onPath('gcloud');
  if (!gcloud) return { missing: `the Bigtable emulator (cbtemulator) was not found: gcloud is not on PATH; ${INSTALL_HINT}` };
  const sdkRoot = dirname(dirname(realpathSync(gcloud)));
  const candidates = [join(sdkRoot, 'platform', 'bigtable-emulator', 'cbtemulator')];
  if (existsSync(candidates[0] as string)) return { path: candidates[0] as string };
  // gcloud names its root itself when the gcloud on PATH is a wrapper outside the SDK (slow: only then).
  const reported = spawnSync(gcloud, ['info', '--format=value(installation.sdk_root)'], { encoding: 'utf8', timeout: 20_000 }).stdout?.trim();
  if (reported) candidates.push(join(reported, 'platform', 'bigtable-emulator', 'cbtemulator'));
  const found = candidates.find((candidate) => existsSync(candidate));
  return found ? { path: found } : { missing: `the Bigtable emulator (cbtemulator) is not in ${candidates.join(' or ')}; ${INSTALL_HINT}` };
}

/**
 * Starts Google's Bigtable emulator on 127.0.0.1, on `port` or a free one (it picks the port:
 * `-port 0`, and says which on stdout) and resolves once it listens. It keeps no state across restarts.
 * Throws, saying how to install it, when cbtemulator is not installed.
 */
export async function startBigtableEmulator(options: BigtableEmulatorOptions = {}): Promise<BigtableEmulator> {
  const located = options.binary ? { path: options.binary } : findCbtemulator();
  if ('missing' in located) throw new Error(located.missing);
  // An owned child: the emulator ends with this process however it ends (SIGKILL included).
  const child = spawnOwnedChild(located.path, ['-host', '127.0.0.1', '-port', String(options.port ?? 0)], { stdout: 'pipe', stderr: 'pipe' });
  let output = '';
  try {
    const host = await new Promise<string>((resolve, reject) => {
      const timeoutMs = options.startTimeoutMs ?? 30_000;
      const timer = setTimeout(() => reject(new Error(`the Bigtable emulator did not start within ${timeoutMs} ms: ${output.trim()}`)), timeoutMs);
      const read = (chunk: Buffer): void => {
        output = (output + chunk.toString('utf8')).slice(-4_000);
        const match = /running on (\S+:\d+)/.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      child.stdout?.on('data', read);
      child.stderr?.on('data', read);
      child.pid.catch((error: unknown) => {
        clearTimeout(timer);
        reject(new Error(`cannot run the Bigtable emulator ${located.path}: ${error instanceof Error ? error.message : String(error)}`));
      });
      void child.exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`the Bigtable emulator exited (${exit.signal ?? `code ${exit.code}`}): ${output.trim()}`));
      });
    });
    // Keep draining its output, so a chatty emulator never blocks on a full pipe.
    child.stdout?.resume();
    child.stderr?.resume();
    return { host, persistent: false, pid: await child.pid, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
