import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  CloudRateLimits,
  CoreMetrics,
  Engine,
  HealthChecks,
  LeaderElector,
  ShardAssigner,
  createLogger,
  loadKubeAccess,
  startProbeServer,
  type KubeAccess,
  type ProbeServer,
  type ProviderPlugin,
} from '@k8or/core';
import type { WebhookServer } from '@k8or/webhook';
import type { Container } from 'inversify';
import type { Logger } from 'pino';
import type { OperatorConfig } from './config/settings.js';
import { OPERATOR_CONFIG, OPERATOR_LOGGER, KUBE_CONFIG } from './container.js';
import { ProviderLoader } from './providers/loader.js';
import { resolveClusterId } from './cluster-id.js';
import { registerResourceMetrics } from './resource-metrics.js';

/** What a running manager serves. */
export interface Manager {
  container: Container;
  providers: ReadonlyMap<string, ProviderPlugin>;
  /** Package names of the loaded providers. */
  providerPackages: string[];
  engines: Engine[];
  webhook: WebhookServer | undefined;
  /** `http://host:port` of /healthz, /readyz (and /metrics when the addresses are equal). */
  probeUrl: string;
  metricsUrl: string;
  /**
   * Drains: the controllers stop taking work, in-flight reconciles finish
   * within `shutdownTimeoutMs`, the Lease is released, the servers close.
   * Resolves `false` when the deadline passed first.
   */
  stop(): Promise<boolean>;
}

export interface StartManagerOptions {
  /** Use this instead of building one from `config.kubeconfig` (a client-node KubeConfig fits). */
  kubeConfig?: KubeAccess;
  logger?: Logger;
}

/** Loads the providers, then starts the controllers and/or the webhook and the probe and metrics servers. */
export async function startManager(config: OperatorConfig, options: StartManagerOptions = {}): Promise<Manager> {
  const logger = options.logger ?? createLogger({ name: 'k8or-operator', level: config.logLevel });
  // Neither the controllers nor the webhook need more of the kubeconfig than KubeAccess, so the
  // process never loads client-node (about 65 MiB of RSS); the webhook package is loaded only for the webhook.
  const kubeConfig: KubeAccess = options.kubeConfig ?? (await loadKubeAccess(config.kubeconfig));
  const loader = new ProviderLoader(config.providerRoot ? { root: config.providerRoot } : {});
  const { container, providers, packages } = await loader.loadAll(config.providers);
  container.bind<OperatorConfig>(OPERATOR_CONFIG).toConstantValue(config);
  container.bind<Logger>(OPERATOR_LOGGER).toConstantValue(logger);
  container.bind<KubeAccess>(KUBE_CONFIG).toConstantValue(kubeConfig);
  logger.info({ providers: [...providers.keys()], packages: packages.map((p) => p.packageName) }, 'providers loaded');

  const closers: (() => Promise<void>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.reverse()) await close().catch((error: unknown) => logger.warn({ err: error }, 'stop step failed'));
  };
  try {
    const metrics = new CoreMetrics();
    const health = new HealthChecks();
    const engines: Engine[] = [];
    // Owner tags and default external names fold it in: the engine and the webhook must agree on it.
    const clusterId = await resolveClusterId(kubeConfig, config.clusterId);
    if (config.components.includes('controllers')) {
      const namespaces = config.namespaces.length ? config.namespaces : [undefined];
      // One budget per ProviderConfig for the whole process: the engines of several namespaces share ProviderConfigs.
      const cloudRateLimits = new CloudRateLimits({ metrics: metrics.cloudRateLimitMetrics() });
      for (const namespace of namespaces) {
        const engine = new Engine({
          kubeConfig,
          providers: container,
          clusterId,
          defaultDeletionPolicy: config.defaultDeletionPolicy,
          workers: config.workers,
          resyncPeriodMs: config.resyncPeriodMs,
          resyncFloorMs: config.minResyncPeriodMs,
          reconcileTimeoutMs: config.reconcileTimeoutMs,
          shutdownDeadlineMs: config.shutdownTimeoutMs,
          secretsNamespace: config.secretsNamespace,
          ...(namespace ? { namespace } : {}),
          ...(config.shardName !== undefined
            ? { identity: config.shardName, sharding: { namespace: config.leaderElectionNamespace, ring: config.leaderElectionId, shard: config.shardName } }
            : config.leaderElect
              ? { leaderElection: { namespace: config.leaderElectionNamespace, name: namespace && namespaces.length > 1 ? `${config.leaderElectionId}-${namespace}` : config.leaderElectionId } }
              : {}),
          metrics,
          cloudRateLimits,
          health,
          logger: logger.child({ component: 'engine', ...(namespace ? { namespace } : {}) }),
        });
        await engine.start();
        closers.push(() => engine.stop());
        engines.push(engine);
      }
    }

    if (config.components.includes('controllers') && config.shardName !== undefined) {
      // Sharded: the replica that holds the leader election Lease assigns objects to shards.
      const assigner = new ShardAssigner({
        kubeConfig,
        namespace: config.leaderElectionNamespace,
        ring: config.leaderElectionId,
        providers,
        clusterId,
        adoptDeadShards: config.shardTakeover === 'adopt',
        metrics: metrics.shardAssignerMetrics(),
        logger: logger.child({ component: 'shard-assigner' }),
      });
      const stopping = new AbortController();
      let elector: LeaderElector | undefined;
      // Competes again after losing the Lease, as the engine does: some replica must always assign.
      const assigning = (async () => {
        while (!stopping.signal.aborted) {
          elector = new LeaderElector({
            kubeConfig,
            namespace: config.leaderElectionNamespace,
            name: config.leaderElectionId,
            identity: `${config.shardName}-${randomUUID().slice(0, 8)}`,
            logger: logger.child({ component: 'shard-assigner' }),
          });
          await elector.run({ onStartedLeading: (signal) => assigner.run(signal), onStoppedLeading: () => undefined });
          await delay(2_000, undefined, { signal: stopping.signal }).catch(() => undefined);
        }
      })();
      closers.push(async () => {
        stopping.abort();
        await elector?.stop();
        await assigning;
        assigner.close();
      });
    }

    registerResourceMetrics(metrics, engines);

    let webhook: WebhookServer | undefined;
    if (config.components.includes('webhook')) {
      const certDir = config.webhookCertDir;
      // In a cluster the API server calls the webhook through its Service: the self-signed
      // certificate names the Service, and the configurations point at it.
      const service = config.webhookServiceName && config.webhookServiceNamespace ? { name: config.webhookServiceName, namespace: config.webhookServiceNamespace } : undefined;
      // Every replica serves the one certificate of the shared Secret, so the caBundle each writes is the same.
      const shared =
        config.webhookCertSecret && config.webhookServiceNamespace
          ? { shared: { namespace: config.webhookServiceNamespace, name: config.webhookCertSecret, checkIntervalMs: config.webhookCertCheckIntervalMs } }
          : {};
      const { startWebhookServer } = await import('@k8or/webhook');
      webhook = await startWebhookServer({
        host: config.webhookAddress.host,
        port: config.webhookAddress.port,
        tls: certDir ? { files: { certFile: `${certDir}/tls.crt`, keyFile: `${certDir}/tls.key`, caFile: `${certDir}/ca.crt` } } : { selfSigned: { ...(service ? { service } : {}), ...shared } },
        kubeConfig,
        providers,
        defaultDeletionPolicy: config.defaultDeletionPolicy,
        secretNamespaces: [config.secretsNamespace],
        clusterId,
        ...(certDir ? {} : { caBundle: { register: true, ...(service ? { service: { ...service, port: 443 } } : {}) } }),
        logger: logger.child({ component: 'webhook' }),
      });
      const started = webhook;
      closers.push(() => started.close());
      // The admission metrics on the metrics port too, which is the one the chart's ServiceMonitor scrapes
      // (the webhook's own /metrics is on its HTTPS port); a name both have, such as the process metrics, once.
      for (const { name } of started.metrics.registry.getMetricsAsArray()) {
        const metric = started.metrics.registry.getSingleMetric(name);
        if (metric && !metrics.registry.getSingleMetric(name)) metrics.registry.registerMetric(metric);
      }
      health.addReadinessCheck('webhook', () => started.isReady());
    }

    const probes: ProbeServer = await startProbeServer({ ...config.probeAddress, health, metrics });
    closers.push(() => probes.close());
    let metricsUrl = probes.url;
    if (!sameAddress(config.metricsAddress, config.probeAddress)) {
      const metricsServer = await startProbeServer({ ...config.metricsAddress, health, metrics });
      closers.push(() => metricsServer.close());
      metricsUrl = metricsServer.url;
    }

    const stop = async (): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<false>((resolve) => {
        // A little beyond the engines' own drain deadline, for the Lease release and the servers.
        timer = setTimeout(() => resolve(false), config.shutdownTimeoutMs + 5_000);
      });
      const drained = await Promise.race([closeAll().then(() => true), deadline]);
      clearTimeout(timer);
      return drained;
    };
    logger.info({ providers: [...providers.keys()], probes: probes.url, metrics: metricsUrl, webhook: webhook?.url, engines: engines.length }, 'ready');
    return { container, providers, providerPackages: packages.map((p) => p.packageName), engines, webhook, probeUrl: probes.url, metricsUrl, stop };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

const sameAddress = (a: { host: string; port: number }, b: { host: string; port: number }): boolean => a.host === b.host && a.port === b.port && a.port !== 0;
