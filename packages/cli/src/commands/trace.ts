import { ProviderLoader } from '@k8or/operator';
import { CloudPacing } from '../cloud-pacing.js';
import { ClusterReader } from '../cluster/reads.js';
import { gatherManaged, gatherProviderConfig, type GatherDeps } from '../trace/gather.js';
import { problemsOf } from '../trace/problems.js';
import { redact, secretNeedles } from '../trace/redact.js';
import { renderTrace } from '../trace/render.js';
import type { TraceReport } from '../trace/report.js';
import { parseTraceTarget } from '../trace/target-arg.js';

export interface TraceOptions {
  /** `KIND/NAME`, or `KIND` and `NAME`. */
  target: string[];
  namespace: string | undefined;
  kubeconfig: string | undefined;
  context: string | undefined;
  clusterId: string | undefined;
  output: 'human' | 'json';
  providers: string[];
  providerRoot: string | undefined;
  timeoutMs: number;
  /** The operator's drift-check period for objects without `k8or.io/resync-period`. */
  defaultResyncMs: number;
}

/** The object does not exist: the trace has nothing to show. */
export class TraceNotFoundError extends Error {}

/**
 * `k8or trace KIND/NAME`: one object, its ProviderConfig and credential source, its cloud
 * resource read live (read-only, through the ProviderConfig's rate limits), its drift, resync
 * schedule, Events and outputs, and each problem found with the one thing to do about it.
 * Writes nothing anywhere; prints no credential.
 */
export async function traceCommand(options: TraceOptions): Promise<number> {
  const target = parseTraceTarget(options.target);
  const cluster = ClusterReader.from(options.kubeconfig, options.context);
  const { providers } = await new ProviderLoader(options.providerRoot ? { root: options.providerRoot } : {}).loadAll(options.providers);
  const clusterId = options.clusterId ?? process.env.K8OR_CLUSTER_ID ?? (await cluster.kubeSystemUid()) ?? 'unknown';
  const deps: GatherDeps = { cluster, providers, clusterId, pacing: new CloudPacing(), timeoutMs: options.timeoutMs, defaultResyncMs: options.defaultResyncMs };
  const namespace = options.namespace ?? namespaceOf(cluster);

  const gathered = target.kind === 'ProviderConfig' ? await gatherProviderConfig(deps, target.name) : await gatherManaged(deps, target.kind, namespace, target.name);
  if (!gathered) throw new TraceNotFoundError(`${target.kind} ${target.kind === 'ProviderConfig' ? '' : `${namespace}/`}${target.name} not found`);
  const report: TraceReport = redact({ ...gathered.report, problems: problemsOf(gathered.report) }, secretNeedles(gathered.secretValues));

  process.stdout.write(options.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderTrace(report));
  return 0;
}

/** The kubeconfig context's namespace, as kubectl takes it when -n is not given. */
function namespaceOf(cluster: ClusterReader): string {
  const config = cluster.kubeConfig;
  return config.getContextObject(config.getCurrentContext())?.namespace ?? 'default';
}
