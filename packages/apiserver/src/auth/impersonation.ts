/**
 * Impersonation, as k8s.io/apiserver's filters/impersonation.go: `Impersonate-User`,
 * `Impersonate-Group` (repeated), `Impersonate-Uid` and `Impersonate-Extra-KEY` (repeated) make the
 * request run as another user, once RBAC allows the requester the `impersonate` verb on each part:
 * `users` (or `serviceaccounts` in the account's namespace, for `system:serviceaccount:NS:NAME`),
 * `groups`, `uids` and `userextras/KEY` (the last two in group authentication.k8s.io), by name.
 * One part refused answers 403 naming it; nothing is ever ignored.
 */
import { ApiError, forbidden } from '../status.js';
import { serviceAccountUsername } from './authenticate.js';
import { forbiddenMessage, type RbacAuthorizer, type RequestAttributes } from './rbac.js';
import type { UserInfo } from './user.js';

/** Request headers by lowercased name, every value of a repeated header kept (node's `headersDistinct`). */
export type DistinctHeaders = Record<string, string[] | undefined>;

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** One thing to impersonate, as the attributes RBAC is asked about. */
interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  attributes: RequestAttributes;
}

const impersonate = (apiGroup: string, resource: string, name: string, namespace = '', subresource = ''): RequestAttributes => ({
  verb: 'impersonate',
  resourceRequest: true,
  apiGroup,
  resource,
  subresource,
  namespace,
  name,
  path: '',
});

function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(username);
  return m ? { namespace: m[1] as string, name: m[2] as string } : undefined;
}

/** An extra's key from its header name: percent-decoded (as kube unescapes it), already lowercase. */
function extraKey(headerName: string): string {
  const raw = headerName.slice(EXTRA_PREFIX.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function requestsOf(headers: DistinctHeaders): ImpersonationRequest[] {
  const requests: ImpersonationRequest[] = [];
  const username = headers[USER]?.[0] ?? '';
  if (username) {
    const account = serviceAccountOf(username);
    requests.push(
      account
        ? { kind: 'ServiceAccount', attributes: impersonate('', 'serviceaccounts', account.name, account.namespace) }
        : { kind: 'User', attributes: impersonate('', 'users', username) },
    );
  }
  for (const group of headers[GROUP] ?? []) requests.push({ kind: 'Group', attributes: impersonate('', 'groups', group) });
  for (const [name, values] of Object.entries(headers)) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    for (const value of values ?? []) requests.push({ kind: 'UserExtra', attributes: impersonate(AUTHENTICATION_GROUP, 'userextras', value, '', extraKey(name)) });
  }
  const uid = headers[UID]?.[0] ?? '';
  if (uid) requests.push({ kind: 'UID', attributes: impersonate(AUTHENTICATION_GROUP, 'uids', uid) });
  return requests;
}

/**
 * The user a request runs as: `requester` itself without impersonation headers, else the user they
 * name. Throws a 403 ApiError when RBAC refuses any part, and a 500 (as kube-apiserver answers) for
 * groups, a uid or extras without a user.
 */
export function impersonatedUser(requester: UserInfo, headers: DistinctHeaders, authorizer: RbacAuthorizer, path: string): UserInfo {
  const requests = requestsOf(headers);
  if (requests.length === 0) return requester;
  if (!requests.some((r) => r.kind === 'User' || r.kind === 'ServiceAccount')) {
    const asked = requests.map((r) => `${r.kind} ${r.attributes.subresource ? `${r.attributes.subresource}=` : ''}${r.attributes.name}`).join(', ');
    throw new ApiError(500, 'InternalError', `Internal Server Error: "${path}": requested [${asked}] without impersonating a user`);
  }
  const groupsSpecified = requests.some((r) => r.kind === 'Group');
  let username = '';
  let uid = '';
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const { kind, attributes } of requests) {
    if (!authorizer.check(requester, attributes).allowed) {
      throw forbidden(attributes.apiGroup, attributes.resource, attributes.name, forbiddenMessage(requester, attributes));
    }
    switch (kind) {
      case 'ServiceAccount':
        username = serviceAccountUsername(attributes.namespace, attributes.name);
        // a service account's groups are known: they come with it unless groups are given
        if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${attributes.namespace}`];
        break;
      case 'User':
        username = attributes.name;
        break;
      case 'Group':
        groups.push(attributes.name);
        break;
      case 'UserExtra':
        (extra[attributes.subresource] ??= []).push(attributes.name);
        break;
      case 'UID':
        uid = attributes.name;
        break;
    }
  }
  if (username === 'system:anonymous') {
    if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
  } else if (!groups.includes('system:authenticated') && !groups.includes('system:unauthenticated')) {
    groups.push('system:authenticated');
  }
  const user: UserInfo = { username, uid, groups };
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
