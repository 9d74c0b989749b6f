import { hash } from 'node:crypto';

/**
 * The first 48 bits of the SHA-256 of `value`'s UTF-8, as a safe integer, so comparisons stay
 * plain numbers. One-shot: no Hash object per value holding native memory until a GC collects it
 * (the assigner hashes every object of the cluster in a full pass).
 */
export function sha256Prefix48(value: string): number {
  return Number.parseInt(hash('sha256', value, 'hex').slice(0, 12), 16);
}
