import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A canned answer: status, headers and body. */
export interface CannedAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * An HTTP proxy in front of one local backend that forwards every request, except those for which
 * `answer` returns a canned answer (given the request's path and query): a cloud's answers that
 * its local backend never gives, such as an empty page with a continuation token. `requests` keeps every
 * request's path and query, in order.
 */
export async function startCannedProxy(target: string, answer: (url: string) => CannedAnswer | undefined): Promise<{ endpoint: string; requests: string[]; close(): Promise<void> }> {
  const base = new URL(target);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    const canned = answer(url);
    if (canned) {
      req.resume();
      res.writeHead(canned.status, { ...canned.headers, 'content-length': String(Buffer.byteLength(canned.body)) });
      res.end(canned.body);
      return;
    }
    const upstream = httpRequest({ host: base.hostname, port: base.port, method: req.method, path: url, headers: req.headers }, (upstreamAnswer) => {
      res.writeHead(upstreamAnswer.statusCode ?? 502, upstreamAnswer.headers);
      upstreamAnswer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}${base.pathname}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
