/**
 * An RBAC authorizer evaluated over the stored Roles, ClusterRoles and bindings, as
 * k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac does: ClusterRoleBindings grant everywhere,
 * RoleBindings in the request's namespace; rules match verbs, apiGroups, resources (plain, with a
 * subresource, or wildcards), resourceNames and nonResourceURLs (a path, or a prefix ending in a star); a ClusterRole
 * with an aggregationRule has the rules of the ClusterRoles its selectors pick. `system:masters`
 * is allowed everything, as kube-apiserver's privileged-group authorizer allows it.
 *
 * Every decision is recorded per user (see {@link AccessRecord}), so a test can prove that a
 * ServiceAccount used every grant it holds and was never refused.
 */
import type { ObjectStore } from '../storage/store.js';
import type { UserInfo } from './user.js';
import type { KubeObject, RbacGrant as Grant } from '../types.js';
import { isObject, metadataOf } from '../util.js';
import { labelSelectorFromObject } from '../selectors/labels.js';
import { serviceAccountUsername } from './authenticate.js';

const RBAC = 'rbac.authorization.k8s.io';

/** What a request asks to do, as authorizer.Attributes. */
export interface RequestAttributes {
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The URL path, for non-resource requests. */
  path: string;
}

export interface Decision {
  allowed: boolean;
  /** The grants that allowed it (empty when denied or for system:masters). */
  grants: Grant[];
}

interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  nonResourceURLs: string[];
}

interface BoundRules {
  binding: string;
  role: string;
  rules: PolicyRule[];
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

function policyRules(role: KubeObject): PolicyRule[] {
  const rules = Array.isArray(role['rules']) ? role['rules'].filter(isObject) : [];
  return rules.map((r) => ({
    verbs: strings(r['verbs']),
    apiGroups: strings(r['apiGroups']),
    resources: strings(r['resources']),
    resourceNames: strings(r['resourceNames']),
    nonResourceURLs: strings(r['nonResourceURLs']),
  }));
}

function subjectMatches(subject: Record<string, unknown>, user: UserInfo, bindingNamespace: string): boolean {
  const name = String(subject['name'] ?? '');
  switch (subject['kind']) {
    case 'User':
      return name === user.username;
    case 'Group':
      return user.groups.includes(name);
    case 'ServiceAccount': {
      const namespace = typeof subject['namespace'] === 'string' && subject['namespace'] ? subject['namespace'] : bindingNamespace;
      return serviceAccountUsername(namespace, name) === user.username;
    }
    default:
      return false;
  }
}

const has = (list: string[], value: string): boolean => list.includes('*') || list.includes(value);

function resourceMatches(rule: PolicyRule, resource: string, subresource: string): string | undefined {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources) {
    if (r === '*' || r === combined) return r;
    if (subresource && (r === `*/${subresource}` || r === `${resource}/*`)) return r;
  }
  return undefined;
}

function urlMatches(rule: PolicyRule, path: string): string | undefined {
  for (const url of rule.nonResourceURLs) {
    if (url === '*' || url === path) return url;
    if (url.endsWith('*') && path.startsWith(url.slice(0, -1))) return url;
  }
  return undefined;
}

/** The atomic grant of `rule` that allows `attrs`, or undefined. */
function grantFor(bound: BoundRules, index: number, rule: PolicyRule, attrs: RequestAttributes): Grant | undefined {
  if (!has(rule.verbs, attrs.verb)) return undefined;
  const verb = rule.verbs.includes(attrs.verb) ? attrs.verb : '*';
  if (!attrs.resourceRequest) {
    const url = urlMatches(rule, attrs.path);
    return url === undefined ? undefined : { binding: bound.binding, role: bound.role, rule: index, verb, nonResourceURL: url };
  }
  if (!has(rule.apiGroups, attrs.apiGroup)) return undefined;
  const resource = resourceMatches(rule, attrs.resource, attrs.subresource);
  if (resource === undefined) return undefined;
  const grant: Grant = { binding: bound.binding, role: bound.role, rule: index, verb, apiGroup: rule.apiGroups.includes(attrs.apiGroup) ? attrs.apiGroup : '*', resource };
  if (rule.resourceNames.length > 0) {
    if (!attrs.name || !rule.resourceNames.includes(attrs.name)) return undefined;
    grant.resourceName = attrs.name;
  }
  return grant;
}

/** Every atomic grant of one rule. */
function expand(bound: BoundRules, index: number, rule: PolicyRule): Grant[] {
  const base = { binding: bound.binding, role: bound.role, rule: index };
  if (rule.nonResourceURLs.length > 0) return rule.verbs.flatMap((verb) => rule.nonResourceURLs.map((nonResourceURL) => ({ ...base, verb, nonResourceURL })));
  const names: Array<string | undefined> = rule.resourceNames.length > 0 ? rule.resourceNames : [undefined];
  return rule.verbs.flatMap((verb) =>
    rule.apiGroups.flatMap((apiGroup) =>
      rule.resources.flatMap((resource) => names.map((resourceName) => (resourceName === undefined ? { ...base, verb, apiGroup, resource } : { ...base, verb, apiGroup, resource, resourceName }))),
    ),
  );
}

export const grantKey = (g: Grant): string =>
  `${g.binding} -> ${g.role} rules[${g.rule}]: ${g.verb} ${g.nonResourceURL ?? `${g.apiGroup === '' ? 'core' : g.apiGroup}/${g.resource}${g.resourceName ? `/${g.resourceName}` : ''}`}`;

/** What a user did: the grants each request used, and what was refused. */
export interface AccessRecord {
  /** grantKey -> number of requests it allowed. */
  used: Map<string, number>;
  /** Refused requests, as kube-apiserver's 403 message words them. */
  denied: string[];
}

export class RbacAuthorizer {
  private readonly records = new Map<string, AccessRecord>();

  constructor(private readonly store: ObjectStore) {}

  authorize(user: UserInfo, attrs: RequestAttributes): Decision {
    if (user.groups.includes('system:masters')) return { allowed: true, grants: [] };
    const grants: Grant[] = [];
    for (const bound of this.boundRules(user, attrs.namespace)) {
      bound.rules.forEach((rule, index) => {
        const grant = grantFor(bound, index, rule, attrs);
        if (grant) grants.push(grant);
      });
    }
    return { allowed: grants.length > 0, grants };
  }

  /** Authorize and record the outcome against the user. */
  check(user: UserInfo, attrs: RequestAttributes): Decision {
    const decision = this.authorize(user, attrs);
    if (user.groups.includes('system:masters')) return decision;
    const record = this.recordOf(user.username);
    if (!decision.allowed) record.denied.push(forbiddenMessage(user, attrs));
    for (const grant of decision.grants) {
      const key = grantKey(grant);
      record.used.set(key, (record.used.get(key) ?? 0) + 1);
    }
    return decision;
  }

  recordOf(username: string): AccessRecord {
    let record = this.records.get(username);
    if (!record) {
      record = { used: new Map(), denied: [] };
      this.records.set(username, record);
    }
    return record;
  }

  /** Every atomic grant the user holds through bindings naming it (directly, or by one of `groups`), in any namespace. */
  grantsOf(user: UserInfo): Grant[] {
    const namespaces = new Set(this.store.list(`${RBAC}/rolebindings`).map((b) => String(metadataOf(b)['namespace'])));
    const seen = new Map<string, Grant>();
    for (const ns of ['', ...namespaces]) {
      for (const bound of this.boundRules(user, ns)) {
        bound.rules.forEach((rule, index) => {
          for (const grant of expand(bound, index, rule)) seen.set(grantKey(grant), grant);
        });
      }
    }
    return [...seen.values()];
  }

  /** The bindings that name the user, with the rules of the role each binds. Cluster bindings first. */
  private boundRules(user: UserInfo, namespace: string): BoundRules[] {
    const out: BoundRules[] = [];
    for (const binding of this.store.list(`${RBAC}/clusterrolebindings`)) {
      if (!this.names(binding, user, '')) continue;
      const role = this.roleOf(binding, '');
      if (role) out.push({ binding: `ClusterRoleBinding ${String(metadataOf(binding)['name'])}`, ...role });
    }
    if (namespace) {
      for (const binding of this.store.list(`${RBAC}/rolebindings`, namespace)) {
        if (!this.names(binding, user, namespace)) continue;
        const role = this.roleOf(binding, namespace);
        if (role) out.push({ binding: `RoleBinding ${namespace}/${String(metadataOf(binding)['name'])}`, ...role });
      }
    }
    return out;
  }

  private names(binding: KubeObject, user: UserInfo, namespace: string): boolean {
    const subjects = Array.isArray(binding['subjects']) ? binding['subjects'].filter(isObject) : [];
    return subjects.some((s) => subjectMatches(s, user, namespace));
  }

  private roleOf(binding: KubeObject, namespace: string): { role: string; rules: PolicyRule[] } | undefined {
    const ref = isObject(binding['roleRef']) ? binding['roleRef'] : {};
    const name = String(ref['name'] ?? '');
    if (ref['kind'] === 'Role' && namespace) {
      const role = this.store.get(`${RBAC}/roles`, namespace, name);
      return role ? { role: `Role ${namespace}/${name}`, rules: policyRules(role) } : undefined;
    }
    if (ref['kind'] !== 'ClusterRole') return undefined;
    const role = this.store.get(`${RBAC}/clusterroles`, '', name);
    return role ? { role: `ClusterRole ${name}`, rules: this.clusterRoleRules(role) } : undefined;
  }

  /** A ClusterRole's rules; for an aggregated one, the rules of the ClusterRoles its selectors pick. */
  private clusterRoleRules(role: KubeObject): PolicyRule[] {
    const aggregation = isObject(role['aggregationRule']) ? role['aggregationRule'] : undefined;
    if (!aggregation) return policyRules(role);
    const selectors = (Array.isArray(aggregation['clusterRoleSelectors']) ? aggregation['clusterRoleSelectors'] : []).map(labelSelectorFromObject);
    const own = String(metadataOf(role)['name']);
    const rules: PolicyRule[] = [];
    for (const other of this.store.list(`${RBAC}/clusterroles`)) {
      const meta = metadataOf(other);
      if (meta['name'] === own || isObject(other['aggregationRule'])) continue;
      const labels = isObject(meta['labels']) ? (meta['labels'] as Record<string, string>) : {};
      if (selectors.some((matches) => matches(labels))) rules.push(...policyRules(other));
    }
    return rules;
  }
}

/** kube-apiserver's wording (endpoints/handlers/responsewriters/errors.go forbiddenMessage). */
export function forbiddenMessage(user: UserInfo, attrs: RequestAttributes): string {
  if (!attrs.resourceRequest) return `User "${user.username}" cannot ${attrs.verb} path "${attrs.path}"`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  if (attrs.namespace) return `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" in the namespace "${attrs.namespace}"`;
  return `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" at the cluster scope`;
}
