import { createServer } from 'node:net';

/**
 * A port that was free on `host` a moment ago, for a backend that must be told its port on the
 * command line (DynamoDB Local, cbtemulator). Another process can take it in between; launchers
 * report a bind failure with the port they tried.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
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
