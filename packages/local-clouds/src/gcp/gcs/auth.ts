/** Who a request acts as: anonymous, or a service account proven by a self-signed JWT signed with the key the fake knows. */
import { randomBytes, verify } from 'node:crypto';
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

/** The account whose key signed `token` (a JWT, RS256, not expired), or undefined. */
function accountOfJwt(token: string, accounts: Readonly<Record<string, GcsServiceAccount>>, now: number): Principal | undefined {
  const jwt = decodeJwt(token);
  const email = typeof jwt?.payload['iss'] === 'string' ? jwt.payload['iss'] : undefined;
  const account = email ? accounts[email] : undefined;
  if (!jwt || !email || !account) return undefined;
  if (account.publicKeyPem) {
    if (jwt.header['alg'] !== 'RS256' || !verify('RSA-SHA256', Buffer.from(jwt.signed), account.publicKeyPem, jwt.signature)) return undefined;
  }
  const expires = jwt.payload['exp'];
  if (typeof expires === 'number' && expires * 1000 < now) return undefined;
  return { name: email, project: account.project };
}

const TOKEN_LIFETIME_SECONDS = 3600;

/** The access tokens the fake's token endpoint handed out, each for one account, for an hour. */
export class AccessTokens {
  readonly #tokens = new Map<string, { principal: Principal; expires: number }>();

  issue(principal: Principal, now = Date.now()): string {
    const token = `ya29.k8or-${randomBytes(24).toString('base64url')}`;
    this.#tokens.set(token, { principal, expires: now + TOKEN_LIFETIME_SECONDS * 1000 });
    return token;
  }

  principal(token: string, now = Date.now()): Principal | undefined {
    const issued = this.#tokens.get(token);
    return issued && issued.expires > now ? issued.principal : undefined;
  }
}

/**
 * The OAuth 2.0 JWT-bearer grant (RFC 7523) as Google's token endpoint answers it for a
 * service-account key (the key file's `token_uri`): an assertion signed with the key of a known
 * account gets an access token; anything else 400 with OAuth's error JSON.
 */
export function exchangeAssertion(body: Buffer, accounts: Readonly<Record<string, GcsServiceAccount>>, tokens: AccessTokens, now = Date.now()): { status: number; json: Json } {
  const form = new URLSearchParams(body.toString('utf8'));
  const grantType = form.get('grant_type');
  if (grantType !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
    return { status: 400, json: { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${grantType ?? ''}` } };
  }
  const principal = accountOfJwt(form.get('assertion') ?? '', accounts, now);
  if (!principal) return { status: 400, json: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
  return { status: 200, json: { access_token: tokens.issue(principal, now), expires_in: TOKEN_LIFETIME_SECONDS, token_type: 'Bearer' } };
}

/**
 * The principal of a request. No Authorization header: anonymous. A bearer JWT (self-signed, as
 * google-auth-library makes them from a service-account key) of a known account, RS256-signed with
 * that account's key and not expired, or an access token the token endpoint issued: that account.
 * Anything else is 401 Invalid Credentials.
 */
export function principalOf(request: IncomingMessage, accounts: Readonly<Record<string, GcsServiceAccount>>, tokens: AccessTokens, now = Date.now()): Principal {
  const authorization = request.headers.authorization;
  if (!authorization) return ANONYMOUS;
  const token = /^Bearer (.+)$/i.exec(authorization)?.[1] ?? '';
  const principal = tokens.principal(token, now) ?? accountOfJwt(token, accounts, now);
  if (!principal) throw invalidCredentials();
  return principal;
}
