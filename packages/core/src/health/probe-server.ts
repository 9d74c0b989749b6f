import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CoreMetrics } from '../metrics/core-metrics.js';
import { nodeHttp } from '../util/node-http.js';
import type { HealthChecks, HealthReport } from './health-checks.js';

export interface ProbeServerOptions {
  /** 0 for an ephemeral port. */
  port: number;
  /** Default 0.0.0.0 (kubelet probes and Prometheus come from outside the pod). */
  host?: string;
  health: HealthChecks;
  /** Serves `/metrics` when given. */
  metrics?: CoreMetrics;
}

export interface ProbeServer {
  /** `http://host:port` */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `/healthz` and `/readyz` (200 when every check passes, 500 otherwise;
 * `?verbose` lists each check as the Kubernetes API server does, `/readyz/<name>`
 * runs one check) and `/metrics` in Prometheus text format.
 */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  const server = nodeHttp.createServer((request, response) => {
    void handle(options, request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost === '0.0.0.0' ? '127.0.0.1' : urlHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(options: ProbeServerOptions, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://probe');
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    response.end('method not allowed\n');
    return;
  }
  const [, endpoint, checkName, ...rest] = url.pathname.split('/');
  if ((endpoint === 'healthz' || endpoint === 'readyz') && rest.length === 0) {
    const report = endpoint === 'healthz' ? options.health.healthz() : options.health.readyz();
    writeReport(response, endpoint, report, checkName || undefined, url.searchParams.has('verbose'));
    return;
  }
  if (url.pathname === '/metrics' && options.metrics) {
    const body = await options.metrics.metrics();
    response.writeHead(200, { 'content-type': options.metrics.contentType });
    response.end(body);
    return;
  }
  response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  response.end('not found\n');
}

function writeReport(response: http.ServerResponse, endpoint: string, report: HealthReport, only: string | undefined, verbose: boolean): void {
  const text = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' };
  if (only !== undefined) {
    const passed = report.checks[only];
    if (passed === undefined) {
      response.writeHead(404, text);
      response.end(`no ${endpoint} check named ${only}\n`);
      return;
    }
    response.writeHead(passed ? 200 : 500, text);
    response.end(passed ? 'ok\n' : `[-]${only} failed\n`);
    return;
  }
  const lines = Object.entries(report.checks).map(([name, passed]) => `[${passed ? '+' : '-'}]${name} ${passed ? 'ok' : 'failed'}`);
  response.writeHead(report.ok ? 200 : 500, text);
  if (report.ok && !verbose) {
    response.end('ok\n');
    return;
  }
  const failedOnly = report.ok ? lines : lines.filter((line) => line.startsWith('[-]'));
  const shown = verbose ? lines : failedOnly;
  response.end(`${shown.join('\n')}${shown.length ? '\n' : ''}${endpoint} check ${report.ok ? 'passed' : 'failed'}\n`);
}
