// A Service as kube-proxy makes it: one address, each TCP connection passed to one of the endpoints
// (TLS passes through untouched, so the caller verifies the endpoint's own certificate).
import { createServer, connect, type Socket } from 'node:net';

export interface ServiceProxy {
  /** https://127.0.0.1:PORT, what the API server's service resolver returns. */
  url: string;
  /** Send new connections to endpoint `i` only (undefined: each in turn); open connections are closed, as when endpoints change. */
  route(i: number | undefined): void;
  close(): Promise<void>;
}

export async function startServiceProxy(endpointPorts: readonly number[], port = 0): Promise<ServiceProxy> {
  const open = new Set<Socket>();
  let only: number | undefined;
  let turn = 0;
  const server = createServer((client) => {
    const port = endpointPorts[only ?? turn++ % endpointPorts.length]!;
    const upstream = connect({ host: '127.0.0.1', port });
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const address = server.address();
  const listening = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `https://127.0.0.1:${listening}`,
    route(i) {
      only = i;
      for (const socket of open) socket.destroy();
    },
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
