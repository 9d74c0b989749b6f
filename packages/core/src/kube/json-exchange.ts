import type { Dispatcher } from 'undici';

/** One request through an undici dispatcher, as `exchangeJson` sends it. */
export interface JsonExchange {
  /** The server's origin (`https://host:port`). */
  origin: string;
  method: string;
  /** The path as the caller named it, for error messages. */
  path: string;
  /** The path as sent: the server URL's prefix, the path and the query. */
  requestPath: string;
  /** Flat name, value list. */
  headers: string[];
  /** Sent as JSON when defined. */
  body: unknown;
  contentType: string | undefined;
  /** Abort when the whole answer has not arrived in this long. */
  timeoutMs: number;
  signal: AbortSignal | undefined;
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
 * answer. Handles the response as undici's dispatch callbacks deliver it, with
 * no stream objects: per request that costs the client about a third less CPU
 * than node:https (bench/kube-client.bench.ts).
 */
export function exchangeJson(dispatcher: Dispatcher, request: JsonExchange): Promise<JsonAnswer> {
  if (request.signal?.aborted) return Promise.reject(request.signal.reason as Error);
  const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers = payload ? [...request.headers, 'content-type', request.contentType ?? 'application/json'] : request.headers;
  return new Promise<JsonAnswer>((resolve, reject) => {
    const handler = new JsonAnswerHandler(resolve, reject);
    handler.deadline(request.timeoutMs, `${request.method} ${request.path}: no answer within ${request.timeoutMs} ms`);
    if (request.signal) abortWith(request.signal, handler);
    try {
      dispatcher.dispatch({ origin: request.origin, method: request.method, path: request.requestPath, headers, body: payload ?? null }, handler);
    } catch (error) {
      handler.abort(error);
    }
  });
}

/** Collects one answer; settles its promise once, on the answer's end, an error, an abort or the deadline. */
class JsonAnswerHandler implements Dispatcher.DispatchHandler {
  readonly #resolve: (answer: JsonAnswer) => void;
  readonly #reject: (error: unknown) => void;
  #controller: Dispatcher.DispatchController | undefined;
  /** Why the request was aborted before undici handed it its controller. */
  #abortedWith: Error | undefined;
  #timer: NodeJS.Timeout | undefined;
  #settled = false;
  #status = 0;
  readonly #chunks: Buffer[] = [];
  /** The signal whose abort would end this request, while it is in flight. */
  signal: AbortSignal | undefined;

  constructor(resolve: (answer: JsonAnswer) => void, reject: (error: unknown) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  deadline(timeoutMs: number, message: string): void {
    this.#timer = setTimeout(() => this.abort(new Error(message)), timeoutMs);
  }

  /** Ends the request at once (the caller's abort, the deadline), whether or not it has reached the server. */
  abort(reason: unknown): void {
    if (this.#settled) return;
    const error = reason instanceof Error ? reason : new Error(String(reason));
    if (this.#controller) this.#controller.abort(error);
    else this.#abortedWith = error;
    this.#settle();
    this.#reject(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#abortedWith) controller.abort(this.#abortedWith);
    else this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.#status = statusCode;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settle();
    const text = this.#chunks.length === 1 ? this.#chunks[0]!.toString('utf8') : Buffer.concat(this.#chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the raw text for the error message
    }
    this.#resolve({ status: this.#status, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settled) return;
    this.#settle();
    this.#reject(error);
  }

  #settle(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    if (this.signal) inFlight.get(this.signal)?.delete(this);
  }
}

/**
 * The requests in flight under each abort signal. A signal gets one listener
 * however many requests it covers: a controller's long-lived signal covers
 * every request of every reconcile, and a listener added and removed per
 * request (what node:https does with its `signal` option) showed in the
 * engine's profile.
 */
const inFlight = new WeakMap<AbortSignal, Set<JsonAnswerHandler>>();

function abortWith(signal: AbortSignal, handler: JsonAnswerHandler): void {
  let handlers = inFlight.get(signal);
  if (!handlers) {
    const covered = new Set<JsonAnswerHandler>();
    handlers = covered;
    inFlight.set(signal, covered);
    signal.addEventListener(
      'abort',
      () => {
        for (const each of [...covered]) each.abort(signal.reason);
      },
      { once: true },
    );
  }
  handler.signal = signal;
  handlers.add(handler);
}
