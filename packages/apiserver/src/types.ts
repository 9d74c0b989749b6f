import type { Logger } from 'pino';

/** Options for {@link startSandbox}. */
export interface SandboxOptions {
  /** Port to listen on; default 0 (ephemeral). */
  port?: number;
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Persist objects, the resourceVersion counter, the CA and the token here across restarts. */
  dataDir?: string;
  /** Write the kubeconfig here once serving. */
  kubeconfigPath?: string;
  /** Maps a webhook `clientConfig.service` to a base URL; default `https://{name}.{namespace}.svc:{port}`. */
  serviceResolver?: (namespace: string, name: string, port: number) => string;
  /**
   * Watch events kept per resource type for resume; older resourceVersions get 410 Gone. Default:
   * sized as kube-apiserver's watch cache is (at least 75 s of events, from 100 up to 102,400).
   */
  watchHistorySize?: number;
  /** pino level; default 'warn'. */
  logLevel?: string;
  /** Log here instead of a logger of its own on stdout (logLevel is then the logger's). */
  logger?: Logger;
  /**
   * Keep every request in `requestLog` (default false). A test that counts requests turns it on;
   * a long-running server must not, since the log only grows.
   */
  recordRequests?: boolean;
  /** Answer a seeded share of requests with kube-apiserver's failures (see {@link ApiFaultOptions}); default off. */
  faults?: ApiFaultOptions;
}

/**
 * A failure the sandbox can inject: 409 Conflict on update/patch, 429 TooManyRequests, 500
 * InternalError, 410 Gone on a resuming watch or paged list, a watch cut without a word, or a write
 * stored and then answered 500 (`internalAfterWrite`) or not answered at all (`cutAfterWrite`).
 */
export type ApiFaultKind = 'conflict' | 'throttle' | 'internal' | 'gone' | 'dropWatch' | 'internalAfterWrite' | 'cutAfterWrite';

export interface ApiFaultOptions {
  /** The share of eligible requests that get a fault, from 0 to 1. */
  rate: number;
  /** The faults to choose from (each request draws among those that apply to it); default all. */
  kinds?: ApiFaultKind[];
  /** Seed of the choices, so a run replays; default 1. */
  seed?: number;
  /** Usernames whose requests are faulted (e.g. `system:serviceaccount:ns:sa`); default every user but the sandbox admin. */
  users?: string[];
  /** Start injecting at once; default true when rate > 0. */
  enabled?: boolean;
}

/** The sandbox's fault injector, switched at run time. */
export interface ApiFaults {
  readonly enabled: boolean;
  readonly options: Readonly<ApiFaultOptions>;
  enable(): void;
  disable(): void;
  /** Change rate, kinds, users or seed (a new seed restarts the sequence). */
  configure(options: Partial<ApiFaultOptions>): void;
  /** Faults injected so far, per kind. */
  readonly injected: Readonly<Record<ApiFaultKind, number>>;
  readonly total: number;
}

export type RequestVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'other';

/** One served request, recorded in order. */
export interface RequestLogEntry {
  method: string;
  path: string;
  verb: RequestVerb;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  status: number;
  dryRun: boolean;
  /** The `labelSelector` of a list or watch, when it has one. */
  labelSelector?: string;
  userAgent?: string;
}

/** One atomic RBAC permission: a verb on a group/resource (or a URL), from one rule of one bound role. */
export interface RbacGrant {
  /** `ClusterRoleBinding NAME` or `RoleBinding NAMESPACE/NAME`. */
  binding: string;
  /** `ClusterRole NAME` or `Role NAMESPACE/NAME`. */
  role: string;
  rule: number;
  verb: string;
  apiGroup?: string;
  resource?: string;
  resourceName?: string;
  nonResourceURL?: string;
}

export interface ServiceAccountAccess {
  username: string;
  grants: Array<{ grant: RbacGrant; key: string; uses: number }>;
  /** Keys of the grants no request used. */
  unused: string[];
  /** Refused requests, worded as kube-apiserver's 403s. */
  denied: string[];
}

/** A running sandbox API server. */
export interface Sandbox {
  /** https://127.0.0.1:PORT */
  url: string;
  /** kubeconfig YAML: cluster with CA data, user with bearer token. */
  kubeconfig: string;
  kubeconfigPath?: string;
  caPem: string;
  token: string;
  /** Every request, in order; only with `recordRequests: true` (reading it otherwise throws). */
  readonly requestLog: RequestLogEntry[];
  clearRequestLog(): void;
  /**
   * What a ServiceAccount's token was used for: every atomic grant its bindings give (with how many
   * requests each allowed), the grants no request used, and the requests RBAC refused (403 wording).
   * Counts start when the sandbox starts; the bootstrap grants every authenticated user holds are included.
   */
  accessOf(namespace: string, serviceAccount: string): ServiceAccountAccess;
  /** Test hook: close every open watch stream abruptly. */
  dropWatches(): void;
  /** Test hook: forget watch history so older resourceVersions get 410 Gone. */
  compactHistory(): void;
  /** Fault injection (off unless `faults` was given or `faults.enable()` is called). */
  faults: ApiFaults;
  stop(): Promise<void>;
}

/** A Kubernetes object as JSON. */
export type KubeObject = Record<string, unknown>;
