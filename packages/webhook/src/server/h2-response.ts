import http2 from 'node:http2';
import type { OutgoingHttpHeaders } from 'node:http';

/**
 * The response fastify writes over HTTP/2, sent without waiting for trailers.
 *
 * Node's compatibility response (`http2.Http2ServerResponse`) always sends its headers asking for
 * trailers (`waitForTrailers`), so the end of every response (an empty DATA frame) goes out a turn
 * later than its body: a TLS record and a socket write of its own here, and a read, a decryption and
 * a wake-up of its own for the caller (kube-apiserver, the sandbox's API server). The webhook never
 * sends trailers; this response sends the headers without asking for them, so body and end of stream
 * leave together. Everything else (header validation, HEAD, 204/304, errors) is Node's own.
 */
export class Http2ResponseWithoutTrailers extends http2.Http2ServerResponse {
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | readonly string[]): this;
  override writeHead(statusCode: number, statusMessage: string, headers?: OutgoingHttpHeaders | readonly string[]): this;
  override writeHead(statusCode: number, messageOrHeaders?: string | OutgoingHttpHeaders | readonly string[], maybeHeaders?: OutgoingHttpHeaders | readonly string[]): this {
    const headers = typeof messageOrHeaders === 'string' ? maybeHeaders : messageOrHeaders;
    const stream = this.stream;
    // Anything unusual (an array of raw headers, a stream already answered or gone) takes Node's own path.
    if (Array.isArray(headers) || stream.headersSent || stream.destroyed || stream.closed) {
      return typeof messageOrHeaders === 'string' ? super.writeHead(statusCode, messageOrHeaders, maybeHeaders) : super.writeHead(statusCode, messageOrHeaders);
    }
    // setHeader validates each name and value as Node's writeHead does.
    for (const [name, value] of Object.entries((headers ?? {}) as OutgoingHttpHeaders)) if (value !== undefined) this.setHeader(name, value);
    this.statusCode = statusCode;
    // sendDate is read by Node (as its own writeHead passes it) though @types/node does not declare it.
    const options: http2.ServerStreamResponseOptions & { sendDate: boolean } = { waitForTrailers: false, sendDate: this.sendDate };
    stream.respond({ ...this.getHeaders(), ':status': statusCode }, options);
    return this;
  }
}
