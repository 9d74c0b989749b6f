import { ContainerModule, type Container } from 'inversify';
import type { ProviderPlugin } from './contract.js';

/**
 * The inversify service identifier providers bind their plugin to. `Symbol.for`
 * keeps it the same even when a provider package brings its own copy of core.
 */
export const PROVIDER_PLUGIN = Symbol.for('k8or.io/ProviderPlugin');

/** The ContainerModule a provider package exports (as its default export). */
export function providerModule(plugin: ProviderPlugin): ContainerModule {
  return new ContainerModule((options) => {
    options.bind<ProviderPlugin>(PROVIDER_PLUGIN).toConstantValue(plugin);
  });
}

/** Every provider plugin loaded into the container, keyed by provider. */
export function loadedProviders(container: Container): Map<string, ProviderPlugin> {
  const plugins = container.isBound(PROVIDER_PLUGIN) ? container.getAll<ProviderPlugin>(PROVIDER_PLUGIN) : [];
  return new Map(plugins.map((p) => [p.provider, p]));
}
