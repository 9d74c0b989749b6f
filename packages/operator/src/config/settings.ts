import { MANAGED_KINDS, type DeletionPolicy, type ManagedKindName } from '@k8or/api';
import { parseGoDuration } from '@k8or/core';

/** A setting that breaks its rule: names the flag, its environment variable, the rule and the value given. */
export class ConfigError extends Error {
  constructor(
    readonly setting: Setting,
    readonly rule: string,
    readonly value: string,
  ) {
    super(`--${setting.flag} (${setting.env}) ${rule}, got "${value}"`);
    this.name = 'ConfigError';
  }
}

/** How the leader hands on a dead shard's objects (`shardTakeover`). */
export const SHARD_TAKEOVERS = ['relabel', 'adopt'] as const;
export type ShardTakeover = (typeof SHARD_TAKEOVERS)[number];

/** Which parts run in this process: the controllers, the admission webhook, or both. */
export type Component = 'controllers' | 'webhook';

/** The operator's whole configuration, validated. */
export interface OperatorConfig {
  /** Provider names or package names to load; empty: every installed provider. */
  providers: string[];
  /** Where provider packages are looked up first (its node_modules and its parents'); the operator's own install is searched after it. */
  providerRoot: string | undefined;
  components: Component[];
  /** Namespaces to reconcile; empty: all. */
  namespaces: string[];
  workers: number | Partial<Record<ManagedKindName, number>>;
  resyncPeriodMs: number;
  /** The shortest resync a resource may ask for with `k8or.io/resync-period`. */
  minResyncPeriodMs: number;
  reconcileTimeoutMs: number;
  shutdownTimeoutMs: number;
  defaultDeletionPolicy: DeletionPolicy;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  /** Sharding: this replica's shard name (its Pod name); unset: sharding off. */
  shardName: string | undefined;
  /**
   * Sharding: how the leader hands on a dead shard's objects. `relabel`: each is relabelled for a
   * live shard, which works it from then on. `adopt`: the live shards work them at once, each the
   * part that falls to it, while the leader hands them on.
   */
  shardTakeover: ShardTakeover;
  /** Namespace of the credentials Secrets the operator reads. */
  secretsNamespace: string;
  clusterId: string | undefined;
  metricsAddress: HostPort;
  probeAddress: HostPort;
  webhookAddress: HostPort;
  /** Directory with tls.crt, tls.key (and ca.crt) for the webhook; unset: a self-signed CA injected into the webhook configurations. */
  webhookCertDir: string | undefined;
  /** The Service kube-apiserver calls the webhook through; its DNS names go into the self-signed certificate. */
  webhookServiceName: string | undefined;
  webhookServiceNamespace: string | undefined;
  /** Without --webhook-cert-dir: the Secret (in the Service's namespace) through which every replica shares one CA and certificate. */
  webhookCertSecret: string | undefined;
  /** How often each replica re-reads that Secret (renewing it before its end). */
  webhookCertCheckIntervalMs: number;
  logLevel: string;
  kubeconfig: string | undefined;
}

export interface HostPort {
  host: string;
  port: number;
}

/** One setting: its flag, environment variable, default, help text and rule. */
export interface Setting {
  key: keyof OperatorConfig;
  flag: string;
  env: string;
  /** The value when neither the flag nor the environment gives one; undefined: unset. */
  default: string | undefined;
  /** Placeholder in the help text (`N`, `DURATION`, ...); none for a boolean. */
  valueName?: string;
  description: string;
  /** Which commands use it. */
  scope: 'all' | 'controllers' | 'webhook';
  /** Turns the text into the value, or throws a rule (a string) the value breaks. */
  parse(text: string): unknown;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const PACKAGE_NAME = /^(@[a-z0-9][-a-z0-9._~]*\/)?[a-z0-9][-a-z0-9._~]*$/;

const list = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function duration(text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined) throw 'must be a duration such as 30s, 5m or 1h';
  return ms;
}

function hostPort(text: string): HostPort {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw 'must be HOST:PORT or :PORT with a port from 0 to 65535';
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

function oneOf<T extends string>(values: readonly T[]): (text: string) => T {
  return (text) => {
    if (!values.includes(text as T)) throw `must be one of ${values.join(', ')}`;
    return text as T;
  };
}

function workers(text: string): OperatorConfig['workers'] {
  const rule = `must be a number from 1 to 1000, or per kind as ${MANAGED_KINDS.map((k) => `${k}=N`).join(',')}`;
  if (/^\d+$/.test(text.trim())) {
    const n = Number(text);
    if (n < 1 || n > 1000) throw rule;
    return n;
  }
  const perKind: Partial<Record<ManagedKindName, number>> = {};
  for (const item of list(text)) {
    const [kind, count] = item.split('=');
    const known = MANAGED_KINDS.find((k) => k.toLowerCase() === kind?.trim().toLowerCase());
    if (!known || !/^\d+$/.test(count?.trim() ?? '') || Number(count) < 1 || Number(count) > 1000) throw rule;
    perKind[known] = Number(count);
  }
  if (Object.keys(perKind).length === 0) throw rule;
  return perKind;
}

function booleanSetting(text: string): boolean {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  throw 'must be true or false';
}

function dnsLabels(text: string): string[] {
  const items = list(text);
  if (items.some((item) => !DNS_LABEL.test(item))) throw 'must be a comma-separated list of namespace names (DNS labels)';
  return items;
}

function dnsLabel(text: string): string {
  if (!DNS_LABEL.test(text)) throw 'must be a DNS label (lowercase letters, digits and hyphens, at most 63)';
  return text;
}

/** Every setting of the operator and the webhook, in help order. The CLI builds its options from this table. */
export const SETTINGS: readonly Setting[] = [
  {
    key: 'providers',
    flag: 'providers',
    env: 'K8OR_PROVIDERS',
    default: '',
    valueName: 'LIST',
    scope: 'all',
    description: 'providers to load, comma-separated: a short name (aws means @k8or/provider-aws) or a package name (k8or-provider-foo); empty loads every installed provider',
    parse: (text) => {
      const items = list(text);
      if (items.some((item) => !PACKAGE_NAME.test(item))) throw 'must be a comma-separated list of provider or npm package names';
      return items;
    },
  },
  {
    key: 'providerRoot',
    flag: 'provider-root',
    env: 'K8OR_PROVIDER_ROOT',
    default: undefined,
    valueName: 'DIR',
    scope: 'all',
    description: 'look for provider packages in DIR/node_modules (and its parents) before the operator\'s own install',
    parse: (text) => {
      if (!text.trim()) throw 'must be a directory';
      return text;
    },
  },
  {
    key: 'namespaces',
    flag: 'namespaces',
    env: 'K8OR_NAMESPACES',
    default: '',
    valueName: 'LIST',
    scope: 'controllers',
    description: 'reconcile only in these namespaces, comma-separated; empty watches all',
    parse: dnsLabels,
  },
  {
    key: 'workers',
    flag: 'workers',
    env: 'K8OR_WORKERS',
    default: '10',
    valueName: 'N',
    scope: 'controllers',
    description: 'concurrent reconciles per kind: N, or Bucket=N,Table=M',
    parse: workers,
  },
  {
    key: 'resyncPeriodMs',
    flag: 'resync-period',
    env: 'K8OR_RESYNC_PERIOD',
    default: '1h',
    valueName: 'DURATION',
    scope: 'controllers',
    description: 'how often each resource is checked for drift, unless its k8or.io/resync-period says otherwise',
    parse: duration,
  },
  {
    key: 'minResyncPeriodMs',
    flag: 'min-resync-period',
    env: 'K8OR_MIN_RESYNC_PERIOD',
    default: '10s',
    valueName: 'DURATION',
    scope: 'controllers',
    description: 'the shortest resync a k8or.io/resync-period annotation may ask for (protects the cloud API quota)',
    parse: duration,
  },
  {
    key: 'reconcileTimeoutMs',
    flag: 'reconcile-timeout',
    env: 'K8OR_RECONCILE_TIMEOUT',
    default: '2m',
    valueName: 'DURATION',
    scope: 'controllers',
    description: 'deadline of one reconcile; its cloud calls are aborted after it',
    parse: duration,
  },
  {
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout',
    env: 'K8OR_SHUTDOWN_TIMEOUT',
    default: '30s',
    valueName: 'DURATION',
    scope: 'all',
    description: 'on SIGTERM, how long in-flight reconciles may finish before the process exits',
    parse: duration,
  },
  {
    key: 'defaultDeletionPolicy',
    flag: 'default-deletion-policy',
    env: 'K8OR_DEFAULT_DELETION_POLICY',
    default: 'Delete',
    valueName: 'POLICY',
    scope: 'all',
    description: 'Delete or Retain, for resources whose spec, annotation and namespace name no policy',
    parse: oneOf<DeletionPolicy>(['Delete', 'Retain']),
  },
  {
    key: 'leaderElect',
    flag: 'leader-elect',
    env: 'K8OR_LEADER_ELECT',
    default: 'false',
    scope: 'controllers',
    description: 'reconcile only while holding a Lease, so replicas can stand by',
    parse: booleanSetting,
  },
  {
    key: 'leaderElectionNamespace',
    flag: 'leader-election-namespace',
    env: 'K8OR_LEADER_ELECTION_NAMESPACE',
    default: 'k8or-system',
    valueName: 'NS',
    scope: 'controllers',
    description: 'namespace of the leader election Lease',
    parse: dnsLabel,
  },
  {
    key: 'leaderElectionId',
    flag: 'leader-election-id',
    env: 'K8OR_LEADER_ELECTION_ID',
    default: 'k8or-operator',
    valueName: 'NAME',
    scope: 'controllers',
    description: 'name of the leader election Lease',
    parse: dnsLabel,
  },
  {
    key: 'shardName',
    flag: 'shard-name',
    env: 'K8OR_SHARD_NAME',
    default: undefined,
    valueName: 'NAME',
    scope: 'controllers',
    description:
      'run as one shard of the replicas, named NAME (the Pod name): reconcile only the objects labelled for it, while holding a Lease of that name; the replica holding the leader election Lease assigns objects to shards. Off when unset; needs --leader-elect',
    parse: dnsLabel,
  },
  {
    key: 'shardTakeover',
    flag: 'shard-takeover',
    env: 'K8OR_SHARD_TAKEOVER',
    default: 'relabel',
    valueName: 'HOW',
    scope: 'controllers',
    description:
      "with --shard-name, how a dead shard's objects reach the live shards: relabel (each works an object once it is relabelled for it) or adopt (the live shards work them at once, each its part, while the leader relabels them)",
    parse: oneOf<ShardTakeover>(SHARD_TAKEOVERS),
  },
  {
    key: 'secretsNamespace',
    flag: 'secrets-namespace',
    env: 'K8OR_SECRETS_NAMESPACE',
    default: 'k8or-system',
    valueName: 'NS',
    scope: 'all',
    description: 'the namespace whose Secrets hold provider credentials',
    parse: dnsLabel,
  },
  {
    key: 'clusterId',
    flag: 'cluster-id',
    env: 'K8OR_CLUSTER_ID',
    default: undefined,
    valueName: 'ID',
    scope: 'all',
    description: 'identifies this cluster in owner tags and default external names (the webhook and the controllers must agree); default: the uid of the kube-system namespace',
    parse: (text) => {
      if (!/^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}$/.test(text)) throw 'must be 1 to 63 letters, digits, hyphens, dots or underscores';
      return text;
    },
  },
  {
    key: 'metricsAddress',
    flag: 'metrics-bind-address',
    env: 'K8OR_METRICS_BIND_ADDRESS',
    default: ':8080',
    valueName: 'ADDR',
    scope: 'all',
    description: 'where /metrics is served (HOST:PORT; port 0 picks a free one)',
    parse: hostPort,
  },
  {
    key: 'probeAddress',
    flag: 'health-probe-bind-address',
    env: 'K8OR_HEALTH_PROBE_BIND_ADDRESS',
    default: ':8081',
    valueName: 'ADDR',
    scope: 'all',
    description: 'where /healthz and /readyz are served (HOST:PORT; may equal the metrics address)',
    parse: hostPort,
  },
  {
    key: 'webhookAddress',
    flag: 'webhook-bind-address',
    env: 'K8OR_WEBHOOK_BIND_ADDRESS',
    default: ':9443',
    valueName: 'ADDR',
    scope: 'webhook',
    description: 'where the admission webhook listens (HTTPS)',
    parse: hostPort,
  },
  {
    key: 'webhookCertDir',
    flag: 'webhook-cert-dir',
    env: 'K8OR_WEBHOOK_CERT_DIR',
    default: undefined,
    valueName: 'DIR',
    scope: 'webhook',
    description: 'tls.crt, tls.key and ca.crt for the webhook (cert-manager); unset: a self-signed CA written into the webhook configurations',
    parse: (text) => {
      if (!text.trim()) throw 'must be a directory';
      return text;
    },
  },
  {
    key: 'webhookServiceName',
    flag: 'webhook-service-name',
    env: 'K8OR_WEBHOOK_SERVICE_NAME',
    default: undefined,
    valueName: 'NAME',
    scope: 'webhook',
    description: 'the Service in front of the webhook (with --webhook-service-namespace): without --webhook-cert-dir, the self-signed certificate names <svc>, <svc>.<ns>, <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local, and the webhook configurations point at it',
    parse: dnsLabel,
  },
  {
    key: 'webhookServiceNamespace',
    flag: 'webhook-service-namespace',
    env: 'K8OR_WEBHOOK_SERVICE_NAMESPACE',
    default: undefined,
    valueName: 'NAMESPACE',
    scope: 'webhook',
    description: 'the namespace of --webhook-service-name',
    parse: dnsLabel,
  },
  {
    key: 'webhookCertSecret',
    flag: 'webhook-cert-secret',
    env: 'K8OR_WEBHOOK_CERT_SECRET',
    default: undefined,
    valueName: 'NAME',
    scope: 'webhook',
    description:
      'without --webhook-cert-dir: a Secret in the --webhook-service-namespace through which every replica shares one self-signed CA and certificate (the first creates it, one renews it before its end, all serve it); unset: each process makes its own',
    parse: dnsLabel,
  },
  {
    key: 'webhookCertCheckIntervalMs',
    flag: 'webhook-cert-check-interval',
    env: 'K8OR_WEBHOOK_CERT_CHECK_INTERVAL',
    default: '1m',
    valueName: 'DURATION',
    scope: 'webhook',
    description: 'how often each replica re-reads --webhook-cert-secret, renews it when a third of its lifetime is left, and serves what it holds',
    parse: duration,
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    env: 'K8OR_LOG_LEVEL',
    default: 'info',
    valueName: 'LEVEL',
    scope: 'all',
    description: `one of ${LOG_LEVELS.join(', ')}`,
    parse: oneOf(LOG_LEVELS),
  },
  {
    key: 'kubeconfig',
    flag: 'kubeconfig',
    env: 'KUBECONFIG',
    default: undefined,
    valueName: 'FILE',
    scope: 'all',
    description: 'talk to the cluster of this kubeconfig; default: in-cluster, else ~/.kube/config',
    parse: (text) => {
      if (!text.trim()) throw 'must be a file';
      return text;
    },
  },
];

/** The settings a command takes: `controllers` for `k8or operator`, `webhook` for `k8or webhook`. */
export function settingsFor(command: 'controllers' | 'webhook'): Setting[] {
  return SETTINGS.filter((s) => s.scope === 'all' || s.scope === command || (command === 'controllers' && s.scope === 'webhook'));
}

/**
 * Builds the configuration from flag values (keyed by flag name, as given on
 * the command line) over environment variables over defaults, checking every
 * rule. Throws a ConfigError naming the setting and the rule.
 */
export function resolveConfig(flags: Readonly<Record<string, string | boolean | undefined>>, env: Readonly<Record<string, string | undefined>>, components: Component[]): OperatorConfig {
  const config: Partial<Record<keyof OperatorConfig, unknown>> = { components };
  for (const setting of SETTINGS) {
    const flag = flags[setting.flag];
    const text = flag === undefined ? (env[setting.env] ?? setting.default) : String(flag);
    if (text === undefined) continue;
    try {
      config[setting.key] = setting.parse(text);
    } catch (rule) {
      if (typeof rule !== 'string') throw rule;
      throw new ConfigError(setting, rule, text);
    }
  }
  const result = config as OperatorConfig;
  if (result.resyncPeriodMs < result.minResyncPeriodMs) {
    throw new ConfigError(settingOf('resyncPeriodMs'), `must not be shorter than --min-resync-period (${String(flags['min-resync-period'] ?? env.K8OR_MIN_RESYNC_PERIOD ?? '10s')})`, String(flags['resync-period'] ?? env.K8OR_RESYNC_PERIOD ?? '1h'));
  }
  if ((result.webhookServiceName === undefined) !== (result.webhookServiceNamespace === undefined)) {
    const [given, missing] = result.webhookServiceName === undefined ? (['webhookServiceNamespace', 'webhookServiceName'] as const) : (['webhookServiceName', 'webhookServiceNamespace'] as const);
    throw new ConfigError(settingOf(given), `needs --${settingOf(missing).flag} too: the Service is named by both`, String(result[given]));
  }
  if (result.webhookCertSecret !== undefined && result.webhookServiceNamespace === undefined) {
    throw new ConfigError(settingOf('webhookCertSecret'), 'needs --webhook-service-namespace: the Secret is kept in the namespace of the webhook Service', result.webhookCertSecret);
  }
  if (result.shardName !== undefined && !result.leaderElect) {
    throw new ConfigError(settingOf('shardName'), 'needs --leader-elect: the leader assigns objects to shards', result.shardName);
  }
  if (result.shardName !== undefined && result.namespaces.length > 1) {
    throw new ConfigError(settingOf('shardName'), 'works with one namespace or all, not several: a replica is one shard', result.shardName);
  }
  return result;
}

function settingOf(key: keyof OperatorConfig): Setting {
  const found = SETTINGS.find((s) => s.key === key);
  if (!found) throw new Error(`no setting ${key}`);
  return found;
}
