/** Decode a request path the way kube-apiserver's RequestInfoFactory does. */
import type { RequestVerb } from '../types.js';
import { queryFlag } from './query.js';

export interface RequestInfo {
  /** True for /api/... and /apis/... resource paths (not discovery). */
  isResourceRequest: boolean;
  path: string;
  verb: RequestVerb;
  apiPrefix: 'api' | 'apis' | '';
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  /** Path parts after group/version (for discovery routing). */
  parts: string[];
}

/** Subresources of a namespace, so /api/v1/namespaces/x/status is not "the status resource in namespace x". */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: 'other',
    apiPrefix: '',
    group: '',
    version: '',
    namespace: '',
    resource: '',
    name: '',
    subresource: '',
    parts: [],
  };
  let parts = path.split('/').filter((p) => p.length > 0).map((p) => decodeURIComponent(p));
  if (parts[0] === 'api') {
    info.apiPrefix = 'api';
    parts = parts.slice(1);
    info.version = parts[0] ?? '';
    parts = parts.slice(1);
  } else if (parts[0] === 'apis') {
    info.apiPrefix = 'apis';
    parts = parts.slice(1);
    info.group = parts[0] ?? '';
    info.version = parts[1] ?? '';
    parts = parts.slice(2);
  } else {
    return info;
  }
  info.parts = parts;
  if (!info.version || parts.length === 0) return info;
  info.isResourceRequest = true;

  let legacyWatch = false;
  if (parts[0] === 'watch') {
    legacyWatch = true;
    parts = parts.slice(1);
  }
  if (parts[0] === 'namespaces' && parts.length > 1) {
    info.namespace = parts[1] as string;
    if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] as string)) parts = parts.slice(2);
  }
  info.resource = parts[0] ?? '';
  info.name = parts[1] ?? '';
  info.subresource = parts[2] ?? '';
  if (info.resource === 'namespaces') info.namespace = '';

  const isWatch = legacyWatch || queryFlag(query, 'watch');
  switch (method) {
    case 'GET':
    case 'HEAD':
      info.verb = isWatch ? 'watch' : info.name ? 'get' : 'list';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
    default:
      info.verb = 'other';
  }
  return info;
}
