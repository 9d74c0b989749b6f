export { SETTINGS, settingsFor, resolveConfig, ConfigError, type OperatorConfig, type Setting, type Component, type HostPort, type ShardTakeover, SHARD_TAKEOVERS } from './config/settings.js';
export { ProviderLoader, ProviderLoadError, type ProviderLoaderOptions, type LoadedProviderPackage } from './providers/loader.js';
export { packageCandidates, installedProviderPackages } from './providers/package-resolution.js';
export { resolveClusterId } from './cluster-id.js';
export { startManager, type Manager, type StartManagerOptions } from './manager.js';
export { runManagerUntilSignalled } from './process.js';
export { OPERATOR_CONFIG, OPERATOR_LOGGER, KUBE_CONFIG } from './container.js';
