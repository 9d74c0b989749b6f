// A seeded PRNG (mulberry32) so every random choice of a fault run (operations, kill points, fault
// kinds) replays from the seed the run prints: K8OR_RELIABILITY_SEED=<seed> reproduces a failure.

export interface Random {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[Math.floor(next() * items.length)]!;
    },
  };
}

/**
 * The seed of one suite: K8OR_RELIABILITY_SEED when set, else a fresh one. Printed, so a failing run
 * names the seed that replays it.
 */
export function suiteSeed(suite: string): Random {
  const given = process.env['K8OR_RELIABILITY_SEED'];
  const seed = given !== undefined && given !== '' ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  if (given !== undefined && given !== '' && !Number.isFinite(Number(given))) throw new Error(`K8OR_RELIABILITY_SEED must be a number, got "${given}"`);
  console.log(`# ${suite}: seed ${seed} (replay with K8OR_RELIABILITY_SEED=${seed})`);
  return seededRandom(seed);
}
