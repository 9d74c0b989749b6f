import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** A fake's HTTP server, listening. */
export interface ServingHttp {
  /** `http://host:port` (`https://` with `tls`), the address the SDKs are pointed at. */
  endpoint: string;
  /** Closes the server and every connection it holds. */
  close(): Promise<void>;
}

/** A serving certificate and its key (PEM), for HTTPS. */
export interface ServingTls {
  certPem: string;
  keyPem: string;
}

/**
 * Serves `handle` on `host`:`port` (default 127.0.0.1 and a free port, so
 * several test runs share a machine), over HTTPS when `tls` is given. A handler
 * that throws answers 500 with the error, as a cloud's internal error would,
 * rather than hanging the client.
 */
export async function serveHttp(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  options: { host?: string; port?: number; tls?: ServingTls } = {},
): Promise<ServingHttp> {
  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  };
  const server = options.tls ? createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, listener) : createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    endpoint: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
