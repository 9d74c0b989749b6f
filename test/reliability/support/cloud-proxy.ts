// A recording HTTP proxy in front of a local cloud backend: the operator talks to the proxy, the
// proxy forwards every request unchanged and records what the cloud did. It gives the suites two
// things the backends do not: a count of the cloud writes that succeeded per resource (so "nothing
// was done twice" is a number), and a hook on each call that can kill the operator while the call
// is in flight (after the cloud acted, before the operator hears the answer: the worst moment).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What one cloud call did, in the backend's own terms. */
export interface CloudCall {
  /** `CreateBucket`, `DeleteBucket`, `CreateTable`, `DeleteTable`, ... or `other`. */
  operation: string;
  /** The bucket or table the call names, when it names one. */
  resource: string | undefined;
  /** The backend's HTTP status; 0 while in flight. */
  status: number;
}

/** Classifies a request (method, path, headers, body) as one operation on one resource. */
export type CallClassifier = (method: string, url: URL, headers: http.IncomingHttpHeaders, body: Buffer) => { operation: string; resource: string | undefined };

export interface CloudProxy {
  /** The endpoint to give the operator instead of the backend's. */
  endpoint: string;
  readonly calls: readonly CloudCall[];
  /**
   * Called once the backend has answered, before the answer is passed on. A returned promise holds
   * the answer back until it settles (a kill hook kills the operator there, so the answer is lost).
   */
  onAnswered: ((call: CloudCall) => void | Promise<void>) | undefined;
  /** Successful calls of one operation, per resource. */
  succeeded(operation: string): Map<string, number>;
  stop(): Promise<void>;
}

/** S3 path-style calls: `PUT /bucket` is CreateBucket, `DELETE /bucket` DeleteBucket, `PUT /bucket/key` PutObject. */
export const classifyS3: CallClassifier = (method, url) => {
  const [bucket, ...key] = url.pathname.replace(/^\//, '').split('/');
  const subresource = [...url.searchParams.keys()].filter((k) => k !== 'x-id').sort().join(',');
  if (!bucket) return { operation: method === 'GET' ? 'ListBuckets' : 'other', resource: undefined };
  const onBucket = key.length === 0 || (key.length === 1 && key[0] === '');
  if (onBucket && subresource === '') {
    const operation = ({ PUT: 'CreateBucket', DELETE: 'DeleteBucket', HEAD: 'HeadBucket', GET: 'ListObjects' } as Record<string, string>)[method] ?? 'other';
    return { operation, resource: bucket };
  }
  if (onBucket) return { operation: `${method} ?${subresource}`, resource: bucket };
  return { operation: `${method} object`, resource: bucket };
};

/** DynamoDB JSON calls: the operation is the X-Amz-Target's, the resource its TableName. */
export const classifyDynamoDb: CallClassifier = (_method, _url, headers, body) => {
  const target = String(headers['x-amz-target'] ?? '');
  const operation = target.split('.').pop() || 'other';
  let resource: string | undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { TableName?: unknown; ResourceArn?: unknown };
    if (typeof parsed.TableName === 'string') resource = parsed.TableName;
    else if (typeof parsed.ResourceArn === 'string') resource = parsed.ResourceArn.split('/').pop();
  } catch {
    // not JSON: no table named
  }
  return { operation, resource };
};

export async function startCloudProxy(backend: string, classify: CallClassifier): Promise<CloudProxy> {
  const target = new URL(backend);
  const calls: CloudCall[] = [];
  const proxy: CloudProxy = {
    endpoint: '',
    calls,
    onAnswered: undefined,
    succeeded: (operation) => {
      const counts = new Map<string, number>();
      for (const call of calls) {
        if (call.operation !== operation || call.resource === undefined || call.status < 200 || call.status >= 300) continue;
        counts.set(call.resource, (counts.get(call.resource) ?? 0) + 1);
      }
      return counts;
    },
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', target);
      const call: CloudCall = { ...classify(req.method ?? 'GET', url, req.headers, body), status: 0 };
      calls.push(call);
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
        (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
          answer.on('end', () => {
            call.status = answer.statusCode ?? 0;
            const pass = (): void => {
              if (res.destroyed) return;
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              res.end(Buffer.concat(answerChunks));
            };
            Promise.resolve(proxy.onAnswered?.(call)).then(pass, pass);
          });
        },
      );
      upstream.on('error', () => {
        call.status = 502;
        if (!res.headersSent) res.writeHead(502).end();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
