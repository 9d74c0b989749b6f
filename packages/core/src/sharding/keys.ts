import type { ManagedKindName } from '@k8or/api';
import { ringHash, type HashRing } from './ring.js';

/** What decides where an object goes. */
export interface ShardKeySource {
  kind: ManagedKindName;
  namespace: string;
  name: string;
  /**
   * The cloud resource the object names (`cloudResourceKey` of its cloud target, kind and
   * external name), when its target is known.
   */
  cloudResourceKey?: string | undefined;
}

/**
 * The hash key of an object: the cloud resource it names when known, so every object naming one
 * cloud resource hashes alike and lands on one shard (where the engine's one-object-per-resource
 * check sees them all); else the object's own `<kind>/<namespace>/<name>`. A prefix keeps the
 * two forms apart.
 */
export function shardKeyOf(source: ShardKeySource): string {
  if (source.cloudResourceKey) return `resource:${source.cloudResourceKey}`;
  return `object:${source.kind}/${source.namespace}/${source.name}`;
}

/** Where an object's shard key falls on the ring. */
export function shardKeyHash(source: ShardKeySource): number {
  return ringHash(shardKeyOf(source));
}

/**
 * Where an object of a dead shard falls on its adopters' ring (`ADOPTED_BY_ANNOTATION`): by the
 * object alone (`<kind>/<namespace>/<name>`, which never changes), not by the cloud resource it
 * names, so an edit of its ProviderConfig or external name during the adoption never hands it to a
 * second adopter. Every adopter caches all the dead shard's objects, so the claimants of one cloud
 * resource stay in view of each.
 */
export function adoptionHash(object: { kind: ManagedKindName; namespace: string; name: string }): number {
  return shardKeyHash({ kind: object.kind, namespace: object.namespace, name: object.name });
}

/** The live shard an object belongs on, or undefined when no shard is live. */
export function assignShard(ring: HashRing, source: ShardKeySource): string | undefined {
  return ring.shardAt(shardKeyHash(source));
}
