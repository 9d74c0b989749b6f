import type { Violation } from '@k8or/api';
import type { CloudServiceRateLimit, ProviderPlugin } from '../provider/contract.js';
import { field, isPlainObject } from './read.js';

/** Rule identifiers of the `spec.rateLimits` checks. */
export const RateLimitRules = {
  object: 'rateLimits.object',
  service: 'rateLimits.service',
  field: 'rateLimits.field',
  rate: 'rateLimits.requestsPerSecond.positive',
  burst: 'rateLimits.burst.integer',
} as const;

/** The pace of one service as the engine enforces it, and where each number came from. */
export interface EffectiveRateLimit {
  requestsPerSecond: number;
  burst: number;
  /** `providerConfig` when `spec.rateLimits` set either number, else `default` (the provider's declaration). */
  source: 'default' | 'providerConfig';
}

type RateLimitPlugin = Pick<ProviderPlugin, 'provider' | 'rateLimits'>;

const FIELDS = new Set(['requestsPerSecond', 'burst']);

function knownServices(plugin: RateLimitPlugin): string {
  const names = Object.keys(plugin.rateLimits ?? {});
  return names.length > 0 ? `its services: ${names.join(', ')}` : 'it declares none';
}

/**
 * Checks `ProviderConfig.spec.rateLimits` against the provider's declared
 * services: each key a service the provider declares (a typo would otherwise
 * leave the account unprotected in silence), `requestsPerSecond` a finite
 * number above 0, `burst` an integer of at least 1, nothing else. Each
 * violation names the field and the rule. The webhook and the engine share it.
 */
export function rateLimitViolations(plugin: RateLimitPlugin, providerConfig: unknown): Violation[] {
  const limits = field(providerConfig, 'spec', 'rateLimits');
  if (limits === undefined) return [];
  if (!isPlainObject(limits)) return [{ field: 'spec.rateLimits', rule: RateLimitRules.object, message: 'must be an object of service name to { requestsPerSecond, burst }' }];
  const violations: Violation[] = [];
  for (const [service, limit] of Object.entries(limits)) {
    const path = `spec.rateLimits.${service}`;
    if (!Object.hasOwn(plugin.rateLimits ?? {}, service)) {
      violations.push({ field: path, rule: RateLimitRules.service, message: `provider "${plugin.provider}" has no rate-limited service "${service}"; ${knownServices(plugin)}` });
      continue;
    }
    if (!isPlainObject(limit)) {
      violations.push({ field: path, rule: RateLimitRules.object, message: 'must be an object { requestsPerSecond, burst }' });
      continue;
    }
    for (const key of Object.keys(limit)) {
      if (!FIELDS.has(key)) violations.push({ field: `${path}.${key}`, rule: RateLimitRules.field, message: 'is not a rate-limit field; use requestsPerSecond or burst' });
    }
    const rate = limit['requestsPerSecond'];
    if (rate !== undefined && !(typeof rate === 'number' && Number.isFinite(rate) && rate > 0)) {
      violations.push({ field: `${path}.requestsPerSecond`, rule: RateLimitRules.rate, message: `must be a number greater than 0 (got ${JSON.stringify(rate)})` });
    }
    const burst = limit['burst'];
    if (burst !== undefined && !(typeof burst === 'number' && Number.isInteger(burst) && burst >= 1)) {
      violations.push({ field: `${path}.burst`, rule: RateLimitRules.burst, message: `must be an integer of at least 1 (got ${JSON.stringify(burst)})` });
    }
  }
  return violations;
}

/**
 * Warnings for overrides above the provider's default: the defaults rest on
 * the clouds' published limits, so a higher rate may meet throttling.
 */
export function rateLimitWarnings(plugin: RateLimitPlugin, providerConfig: unknown): string[] {
  const warnings: string[] = [];
  for (const [service, declared] of Object.entries(plugin.rateLimits ?? {})) {
    const rate = field(providerConfig, 'spec', 'rateLimits', service, 'requestsPerSecond');
    if (typeof rate === 'number' && rate > declared.requestsPerSecond) {
      warnings.push(
        `spec.rateLimits.${service}.requestsPerSecond ${rate} is above provider "${plugin.provider}"'s default of ${declared.requestsPerSecond}, which rests on the cloud's published limit; expect throttling if the account has no higher quota`,
      );
    }
  }
  return warnings;
}

/**
 * The limit of every declared service for one ProviderConfig: its
 * `spec.rateLimits.<service>` numbers where set, else the provider's defaults.
 * Call it only on a ProviderConfig without `rateLimitViolations`.
 */
export function effectiveRateLimits(plugin: RateLimitPlugin, providerConfig: unknown): Map<string, EffectiveRateLimit> {
  const effective = new Map<string, EffectiveRateLimit>();
  for (const [service, declared] of Object.entries(plugin.rateLimits ?? {})) {
    effective.set(service, resolve(declared, field(providerConfig, 'spec', 'rateLimits', service)));
  }
  return effective;
}

function resolve(declared: CloudServiceRateLimit, override: unknown): EffectiveRateLimit {
  const rate = field(override, 'requestsPerSecond');
  const burst = field(override, 'burst');
  const requestsPerSecond = typeof rate === 'number' ? rate : declared.requestsPerSecond;
  return {
    requestsPerSecond,
    burst: typeof burst === 'number' ? burst : declared.burst,
    source: typeof rate === 'number' || typeof burst === 'number' ? 'providerConfig' : 'default',
  };
}
