// An HTTP proxy in front of the sandbox API server that holds the requests a test picks until it
// lets them go: a client's request can then be made to wait at a point of the test's choosing.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { Sandbox } from '@k8or/apiserver';

export interface HoldingProxy {
  /** A kubeconfig whose server is this proxy, with the sandbox's credentials. */
  kubeConfig: KubeConfig;
  /** How many requests are held now. */
  readonly held: number;
  /** Sends on every held request and holds no more. */
  release(): void;
  close(): Promise<void>;
}

/** The counting of `startHoldingProxy`'s `counting`. */
export interface CountingProxy {
  /** The most requests it counted in flight at once, since it started or `countAfresh()`. */
  readonly mostInFlight: number;
  countAfresh(): void;
}

/**
 * Holds each request for which `hold(method, url)` is true (an URL with path and query), until
 * `release()`. With `counting`, each request it picks is also sent on 50 ms late, so that requests
 * a client sends together are in flight together, and counted while in flight (from its arrival to
 * the end of its answer), the most at once kept (`mostInFlight`).
 */
export async function startHoldingProxy(sandbox: Sandbox, hold: (method: string, url: URL) => boolean, counting?: (method: string, url: URL) => boolean): Promise<HoldingProxy & CountingProxy> {
  const upstream = new URL(sandbox.url);
  let holding = true;
  let waiting: (() => void)[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    if (counting?.(req.method ?? 'GET', url)) {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      res.on('close', () => inFlight--);
    }
    const forward = (): void => {
      const onward = https.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host }, ca: sandbox.caPem },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      onward.on('error', () => res.destroy());
      res.on('close', () => onward.destroy());
      req.pipe(onward);
    };
    if (holding && hold(req.method ?? 'GET', url)) waiting.push(forward);
    else if (counting?.(req.method ?? 'GET', url)) setTimeout(forward, 50);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // client-node allows a plain-HTTP server only with skipTLSVerify (there is no TLS to verify).
    clusters: [{ name: 'proxy', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'admin', token: sandbox.token }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'admin' }],
    currentContext: 'proxy',
  });
  return {
    kubeConfig,
    get held() {
      return waiting.length;
    },
    get mostInFlight() {
      return mostInFlight;
    },
    countAfresh() {
      mostInFlight = inFlight;
    },
    release() {
      holding = false;
      const now = waiting;
      waiting = [];
      for (const forward of now) forward();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
