import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/access.js';
import { LeaderElector } from '../leader/leader-elector.js';
import { SHARD_LEASE_LABEL } from './labels.js';

export interface ShardLeaseOptions {
  kubeConfig: KubeAccess;
  /** The operator's namespace, where every shard Lease of the ring lives. */
  namespace: string;
  /** The ring: the operator's name, so two operators in one cluster never count each other's shards. */
  ring: string;
  /** This replica's name (the Pod name): the Lease's name and its holder both. */
  shard: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger?: Logger;
}

/**
 * A replica's own shard Lease: leader election on a Lease named after the replica, labelled
 * with its ring, so renewal, the renew deadline (stop every write before the Lease may be
 * called expired) and release on stop are exactly the leader's. `run(callbacks)` holds it;
 * `onStartedLeading`'s signal aborts when the shard must stop working.
 */
export function shardLease(options: ShardLeaseOptions): LeaderElector {
  return new LeaderElector({
    kubeConfig: options.kubeConfig,
    namespace: options.namespace,
    name: options.shard,
    identity: options.shard,
    labels: { [SHARD_LEASE_LABEL]: options.ring },
    ...(options.leaseDurationMs !== undefined ? { leaseDurationMs: options.leaseDurationMs } : {}),
    ...(options.renewDeadlineMs !== undefined ? { renewDeadlineMs: options.renewDeadlineMs } : {}),
    ...(options.retryPeriodMs !== undefined ? { retryPeriodMs: options.retryPeriodMs } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}
