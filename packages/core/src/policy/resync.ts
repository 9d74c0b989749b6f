import { Annotations, type Violation } from '@k8or/api';
import { annotation } from './read.js';

/** The operator's drift-check period for a resource without `k8or.io/resync-period`, unless configured otherwise. */
export const DEFAULT_RESYNC_PERIOD_MS = 3_600_000;

/** The shortest drift-check period the engine accepts, whatever an annotation says. */
export const DEFAULT_RESYNC_FLOOR_MS = 10_000;

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const GO_DURATION = /^[-+]?((\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;

/** Parses a Go duration (`30s`, `5m`, `1h30m`, `1.5h`, `-5m`, `0`) to milliseconds; undefined when malformed. */
export function parseGoDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0' || trimmed === '+0' || trimmed === '-0') return 0;
  if (!GO_DURATION.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(match[1]) * (UNITS[match[2] as string] ?? 0);
  return trimmed.startsWith('-') ? -total : total;
}

/** Rule identifiers of the resync-period checks. */
export const ResyncRules = {
  format: 'resync-period.format',
  positive: 'resync-period.positive',
  floor: 'resync-period.floor',
} as const;

/** A period as a Go duration a user reads: `1h`, `1h30m`, `30s`, `1500ms`. */
export function formatGoDuration(ms: number): string {
  if (ms % 1000 !== 0 || ms === 0) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const sec = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${sec ? `${sec}s` : ''}`;
}

/** What is wrong with a `k8or.io/resync-period` value, or undefined when it is a valid period at or above the floor. */
export function resyncPeriodViolation(text: string, floorMs: number = DEFAULT_RESYNC_FLOOR_MS): Violation | undefined {
  const field = `metadata.annotations[${Annotations.resyncPeriod}]`;
  const ms = parseGoDuration(text);
  if (ms === undefined) {
    return { field, rule: ResyncRules.format, message: `${JSON.stringify(text)} is not a duration; use Go duration syntax such as 30s, 5m or 1h30m` };
  }
  if (ms <= 0) return { field, rule: ResyncRules.positive, message: `must be a positive duration, not ${JSON.stringify(text)}` };
  if (ms < floorMs) {
    return { field, rule: ResyncRules.floor, message: `${JSON.stringify(text)} is below the operator's floor of ${formatGoDuration(floorMs)}; a shorter period would hammer the cloud API` };
  }
  return undefined;
}

/**
 * The resource's drift-check period: its `k8or.io/resync-period` when valid,
 * else `defaultMs`; never below `floorMs`, whatever the API server holds (an
 * object stored before the webhook, or without it).
 */
export function resyncPeriodFor(resource: unknown, defaultMs: number, floorMs: number = DEFAULT_RESYNC_FLOOR_MS): number {
  const text = annotation(resource, Annotations.resyncPeriod);
  const parsed = text !== undefined ? parseGoDuration(text) : undefined;
  const period = parsed !== undefined && parsed > 0 ? parsed : defaultMs;
  return Math.max(period, floorMs);
}
