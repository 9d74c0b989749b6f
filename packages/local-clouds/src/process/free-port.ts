import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port `freePort` gives. */
const LASTING_PORTS_FROM = 20_000;

/**
 * A port free on `host` now, for a backend that must be told its port on the command line
 * (DynamoDB Local, cbtemulator, Azurite) or keep it across restarts (a persisted sandbox). It is
 * taken below the kernel's ephemeral range, where the kernel never puts another program's port-0
 * listener or outgoing connection, so it stays free until the backend binds it (or starts again);
 * `avoid` are ports already given out. Where that range is empty or full, a port the kernel gives
 * (another process can take that one in between; launchers report a bind failure with the port).
 */
export async function freePort(host = '127.0.0.1', avoid: ReadonlySet<number> = new Set()): Promise<number> {
  const below = ephemeralPortsFrom();
  for (let attempt = 0; below > LASTING_PORTS_FROM && attempt < 64; attempt += 1) {
    const port = LASTING_PORTS_FROM + Math.floor(Math.random() * (below - LASTING_PORTS_FROM));
    if (!avoid.has(port) && (await isFree(port, host))) return port;
  }
  return await kernelPort(host);
}

/** True when nothing listens on `host`:`port`. */
export function isFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(false);
      else reject(error);
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The first port of the kernel's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range,
 * 32768 by default); elsewhere 32768, below both Linux's default and the IANA range (49152) others use.
 */
export function ephemeralPortsFrom(): number {
  try {
    const from = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(from) && from > 0) return Math.min(from, 32_768);
  } catch {
    // not Linux
  }
  return 32_768;
}

function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
