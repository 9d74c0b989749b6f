import { assignShard, type ShardKeySource } from './keys.js';
import { drainLabel, shardLabel } from './labels.js';
import { HashRing } from './ring.js';
import { isDeadShard, type ShardMembership } from './shard-leases.js';

/** A Bucket or Table as the assigner sees it: what it hashes by, and its labels now. */
export interface ShardedObject extends ShardKeySource {
  labels: Readonly<Record<string, string>>;
}

/** One label change the assigner makes on one object. */
export type ShardLabelChange =
  /** Unassigned, or its shard is dead: label it for `shard` at once (and drop any drain label). */
  | { action: 'assign'; object: ShardedObject; shard: string; from?: string }
  /** Its live shard is no longer its shard: ask that shard to let go (the drain label). */
  | { action: 'drain'; object: ShardedObject; from: string; to: string }
  /** Draining from a shard that is its shard again: let it stay. */
  | { action: 'undrain'; object: ShardedObject; shard: string };

/**
 * The label changes that bring every object to its shard on the ring of `membership.live`,
 * without two shards ever working one object:
 *
 * - unassigned (no shard label: new, or let go by a drained shard) → assign;
 * - on a dead shard → assign at once (Lease expiry was the fence);
 * - on a live shard that is not its shard → drain; the shard removes both labels when it has
 *   let go, and the object is then unassigned;
 * - on an expiring shard → nothing until that shard is live or dead.
 *
 * No live shard: no change. Pure; the assigner applies the changes.
 */
export function planShardLabels(objects: Iterable<ShardedObject>, membership: ShardMembership): ShardLabelChange[] {
  const ring = new HashRing(membership.live);
  if (ring.isEmpty) return [];
  const changes: ShardLabelChange[] = [];
  for (const object of objects) {
    const desired = assignShard(ring, object)!;
    const current = object.labels[shardLabel(object.kind)] || undefined;
    const draining = object.labels[drainLabel(object.kind)] !== undefined;
    if (current === undefined) {
      changes.push({ action: 'assign', object, shard: desired });
    } else if (current === desired) {
      if (draining) changes.push({ action: 'undrain', object, shard: current });
    } else if (isDeadShard(membership, current)) {
      changes.push({ action: 'assign', object, shard: desired, from: current });
    } else if (membership.live.includes(current) && !draining) {
      changes.push({ action: 'drain', object, from: current, to: desired });
    }
  }
  return changes;
}
