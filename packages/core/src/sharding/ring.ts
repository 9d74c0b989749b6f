import { sha256Prefix48 } from '../util/sha256-prefix.js';

/** Virtual nodes per shard: enough for an even spread with a handful of shards (as kubernetes-controller-sharding). */
export const DEFAULT_TOKENS_PER_SHARD = 100;

/** A point on the ring: the first 48 bits of the key's SHA-256. */
export function ringHash(value: string): number {
  return sha256Prefix48(value);
}

interface Token {
  hash: number;
  shard: string;
}

/**
 * A consistent-hashing ring over shard names. Each shard owns `tokensPerShard` points
 * (`<shard>#<i>` hashed); a key belongs to the shard of the first point at or after the key's
 * hash, wrapping round. The ring depends only on the set of names, never on their order, so
 * every replica that sees the same live shards computes the same assignment. Immutable: a
 * change of membership is a new ring.
 */
export class HashRing {
  readonly shards: readonly string[];
  readonly #tokens: readonly Token[];

  constructor(shards: Iterable<string>, tokensPerShard = DEFAULT_TOKENS_PER_SHARD) {
    if (!Number.isInteger(tokensPerShard) || tokensPerShard < 1) throw new RangeError('tokensPerShard must be a positive integer');
    const names = [...new Set(shards)].sort();
    if (names.some((name) => name === '')) throw new RangeError('a shard name must not be empty');
    const tokens: Token[] = [];
    for (const shard of names) for (let i = 0; i < tokensPerShard; i++) tokens.push({ hash: ringHash(`${shard}#${i}`), shard });
    // Equal hashes (vanishingly rare) are ordered by name, so the winner does not depend on input order.
    tokens.sort((a, b) => a.hash - b.hash || (a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : 0));
    this.shards = names;
    this.#tokens = tokens;
  }

  get isEmpty(): boolean {
    return this.#tokens.length === 0;
  }

  /** The shard that owns `key`, or undefined when the ring has no shard. */
  shardFor(key: string): string | undefined {
    return this.shardAt(ringHash(key));
  }

  /** The shard that owns the ring position `hash` (a `ringHash`), or undefined when the ring has no shard. */
  shardAt(hash: number): string | undefined {
    const tokens = this.#tokens;
    if (tokens.length === 0) return undefined;
    // First token with token.hash >= hash.
    let low = 0;
    let high = tokens.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (tokens[middle]!.hash < hash) low = middle + 1;
      else high = middle;
    }
    return tokens[low === tokens.length ? 0 : low]!.shard;
  }
}

/** The rings `hashRingOf` made last, by their shard names: memberships change seldom, and a ring is 100 hashes per shard. */
const recentRings = new Map<string, HashRing>();
const RECENT_RINGS = 8;

/** The ring of `shards` with the default tokens: the one made last for the same names, when there is one (rings are immutable). */
export function hashRingOf(shards: Iterable<string>): HashRing {
  const names = [...new Set(shards)].sort();
  const key = names.join('\n');
  let ring = recentRings.get(key);
  if (!ring) {
    ring = new HashRing(names);
    if (recentRings.size >= RECENT_RINGS) recentRings.delete(recentRings.keys().next().value!);
    recentRings.set(key, ring);
  }
  return ring;
}
