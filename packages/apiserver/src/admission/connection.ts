/**
 * The connections to one webhook, as Go's client keeps them for kube-apiserver: HTTP/2 when the
 * webhook offers it in the TLS handshake (ALPN), every call a stream on one connection; else
 * keep-alive HTTP/1.1 connections. HTTP/2 is the cheaper of the two for the caller: no socket,
 * parser and request object per call.
 */
import http2 from 'node:http2';
import https from 'node:https';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

/** Where and how to reach a webhook; `verify` decides whether its certificate is acceptable. */
export interface ConnectionTarget {
  origin: string;
  host: string;
  port: number;
  ca?: string;
  servername?: string;
  verify: (host: string, cert: tls.PeerCertificate) => Error | undefined;
  /** Longest wait for a connection (the webhook's timeoutSeconds). */
  connectTimeoutMs: number;
}

export interface WebhookReply {
  status: number;
  text: string;
}

/** The call ran out of time (the webhook's timeoutSeconds). */
export class DeadlineExceeded extends Error {
  constructor() {
    super('context deadline exceeded (Client.Timeout exceeded while awaiting headers)');
  }
}

/** The connection the request went out on was closed by the webhook before it answered; nothing was admitted. */
class StaleConnection extends Error {}

type Done = (error: Error | undefined, reply?: WebhookReply) => void;

/** h2 errors that mean "this stream never reached the handler": sent again, once, on a new connection. */
const RETRYABLE_H2 = new Set(['ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_INVALID_SESSION', 'ERR_HTTP2_SESSION_ERROR', 'ECONNRESET', 'EPIPE']);

export class WebhookConnection {
  /** The HTTP/2 session in use (or being opened); undefined when closed or the webhook speaks HTTP/1.1 only. */
  private session: Promise<http2.ClientHttp2Session> | undefined;
  /** Set once the webhook answered the handshake without h2. */
  private agent: https.Agent | undefined;
  private closed = false;

  constructor(private readonly target: ConnectionTarget) {}

  /**
   * POST `body` (JSON) to `path`; one timer bounds the whole call, connecting included. A request
   * that fails on a reused connection before any answer (the webhook closed it while idle) is sent
   * once more on a new one, as Go's transport does.
   */
  post(path: string, body: string, timeoutMs: number): Promise<WebhookReply> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let cancel: () => void = () => undefined;
      const timer = setTimeout(() => {
        settled = true;
        cancel();
        reject(new DeadlineExceeded());
      }, timeoutMs);
      const attempt = (retried: boolean): void => {
        cancel = this.send(path, body, (error, reply) => {
          if (settled) return;
          if (error instanceof StaleConnection && !retried) return attempt(true);
          settled = true;
          clearTimeout(timer);
          if (error) reject(error);
          else resolve(reply!);
        });
      };
      attempt(false);
    });
  }

  /** Closes every connection (on server stop, or when the pool is evicted). */
  close(): void {
    this.closed = true;
    void this.session?.then((s) => s.destroy(), () => undefined);
    this.session = undefined;
    this.agent?.destroy();
  }

  /** Sends one request; returns how to cancel it. */
  private send(path: string, body: string, done: Done): () => void {
    if (this.agent) return postHttp1(this.target, this.agent, path, body, done);
    let cancelled = false;
    let cancel: () => void = () => undefined;
    const session = this.session ?? this.open(this.target.connectTimeoutMs);
    session.then(
      (s) => {
        if (cancelled) return;
        if (this.agent) cancel = postHttp1(this.target, this.agent, path, body, done);
        else cancel = postHttp2(s, path, body, done, () => this.forget(session));
      },
      (error: Error) => {
        if (this.agent && !cancelled) cancel = postHttp1(this.target, this.agent, path, body, done);
        else done(error);
      },
    );
    return () => {
      cancelled = true;
      cancel();
    };
  }

  /** Connects, offering h2 and http/1.1; resolves with an h2 session, or sets up HTTP/1.1 and rejects. */
  private open(timeoutMs: number): Promise<http2.ClientHttp2Session> {
    const opening = new Promise<http2.ClientHttp2Session>((resolve, reject) => {
      const socket = tls.connect({
        host: this.target.host,
        port: this.target.port,
        ca: this.target.ca,
        servername: this.target.servername,
        checkServerIdentity: this.target.verify,
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      // A webhook that accepts the connection but never finishes the handshake must not hold every later call.
      socket.setTimeout(timeoutMs, () => socket.destroy(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })));
      socket.once('error', reject);
      socket.once('secureConnect', () => {
        socket.off('error', reject);
        socket.setTimeout(0);
        if (this.closed) {
          socket.destroy();
          reject(new Error('the webhook client was closed'));
          return;
        }
        if (socket.alpnProtocol !== 'h2') {
          this.agent = http1Agent(this.target, socket);
          reject(new Error('the webhook speaks HTTP/1.1'));
          return;
        }
        const session = http2.connect(this.target.origin, { createConnection: (): Duplex => socket });
        session.unref();
        const forget = (): void => this.forget(opening);
        session.once('close', forget);
        session.once('goaway', forget);
        session.on('error', forget);
        resolve(session);
      });
    });
    this.session = opening;
    opening.catch(() => this.forget(opening));
    return opening;
  }

  private forget(session: Promise<http2.ClientHttp2Session>): void {
    if (this.session === session) this.session = undefined;
  }
}

function postHttp2(session: http2.ClientHttp2Session, path: string, body: string, done: Done, sessionFailed: () => void): () => void {
  let stream: http2.ClientHttp2Stream;
  const reused = session.state.nextStreamID !== undefined && session.state.nextStreamID > 1;
  try {
    stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) });
  } catch (error) {
    sessionFailed();
    done(new StaleConnection((error as Error).message));
    return () => undefined;
  }
  let status = 0;
  let finished = false;
  const chunks: Buffer[] = [];
  const finish = (error: Error | undefined, reply?: WebhookReply): void => {
    if (finished) return;
    finished = true;
    done(error, reply);
  };
  stream.on('response', (headers) => (status = Number(headers[':status'] ?? 0)));
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => finish(undefined, { status, text: textOf(chunks) }));
  stream.on('error', (error: Error & { code?: string }) => {
    const refused = stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM;
    if (status === 0 && (refused || (reused && RETRYABLE_H2.has(error.code ?? '')))) {
      sessionFailed();
      finish(new StaleConnection(error.message));
    } else finish(error);
  });
  stream.on('close', () => {
    if (status === 0 && stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) finish(new StaleConnection('stream refused'));
    else finish(new Error(`the connection closed before the webhook answered (HTTP/2 stream reset, code ${stream.rstCode})`));
  });
  stream.end(body);
  return () => {
    finished = true;
    stream.close(http2.constants.NGHTTP2_CANCEL);
  };
}

/** Keep-alive HTTP/1.1 connections; the handshake that found the webhook speaks HTTP/1.1 becomes the first. */
function http1Agent(target: ConnectionTarget, firstSocket: tls.TLSSocket): https.Agent {
  const agent = new https.Agent({ keepAlive: true, ca: target.ca, servername: target.servername, checkServerIdentity: target.verify });
  let spare: tls.TLSSocket | undefined = firstSocket;
  const connect = agent.createConnection.bind(agent);
  agent.createConnection = ((options: tls.ConnectionOptions, callback?: (error: Error | null, socket: Duplex) => void) => {
    const socket = spare;
    spare = undefined;
    if (socket && !socket.destroyed && socket.writable) return socket;
    socket?.destroy();
    return connect(options, callback);
  }) as typeof agent.createConnection;
  return agent;
}

function postHttp1(target: ConnectionTarget, agent: https.Agent, path: string, body: string, done: Done): () => void {
  let finished = false;
  const finish = (error: Error | undefined, reply?: WebhookReply): void => {
    if (finished) return;
    finished = true;
    done(error, reply);
  };
  const req = https.request(
    {
      hostname: target.host,
      port: target.port,
      path,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
      agent,
    },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (error) => finish(error));
      res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, text: textOf(chunks) }));
    },
  );
  req.on('error', (error: Error & { code?: string }) => {
    if (req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) finish(new StaleConnection(error.message));
    else finish(error);
  });
  req.end(body);
  return () => {
    finished = true;
    req.destroy();
  };
}

/** The body's text; a review's answer is mostly one chunk, which needs no copy first. */
function textOf(chunks: Buffer[]): string {
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}
