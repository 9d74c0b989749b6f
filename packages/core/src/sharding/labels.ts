import type { ManagedKindName } from '@k8or/api';

/** On a shard Lease: the ring (the operator's name) the shard belongs to. */
export const SHARD_LEASE_LABEL = 'k8or.io/shard-lease';

/**
 * On a shard Lease: the shards (sorted, comma-separated) among which that shard divides the cloud
 * limits now; a joining shard makes no cloud call before every other shard's Lease names it here.
 */
export const SHARDS_COUNTED_ANNOTATION = 'k8or.io/shards-counted';

/**
 * On a dead shard's Lease, written by the leader when it takes that Lease: the live shards (sorted,
 * comma-separated) that adopt the dead shard's objects. Each works those whose shard key falls to it
 * on the ring of these shards, while their label still names the dead shard, for as long as the
 * leader keeps writing that Lease; so a takeover writes no object before work resumes.
 */
export const ADOPTED_BY_ANNOTATION = 'k8or.io/adopted-by';

/** On a Bucket or Table: the shard that holds it (`shard.k8or.io/bucket`, `shard.k8or.io/table`). */
export function shardLabel(kind: ManagedKindName): string {
  return `shard.k8or.io/${kind.toLowerCase()}`;
}

/** On a Bucket or Table: the leader asks its shard to let go of it. */
export function drainLabel(kind: ManagedKindName): string {
  return `drain.k8or.io/${kind.toLowerCase()}`;
}
