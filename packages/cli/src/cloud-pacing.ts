import type { ProviderConfig } from '@k8or/api';
import { CloudRateLimits, type CloudCallRecorder, type ProviderPlugin } from '@k8or/core';

const unrecorded: CloudCallRecorder = async (_operation, call) => await call();

/**
 * The cloud calls of a CLI command (`k8or plan`, `k8or import`) keep to the
 * same rate limits as the operator's: the engine's CloudRateLimits, so the
 * provider's declared limits and the ProviderConfig's `spec.rateLimits`
 * overrides, one token bucket per ProviderConfig and service for the whole
 * command, and a token for every SDK retry. The command's buckets are its
 * own: run beside the operator, both draw on the account's quota.
 */
export class CloudPacing {
  readonly #limits = new CloudRateLimits();

  /**
   * The `recordCall` for a connector of `plugin` under `providerConfig`.
   * Throws a TerminalError naming the field and the rule when
   * `spec.rateLimits` is invalid, as the engine refuses to connect.
   */
  recorder(plugin: ProviderPlugin, providerConfig: ProviderConfig): CloudCallRecorder {
    return this.#limits.recorder(plugin, providerConfig, unrecorded);
  }
}
