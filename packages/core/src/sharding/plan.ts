import type { ManagedKindName } from '@k8or/api';
import { adoptionHash } from './keys.js';
import { hashRingOf } from './ring.js';
import { isDeadShard, type ShardMembership } from './shard-leases.js';

/** A Bucket or Table as the assigner sees it: where its shard key falls on the ring, and its labels now. */
export interface ShardedObject {
  readonly kind: ManagedKindName;
  readonly namespace: string;
  readonly name: string;
  /** The ring position of its shard key (`shardKeyHash`). */
  readonly keyHash: number;
  /** The value of its shard label (`shardLabel`); undefined or empty: unassigned. */
  readonly shard: string | undefined;
  /** It carries the drain label (`drainLabel`). */
  readonly draining: boolean;
}

/** One label change the assigner makes on one object. */
export type ShardLabelChange<T extends ShardedObject = ShardedObject> =
  /**
   * Unassigned, or its shard is dead: label it for `shard` at once (and drop any drain label).
   * `from`: the dead shard whose Lease fences the move (the adopter that worked it, when that one
   * died too).
   */
  | { action: 'assign'; object: T; shard: string; from?: string }
  /** Its live shard is no longer its shard: ask that shard to let go (the drain label). */
  | { action: 'drain'; object: T; from: string; to: string }
  /** Draining from a shard that is its shard again: let it stay. */
  | { action: 'undrain'; object: T; shard: string };

/**
 * The label changes that bring every object to its shard on the ring of `membership.live`,
 * without two shards ever working one object:
 *
 * - unassigned (no shard label: new, or let go by a drained shard) → assign;
 * - on a dead shard → assign at once (Lease expiry was the fence);
 * - on a dead shard whose Lease exists: the live shards adopt it (`membership.adoptions`, or the
 *   live shards now when no adoption is in effect: the fence's first write names them), and the
 *   adopter the object falls to (`adoptionHash`) works it from then on, so it is handed on as from
 *   that live shard: assign when that adopter is its shard anyway (the label catches up; no one
 *   else starts), else drain from the adopter (a drained one whose adoption lapsed, which no
 *   adopter works, is assigned at once); and assign at once when the adopter died too;
 * - on a live shard that is not its shard → drain; the shard removes both labels when it has
 *   let go, and the object is then unassigned;
 * - on an expiring shard → nothing until that shard is live or dead.
 *
 * No live shard: no change. Pure; the assigner applies the changes.
 */
export function planShardLabels<T extends ShardedObject>(objects: Iterable<T>, membership: ShardMembership): ShardLabelChange<T>[] {
  const ring = hashRingOf(membership.live);
  if (ring.isEmpty) return [];
  const adopted = new Map((membership.adoptions ?? []).map((adoption) => [adoption.shard, hashRingOf(adoption.adopters)]));
  const changes: ShardLabelChange<T>[] = [];
  for (const object of objects) {
    const desired = ring.shardAt(object.keyHash)!;
    const current = object.shard || undefined;
    const draining = object.draining;
    if (current === undefined) {
      changes.push({ action: 'assign', object, shard: desired });
    } else if (current === desired) {
      if (draining) changes.push({ action: 'undrain', object, shard: current });
    } else if (isDeadShard(membership, current)) {
      const inEffect = adopted.get(current);
      const adopter = (inEffect ?? (membership.leased?.includes(current) ? ring : undefined))?.shardAt(adoptionHash(object));
      if (adopter === undefined || adopter === desired) changes.push({ action: 'assign', object, shard: desired, from: current });
      else if (isDeadShard(membership, adopter)) changes.push({ action: 'assign', object, shard: desired, from: adopter });
      else if (membership.live.includes(adopter) && !draining) changes.push({ action: 'drain', object, from: adopter, to: desired });
      // Drained, and no adoption in effect: no adopter works it (an adopter only ever lets go of a drained object).
      else if (membership.live.includes(adopter) && inEffect === undefined) changes.push({ action: 'assign', object, shard: desired, from: current });
    } else if (membership.live.includes(current) && !draining) {
      changes.push({ action: 'drain', object, from: current, to: desired });
    }
  }
  return changes;
}
