import type http from 'node:http';
import https from 'node:https';
import { hostnameOf } from './connections.js';
import { nodeHttp } from '../util/node-http.js';

/** One request as `exchangeJson` sends it. */
export interface JsonExchange {
  server: URL;
  method: string;
  /** The path as the caller named it, for error messages. */
  path: string;
  /** The path as sent: the server URL's prefix, the path and the query. */
  requestPath: string;
  headers: http.OutgoingHttpHeaders;
  /** Sent as JSON when defined. */
  body: unknown;
  contentType: string | undefined;
  /** Abort when the whole answer has not arrived in this long. */
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** Options for every request (TLS, auth) besides the agent's own. */
  base: https.RequestOptions;
  /** Keep-alive connections; node's global agent when undefined. */
  agent: http.Agent | undefined;
}

/** The HTTP status and the decoded JSON body (the raw text when it is not JSON; undefined when empty). */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

/**
 * Sends one request and resolves with the server's whole answer, whatever its
 * status. Rejects with the abort reason on abort or past the deadline, and
 * with the connection's error when it breaks before the answer has ended:
 * the server may have acted on the request, so that is never taken for an
 * answer.
 */
export function exchangeJson(request: JsonExchange): Promise<JsonAnswer> {
  if (request.signal?.aborted) return Promise.reject(request.signal.reason as Error);
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers = payload ? { ...request.headers, 'content-type': request.contentType ?? 'application/json', 'content-length': payload.length } : request.headers;
  const { server } = request;
  return new Promise<JsonAnswer>((resolve, reject) => {
    const answer = new AnswerCollector(resolve, reject);
    const outgoing = (server.protocol === 'http:' ? nodeHttp : https).request(
      {
        ...request.base,
        protocol: server.protocol,
        hostname: hostnameOf(server),
        port: server.port,
        path: request.requestPath,
        method: request.method,
        headers,
        ...(request.agent ? { agent: request.agent } : {}),
      },
      (response) => answer.receive(response),
    );
    answer.start(outgoing, request.timeoutMs, `${request.method} ${request.path}: no answer within ${request.timeoutMs} ms`, request.signal);
    outgoing.end(payload);
  });
}

/**
 * Collects one answer; settles its promise once, on the answer's end, an error, an abort or the
 * deadline. Once settled it holds nothing of the request: node's https Agent keeps the request
 * that opened a socket reachable while the socket lives, and the request holds this collector
 * through its listeners, so the answer (a list page, decoded) and its buffers would otherwise live
 * as long as the kept-alive socket.
 */
class AnswerCollector {
  #resolve: ((answer: JsonAnswer) => void) | undefined;
  #reject: ((error: unknown) => void) | undefined;
  #outgoing: http.ClientRequest | undefined;
  #chunks: Buffer[] = [];
  #timer: NodeJS.Timeout | undefined;
  #signal: AbortSignal | undefined;

  constructor(resolve: (answer: JsonAnswer) => void, reject: (error: unknown) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** One plain timer per request, and the caller's signal through one listener per signal (see `inFlight`). */
  start(outgoing: http.ClientRequest, timeoutMs: number, timeoutMessage: string, signal: AbortSignal | undefined): void {
    this.#outgoing = outgoing;
    outgoing.on('error', (error) => this.#fail(error));
    this.#timer = setTimeout(() => this.abort(new Error(timeoutMessage)), timeoutMs);
    if (signal) {
      this.#signal = signal;
      abortWith(signal, this);
    }
  }

  receive(response: http.IncomingMessage): void {
    response.on('data', (chunk: Buffer) => this.#chunks.push(chunk));
    response.on('error', (error) => this.#fail(error));
    response.on('end', () => {
      const chunks = this.#chunks;
      const resolve = this.#settle()?.resolve;
      if (!resolve) return;
      const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the raw text for the error message
      }
      resolve({ status: response.statusCode ?? 0, body });
    });
  }

  /** Ends the request at once (the caller's abort, the deadline). */
  abort(reason: unknown): void {
    const outgoing = this.#outgoing;
    const reject = this.#settle()?.reject;
    if (!reject) return;
    outgoing?.destroy(reason instanceof Error ? reason : new Error(String(reason)));
    reject(reason);
  }

  #fail(error: Error): void {
    this.#settle()?.reject(error);
  }

  /** The promise's settlers the first time, undefined after: everything the request held is let go. */
  #settle(): { resolve: (answer: JsonAnswer) => void; reject: (error: unknown) => void } | undefined {
    const [resolve, reject] = [this.#resolve, this.#reject];
    if (!resolve || !reject) return undefined;
    this.#resolve = this.#reject = this.#outgoing = undefined;
    this.#chunks = [];
    clearTimeout(this.#timer);
    if (this.#signal) inFlight.get(this.#signal)?.delete(this);
    this.#signal = undefined;
    return { resolve, reject };
  }
}

/**
 * The requests in flight under each abort signal. A signal gets one listener
 * however many requests it covers: a controller's long-lived signal covers
 * every request of every reconcile, and the listener node:https adds and
 * removes per request for its `signal` option showed in the engine's profile.
 */
const inFlight = new WeakMap<AbortSignal, Set<AnswerCollector>>();

function abortWith(signal: AbortSignal, answer: AnswerCollector): void {
  let answers = inFlight.get(signal);
  if (!answers) {
    const covered = new Set<AnswerCollector>();
    answers = covered;
    inFlight.set(signal, covered);
    signal.addEventListener(
      'abort',
      () => {
        for (const each of [...covered]) each.abort(signal.reason);
      },
      { once: true },
    );
  }
  answers.add(answer);
}
