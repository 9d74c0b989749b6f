import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { freePort, isFree } from '@k8or/local-clouds';
import { join } from 'node:path';

/**
 * The local backends whose address a ProviderConfig or sandbox.json names. Their ports are part of every object's
 * pinned cloud target, so a persisted sandbox starts them on the same ports each time.
 */
export const SANDBOX_BACKENDS = {
  s3: 'S3 fake',
  // The ProviderConfig names the proxy in front of DynamoDB Local; DynamoDB Local takes a free port.
  dynamodb: 'DynamoDB proxy',
  gcs: 'GCS fake',
  // sandbox.json names it for gsutil and scripts.
  gcsHttps: 'GCS fake HTTPS endpoint',
  bigtable: 'Bigtable emulator',
  azuriteBlob: 'Azurite Blob service',
  azuriteTable: 'Azurite Table service',
} as const;

export type SandboxBackend = keyof typeof SANDBOX_BACKENDS;

/** The file under `--data-dir` that keeps the port of each backend. */
export const PORTS_FILE = 'ports.json';

/** A recorded port another process holds: the backend starts on a new port this time. */
export interface PortTaken {
  backend: SandboxBackend;
  port: number;
  /** What happened and what to do, for the user. */
  message: string;
}

/**
 * The ports of the sandbox's backends. With a data dir, `portFor` gives each backend the port it had
 * last time (from `DIR/ports.json`) when that port is free, and `save` records the ports of this run.
 * A recorded port that another process holds is reported through `onTaken` and the backend gets a new
 * port; the record keeps the old one, so once it is free again a restart returns to it (and the
 * objects pinned to it carry on). Without a data dir every backend gets a free port.
 */
export class SandboxPorts {
  private readonly recorded: Partial<Record<SandboxBackend, number>>;
  private readonly current: Partial<Record<SandboxBackend, number>> = {};
  private readonly taken = new Set<SandboxBackend>();
  /** The lasting ports given out in this run, so no two backends are given one port. */
  private readonly given = new Set<number>();

  constructor(
    private readonly dataDir: string | undefined,
    private readonly onTaken: (taken: PortTaken) => void = () => undefined,
  ) {
    this.recorded = dataDir ? readPorts(join(dataDir, PORTS_FILE)) : {};
  }

  /**
   * The port to start `backend` on: its recorded port when free; else, with a data dir, a free
   * lasting port (`freePort`: below the kernel's ephemeral range); else undefined (the backend takes any free port).
   */
  async portFor(backend: SandboxBackend): Promise<number | undefined> {
    const port = this.recorded[backend];
    if (port === undefined) return this.dataDir ? this.lastingPort() : undefined;
    if (await isFree(port)) return port;
    this.taken.add(backend);
    this.onTaken({ backend, port, message: takenMessage(backend, port, this.file()) });
    return undefined;
  }

  /** The port `backend` listens on in this run, from its endpoint (`http://host:port/...` or `host:port`). */
  listening(backend: SandboxBackend, endpoint: string): void {
    this.current[backend] = portOf(endpoint);
  }

  /**
   * Writes `DIR/ports.json` (nothing without a data dir): the ports of this run, except where a
   * recorded port was taken (that one stays), and the recorded ports of backends that did not start.
   */
  save(): void {
    if (!this.dataDir) return;
    const ports: Partial<Record<SandboxBackend, number>> = { ...this.recorded };
    for (const [backend, port] of Object.entries(this.current) as [SandboxBackend, number][]) {
      if (!this.taken.has(backend)) ports[backend] = port;
    }
    mkdirSync(this.dataDir, { recursive: true });
    writeFileSync(this.file(), `${JSON.stringify(ports, null, 2)}\n`);
  }

  /** A free port below the ephemeral range (`freePort`), where it stays free until the sandbox starts again. */
  private async lastingPort(): Promise<number> {
    const port = await freePort('127.0.0.1', this.given);
    this.given.add(port);
    return port;
  }

  private file(): string {
    return join(this.dataDir ?? '', PORTS_FILE);
  }
}

/** `{ port }` for a launcher's options, or nothing (the launcher picks a free port). */
export function portOption(port: number | undefined): { port?: number } {
  return port === undefined ? {} : { port };
}

function takenMessage(backend: SandboxBackend, port: number, file: string): string {
  return (
    `port ${port}, recorded in ${file} for the ${SANDBOX_BACKENDS[backend]}, is in use by another process, ` +
    `so the ${SANDBOX_BACKENDS[backend]} starts on a new port this time. Objects created through it before ` +
    `stop with TargetChanged (their ProviderConfig now points at the new port) until you free port ${port} ` +
    `(find the process: ss -ltnp 'sport = :${port}') and restart the sandbox; the record keeps port ${port}.`
  );
}

/** The recorded ports; a missing file is none, an unreadable one is an error that names it. */
function readPorts(file: string): Partial<Record<SandboxBackend, number>> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${error instanceof Error ? error.message : String(error)}); fix it or delete it to give every backend a new port`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file} must hold an object of ports by backend; fix it or delete it`);
  const ports: Partial<Record<SandboxBackend, number>> = {};
  for (const [backend, port] of Object.entries(parsed)) {
    if (!(backend in SANDBOX_BACKENDS)) continue;
    if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
      throw new Error(`${file}: the port of ${backend} must be a whole number from 1 to 65535, got ${JSON.stringify(port)}; fix it or delete the entry`);
    }
    ports[backend as SandboxBackend] = port as number;
  }
  return ports;
}

function portOf(endpoint: string): number {
  const url = new URL(endpoint.includes('://') ? endpoint : `http://${endpoint}`);
  const port = Number(url.port);
  if (!Number.isInteger(port) || port < 1) throw new Error(`no port in the backend endpoint ${endpoint}`);
  return port;
}
