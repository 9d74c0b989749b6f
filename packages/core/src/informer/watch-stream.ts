import type http from 'node:http';
import https from 'node:https';
import type { KubeAccess } from '../kube/access.js';
import { KubeApiError } from '../kube/rest.js';
import { nodeHttp } from '../util/node-http.js';

/** How one watch stream ended. */
export type WatchStreamEnd =
  /** The server closed the stream (its timeoutSeconds passed, or it went away). */
  | { reason: 'closed' }
  /** Nothing arrived, not even a bookmark, for `inactivityMs`: presumed dead and aborted. */
  | { reason: 'inactive' }
  /** A non-200 answer (a KubeApiError with its status), a broken connection or an undecodable line. */
  | { reason: 'error'; error: unknown }
  /** `abort()` was called. */
  | { reason: 'aborted' };

export interface WatchStreamOptions {
  /** Query parameters besides `watch=true` (resourceVersion, allowWatchBookmarks, timeoutSeconds, selectors). */
  query: Record<string, string | undefined>;
  /** Abort the stream when no byte arrives for this long. */
  inactivityMs: number;
  userAgent: string;
  /**
   * The event types to decode and tell (ERROR always is); default every one. Another type's event is
   * dropped undecoded where its line begins with its type (`{"type":"DELETED",`, as the API server
   * writes it), else decoded and dropped.
   */
  types?: ReadonlySet<string>;
  /** One decoded event: `type` (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and its object. */
  onEvent(type: string, object: unknown): void;
}

export interface WatchStream {
  /** Resolves once, when the stream has ended for any reason. */
  readonly ended: Promise<WatchStreamEnd>;
  abort(): void;
}

/**
 * One watch request (`?watch=true`) as a stream of newline-delimited JSON
 * events, over node:https with the kubeconfig's server, TLS and credentials.
 * Lighter than client-node's `Watch` (which brings undici and the whole
 * generated client into the process), and it owns its inactivity timeout.
 */
export function openWatchStream(access: KubeAccess, path: string, options: WatchStreamOptions): WatchStream {
  const wanted = options.types && new Set([...options.types, 'ERROR']);
  const unwantedPrefixes = wanted && ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'].filter((type) => !wanted.has(type)).map((type) => `{"type":"${type}",`);
  let request: http.ClientRequest | undefined;
  let finish: (end: WatchStreamEnd) => void = () => undefined;
  const ended = new Promise<WatchStreamEnd>((resolve) => {
    let done = false;
    let inactivity: NodeJS.Timeout | undefined;
    finish = (end) => {
      if (done) return;
      done = true;
      clearTimeout(inactivity);
      // destroy() without an error: an AbortSignal would destroy the socket *with* an AbortError,
      // which the socket emits as 'error' after the request has let go of it (an unhandled
      // 'error' ended the operator process under API server faults).
      request?.destroy();
      resolve(end);
    };
    // One timer for the stream, not one per chunk: each chunk only notes the time, and the
    // timer, when it fires, sleeps again for whatever is left of the window.
    let lastByteAt = 0;
    const watchInactivity = (): void => {
      const quiet = performance.now() - lastByteAt;
      if (quiet >= options.inactivityMs) finish({ reason: 'inactive' });
      else inactivity = setTimeout(watchInactivity, options.inactivityMs - quiet);
    };
    const touch = (): void => {
      lastByteAt = performance.now();
      if (inactivity === undefined) inactivity = setTimeout(watchInactivity, options.inactivityMs);
    };
    void (async () => {
      const cluster = access.getCurrentCluster();
      if (!cluster) throw new Error('kubeconfig has no current cluster');
      const base: https.RequestOptions = {};
      await access.applyToHTTPSOptions(base);
      if (done) return;
      const url = new URL(cluster.server.replace(/\/$/, '') + path);
      url.searchParams.set('watch', 'true');
      for (const [key, value] of Object.entries(options.query)) if (value !== undefined) url.searchParams.set(key, value);
      const headers = { ...(base.headers as http.OutgoingHttpHeaders | undefined), accept: 'application/json', 'user-agent': options.userAgent };
      const transport = url.protocol === 'http:' ? nodeHttp : https;
      touch();
      request = transport.request(url, { ...base, method: 'GET', headers }, (response) => {
        response.setEncoding('utf8');
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          let text = '';
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => finish({ reason: 'error', error: KubeApiError.fromResponse('WATCH', path, status, parseOrText(text)) }));
          return;
        }
        let buffered = '';
        response.on('data', (chunk: string) => {
          touch();
          buffered += chunk;
          let start = 0;
          for (let newline = buffered.indexOf('\n'); newline >= 0 && !done; newline = buffered.indexOf('\n', start)) {
            const line = buffered.slice(start, newline);
            start = newline + 1;
            if (line.trim() === '') continue;
            // A large object (a list item, thousands of them in a relabel) not asked for is never decoded.
            if (unwantedPrefixes?.some((prefix) => line.startsWith(prefix))) continue;
            let event: { type?: unknown; object?: unknown };
            try {
              event = JSON.parse(line) as { type?: unknown; object?: unknown };
            } catch (error) {
              finish({ reason: 'error', error: new Error(`watch ${path}: undecodable event: ${line.slice(0, 200)}`, { cause: error }) });
              return;
            }
            const type = typeof event.type === 'string' ? event.type : '';
            if (!wanted || wanted.has(type)) options.onEvent(type, event.object);
          }
          buffered = buffered.slice(start);
        });
        response.on('end', () => finish({ reason: 'closed' }));
        response.on('error', (error) => finish({ reason: 'error', error }));
      });
      request.on('error', (error) => finish({ reason: 'error', error }));
      request.on('socket', (socket) => socket.on('error', (error) => finish({ reason: 'error', error })));
      request.end();
    })().catch((error: unknown) => finish({ reason: 'error', error }));
  });
  return { ended, abort: () => finish({ reason: 'aborted' }) };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
