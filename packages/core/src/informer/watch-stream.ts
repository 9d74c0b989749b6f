import type https from 'node:https';
import type { Dispatcher } from 'undici';
import type { KubeAccess } from '../kube/access.js';
import { requestHeaders, requestPath, sharedPool, tlsOptionsOf } from '../kube/connections.js';
import { KubeApiError } from '../kube/rest.js';

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
 * events, with the kubeconfig's server, TLS and credentials, over the same
 * connection pools as core's other requests (undici's dispatch callbacks: the
 * body's chunks arrive with no stream objects in between). Lighter than
 * client-node's `Watch` (which brings the whole generated client into the
 * process), and it owns its inactivity timeout.
 */
export function openWatchStream(access: KubeAccess, path: string, options: WatchStreamOptions): WatchStream {
  let finish: (end: WatchStreamEnd) => void = () => undefined;
  const ended = new Promise<WatchStreamEnd>((resolve) => {
    let done = false;
    let inactivity: NodeJS.Timeout | undefined;
    let request: Dispatcher.DispatchController | undefined;
    finish = (end) => {
      if (done) return;
      done = true;
      clearTimeout(inactivity);
      // undici ends the connection and reports the abort to onResponseError, which finds the stream done.
      request?.abort(new Error(`watch ${path}: ${end.reason}`));
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
      const server = new URL(cluster.server);
      const lines = new EventLines(path, options.onEvent, () => done, (error) => finish({ reason: 'error', error }));
      let status = 0;
      let errorBody = '';
      touch();
      sharedPool(server, tlsOptionsOf(base)).dispatch(
        { origin: server.origin, method: 'GET', path: requestPath(server, path, { watch: 'true', ...options.query }), headers: requestHeaders(base, options.userAgent) },
        {
          onRequestStart: (controller) => {
            if (done) controller.abort(new Error(`watch ${path}: ended before it started`));
            else request = controller;
          },
          onResponseStart: (_controller, statusCode) => {
            status = statusCode;
          },
          onResponseData: (_controller, chunk) => {
            if (done) return;
            touch();
            if (status === 200) lines.push(chunk);
            else errorBody += chunk.toString('utf8');
          },
          onResponseEnd: () => {
            if (status === 200) finish({ reason: 'closed' });
            else finish({ reason: 'error', error: KubeApiError.fromResponse('WATCH', path, status, parseOrText(errorBody)) });
          },
          onResponseError: (_controller, error) => finish({ reason: 'error', error }),
        },
      );
    })().catch((error: unknown) => finish({ reason: 'error', error }));
  });
  return { ended, abort: () => finish({ reason: 'aborted' }) };
}

const NEWLINE = 0x0a;

/**
 * Splits a watch body into lines and decodes each as one event. Lines are cut
 * at the newline byte (never part of a multi-byte UTF-8 character), so a
 * character split across two chunks is decoded whole.
 */
class EventLines {
  readonly #path: string;
  readonly #onEvent: (type: string, object: unknown) => void;
  readonly #stopped: () => boolean;
  readonly #fail: (error: Error) => void;
  /** The start of a line whose end has not arrived yet. */
  #partial: Buffer | undefined;

  constructor(path: string, onEvent: (type: string, object: unknown) => void, stopped: () => boolean, fail: (error: Error) => void) {
    this.#path = path;
    this.#onEvent = onEvent;
    this.#stopped = stopped;
    this.#fail = fail;
  }

  push(chunk: Buffer): void {
    const data = this.#partial ? Buffer.concat([this.#partial, chunk]) : chunk;
    let start = 0;
    for (let newline = data.indexOf(NEWLINE); newline >= 0 && !this.#stopped(); newline = data.indexOf(NEWLINE, start)) {
      const line = data.toString('utf8', start, newline);
      start = newline + 1;
      if (line.trim() === '') continue;
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(line) as { type?: unknown; object?: unknown };
      } catch (error) {
        this.#fail(new Error(`watch ${this.#path}: undecodable event: ${line.slice(0, 200)}`, { cause: error }));
        return;
      }
      this.#onEvent(typeof event.type === 'string' ? event.type : '', event.object);
    }
    // A copy, not a view: a view would keep the whole chunk alive until the line ends.
    this.#partial = start < data.length ? Buffer.from(data.subarray(start)) : undefined;
  }
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
