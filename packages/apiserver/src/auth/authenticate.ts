/**
 * Bearer-token authentication: the sandbox's admin token, or a ServiceAccount token issued by the
 * TokenRequest subresource (`kubectl create token`). ServiceAccount tokens are JWTs signed (HS256) with
 * a key derived from the admin token, so they survive a restart with the same data dir, and are
 * bound to the ServiceAccount's uid: deleting the ServiceAccount revokes them, as on a real cluster.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ObjectStore } from '../storage/store.js';
import type { UserInfo } from './user.js';
import { metadataOf } from '../util.js';

export const ADMIN_USER: UserInfo = { username: 'k8or-sandbox-admin', uid: 'k8or-sandbox-admin', groups: ['system:masters', 'system:authenticated'] };

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** kube-apiserver's default and bounds for TokenRequest.spec.expirationSeconds. */
export const DEFAULT_TOKEN_SECONDS = 3600;
export const MIN_TOKEN_SECONDS = 600;

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

interface TokenClaims {
  iss: string;
  sub: string;
  aud: string[];
  iat: number;
  nbf: number;
  exp: number;
  'kubernetes.io': { namespace: string; serviceaccount: { name: string; uid: string } };
}

const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

export class Authenticator {
  private readonly signingKey: Buffer;

  constructor(private readonly adminToken: string, private readonly store: ObjectStore) {
    this.signingKey = createHmac('sha256', 'k8or-serviceaccount-token-signing').update(adminToken).digest();
  }

  /** The user a bearer token stands for, or undefined (401). */
  authenticate(authorization: string | undefined): UserInfo | undefined {
    const m = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
    if (!m) return undefined;
    return this.userOfToken((m[1] as string).trim());
  }

  userOfToken(token: string): UserInfo | undefined {
    const given = Buffer.from(token);
    const admin = Buffer.from(this.adminToken);
    if (given.length === admin.length && timingSafeEqual(given, admin)) return ADMIN_USER;
    return this.serviceAccountUser(token);
  }

  /** Issue a token for a stored ServiceAccount (the TokenRequest subresource). */
  issue(serviceAccount: Record<string, unknown>, expirationSeconds: number, audiences: string[], now = Date.now()): { token: string; expirationTimestamp: string } {
    const meta = metadataOf(serviceAccount);
    const namespace = String(meta['namespace']);
    const name = String(meta['name']);
    const iat = Math.floor(now / 1000);
    const claims: TokenClaims = {
      iss: ISSUER,
      sub: serviceAccountUsername(namespace, name),
      aud: audiences.length > 0 ? audiences : [ISSUER],
      iat,
      nbf: iat,
      exp: iat + expirationSeconds,
      'kubernetes.io': { namespace, serviceaccount: { name, uid: String(meta['uid']) } },
    };
    const unsigned = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify(claims))}`;
    return { token: `${unsigned}.${this.sign(unsigned)}`, expirationTimestamp: new Date(claims.exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }

  private sign(unsigned: string): string {
    return createHmac('sha256', this.signingKey).update(unsigned).digest('base64url');
  }

  private serviceAccountUser(token: string): UserInfo | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [header, payload, signature] = parts as [string, string, string];
    const expected = Buffer.from(this.sign(`${header}.${payload}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
    } catch {
      return undefined;
    }
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now()) return undefined;
    const { namespace, serviceaccount } = claims['kubernetes.io'] ?? {};
    if (!namespace || !serviceaccount) return undefined;
    const stored = this.store.get('/serviceaccounts', namespace, serviceaccount.name);
    if (!stored || metadataOf(stored)['uid'] !== serviceaccount.uid) return undefined;
    return {
      username: serviceAccountUsername(namespace, serviceaccount.name),
      uid: serviceaccount.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    };
  }
}
