import { Agent, request } from 'node:https';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
}

/** A keep-alive HTTPS client that trusts exactly one CA, as kube-apiserver trusts the caBundle. */
export class HttpsClient {
  readonly agent: Agent;
  readonly baseUrl: string;

  constructor(baseUrl: string, ca: string) {
    this.baseUrl = baseUrl;
    this.agent = new Agent({ ca, keepAlive: true, maxSockets: 16 });
  }

  send(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    const url = new URL(path, this.baseUrl);
    return new Promise((resolve, reject) => {
      const req = request(url, { method, agent: this.agent, headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as unknown });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  post(path: string, body: unknown, contentType = 'application/json'): Promise<HttpAnswer> {
    return this.send('POST', path, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), { 'content-type': contentType });
  }

  get(path: string): Promise<HttpAnswer> {
    return this.send('GET', path);
  }

  close(): void {
    this.agent.destroy();
  }
}
