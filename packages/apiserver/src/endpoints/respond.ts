import type { ServerResponse } from 'node:http';
import type { StatusBody } from '../status.js';

/** Write a JSON response (with any admission warnings as `Warning: 299` headers). */
export function sendJson(res: ServerResponse, code: number, body: unknown, warnings: string[] = []): void {
  sendJsonText(res, code, res.headersSent ? '' : JSON.stringify(body), warnings);
}

/** Write a response whose body is already JSON text. */
export function sendJsonText(res: ServerResponse, code: number, data: string, warnings: string[] = []): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(data)),
  };
  if (warnings.length > 0) headers['Warning'] = warnings.map(warningHeader);
  res.writeHead(code, headers);
  res.end(data);
}

export function sendStatus(res: ServerResponse, status: StatusBody, warnings: string[] = []): void {
  sendJson(res, status.code, status, warnings);
}

/** RFC 7234 warning header value as kube-apiserver writes it: `299 - "text"`. */
export function warningHeader(text: string): string {
  // header values must be printable Latin-1; the real server drops what it cannot send
  const clean = text.replace(/[\r\n\t]+/g, ' ').replace(/[^\x20-\x7e]/g, '?').replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `299 - "${clean}"`;
}
