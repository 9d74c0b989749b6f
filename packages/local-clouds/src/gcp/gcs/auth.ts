/** Who a request acts as: anonymous, or a service account proven by a self-signed JWT signed with the key the fake knows. */
import { verify } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GcsError } from './errors.js';
import type { Json } from './state.js';

/** A service account the fake knows: the project it acts in, and the public key its self-signed JWTs are checked with. */
export interface GcsServiceAccount {
  project: string;
  /** PEM public key; when given, every bearer JWT of this account must be signed with its private key (RS256). */
  publicKeyPem?: string;
}

export interface Principal {
  name: string;
  /** Undefined for anonymous callers, who may act in every project. */
  project: string | undefined;
}

export const ANONYMOUS: Principal = { name: 'anonymous', project: undefined };

/** GCS's answer to a bearer token it cannot accept (an unknown account or key, a bad signature, an expired token). */
export const invalidCredentials = (): GcsError =>
  new GcsError(401, 'authError', 'Invalid Credentials', { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' }, { locationType: 'header', location: 'Authorization' });

function decodeJwt(token: string): { header: Json; signed: string; signature: Buffer; payload: Json } | undefined {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || signature === undefined) return undefined;
  try {
    return {
      header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Json,
      signed: `${header}.${payload}`,
      signature: Buffer.from(signature, 'base64url'),
      payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Json,
    };
  } catch {
    return undefined;
  }
}

/**
 * The principal of a request. No Authorization header: anonymous. A bearer JWT (self-signed, as
 * google-auth-library makes them from a service-account key) of a known account, RS256-signed with
 * that account's key and not expired: that account. Anything else is 401 Invalid Credentials.
 */
export function principalOf(request: IncomingMessage, accounts: Readonly<Record<string, GcsServiceAccount>>, now = Date.now()): Principal {
  const authorization = request.headers.authorization;
  if (!authorization) return ANONYMOUS;
  const token = /^Bearer (.+)$/i.exec(authorization)?.[1] ?? '';
  const jwt = decodeJwt(token);
  const email = typeof jwt?.payload['iss'] === 'string' ? jwt.payload['iss'] : undefined;
  const account = email ? accounts[email] : undefined;
  if (!jwt || !email || !account) throw invalidCredentials();
  if (account.publicKeyPem) {
    if (jwt.header['alg'] !== 'RS256' || !verify('RSA-SHA256', Buffer.from(jwt.signed), account.publicKeyPem, jwt.signature)) throw invalidCredentials();
  }
  const expires = jwt.payload['exp'];
  if (typeof expires === 'number' && expires * 1000 < now) throw invalidCredentials();
  return { name: email, project: account.project };
}
