// Shared test helpers: a sandbox with a client-node KubeConfig, raw HTTPS requests, and a test CRD.
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { startSandbox, type Sandbox, type SandboxOptions } from '@k8or/apiserver';

export interface TestSandbox {
  sandbox: Sandbox;
  kc: KubeConfig;
}

export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const sandbox = await startSandbox({ recordRequests: true, ...options });
  const kc = new KubeConfig();
  kc.loadFromString(sandbox.kubeconfig);
  return { sandbox, kc };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // parsed JSON body (undefined when not JSON)
  json: Record<string, unknown> | undefined;
}

export interface RawRequest {
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string | string[]>;
  token?: string | null;
}

/** One HTTPS request to the sandbox, trusting its CA and sending its bearer token (unless token: null). */
export function request(sandbox: Sandbox, method: string, path: string, options: RawRequest = {}): Promise<RawResponse> {
  const url = new URL(path, sandbox.url);
  const headers: Record<string, string | string[]> = { Accept: 'application/json', ...options.headers };
  const token = options.token === undefined ? sandbox.token : options.token;
  if (token !== null) headers['Authorization'] = `Bearer ${token}`;
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.isBuffer(options.body) ? options.body : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: sandbox.caPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown> | undefined;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A small CRD for server semantics: namespaced Widget with a status subresource and printer columns. */
export function widgetCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList', shortNames: ['wd'], categories: ['all-widgets'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer', minimum: 0, maximum: 100 },
                    color: { type: 'string', enum: ['red', 'green', 'blue'], default: 'red' },
                    tags: { type: 'array', items: { type: 'string' } },
                    rules: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['id'],
                      items: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, days: { type: 'integer' } } },
                    },
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    phase: { type: 'string' },
                    conditions: {
                      type: 'array',
                      items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** Create the Widget CRD and wait until it is served. */
export async function installWidgetCrd(sandbox: Sandbox): Promise<void> {
  const res = await request(sandbox, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: widgetCrd() });
  if (res.status !== 201) throw new Error(`creating the Widget CRD: ${res.status} ${res.text}`);
  await eventually(async () => (await request(sandbox, 'GET', '/apis/example.com/v1')).status === 200);
}

export function widget(name: string, spec: Record<string, unknown> = { size: 1 }, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: 'default', ...metadata }, spec };
}

export const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

/** Poll until `check` holds (generous timeout; no timing assertions). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function metadataOf(obj: Record<string, unknown> | undefined): Record<string, unknown> {
  return (obj?.['metadata'] ?? {}) as Record<string, unknown>;
}

export interface WatchEvent { type: string; object: Record<string, unknown> }

/** Open a raw watch and collect its events until `stop()` or the server ends it. */
export function openWatch(sandbox: Sandbox, path: string): { events: WatchEvent[]; ended: Promise<void>; stop(): void } {
  const events: WatchEvent[] = [];
  let req: ReturnType<typeof https.request> | undefined;
  const ended = new Promise<void>((resolve) => {
    req = https.request(new URL(path, sandbox.url), { headers: { Authorization: `Bearer ${sandbox.token}` }, ca: sandbox.caPem, agent: false }, (res) => {
      let buffer = '';
      res.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line) as WatchEvent);
        }
      });
      res.on('end', () => resolve());
      res.on('error', () => resolve());
      res.on('aborted', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
  return { events, ended, stop: () => req?.destroy() };
}

