import type { ManagedKindName } from '@k8or/api';

/** On a shard Lease: the ring (the operator's name) the shard belongs to. */
export const SHARD_LEASE_LABEL = 'k8or.io/shard-lease';

/**
 * On a shard Lease: the shards (sorted, comma-separated) among which that shard divides the cloud
 * limits now; a joining shard makes no cloud call before every other shard's Lease names it here.
 */
export const SHARDS_COUNTED_ANNOTATION = 'k8or.io/shards-counted';

/** On a Bucket or Table: the shard that holds it (`shard.k8or.io/bucket`, `shard.k8or.io/table`). */
export function shardLabel(kind: ManagedKindName): string {
  return `shard.k8or.io/${kind.toLowerCase()}`;
}

/** On a Bucket or Table: the leader asks its shard to let go of it. */
export function drainLabel(kind: ManagedKindName): string {
  return `drain.k8or.io/${kind.toLowerCase()}`;
}
