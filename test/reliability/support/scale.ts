// How big a fault run is: `ci` (the default, part of `npm test`) or `large`
// (K8OR_RELIABILITY_SCALE=large: more resources, more faults, longer runs).

export type Scale = 'ci' | 'large';

export function reliabilityScale(): Scale {
  const given = process.env['K8OR_RELIABILITY_SCALE'] ?? 'ci';
  if (given !== 'ci' && given !== 'large') throw new Error(`K8OR_RELIABILITY_SCALE must be "ci" or "large", got "${given}"`);
  return given;
}

/** The value for this run's scale. */
export function sized<T>(sizes: Record<Scale, T>): T {
  return sizes[reliabilityScale()];
}
