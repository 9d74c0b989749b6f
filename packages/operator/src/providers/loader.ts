import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadedProviders, PROVIDER_PLUGIN, type ProviderPlugin } from '@k8or/core';
import { Container, ContainerModule } from 'inversify';
import { findPackageDir, installedProviderPackages, packageCandidates, packageEntryUrl } from './package-resolution.js';

/** A provider package that cannot be loaded: not installed, or not a k8or provider. */
export class ProviderLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderLoadError';
  }
}

export interface ProviderLoaderOptions {
  /** Looked in first (its node_modules, then its parents'), before the operator's own install. */
  root?: string;
}

/** One provider package, loaded. */
export interface LoadedProviderPackage {
  /** As asked for: `aws`, `k8or-provider-foo`. */
  requested: string;
  packageName: string;
  /** The module URL it was imported from (for loaders elsewhere, e.g. a webhook worker thread). */
  entryUrl: string;
  module: ContainerModule;
}

/** Where the operator itself is installed: providers installed beside it are found from here. */
const OWN_INSTALL = dirname(fileURLToPath(import.meta.url));

/**
 * Finds provider packages by name and imports them. A provider package's
 * default export is the inversify ContainerModule that binds its
 * ProviderPlugin (`providerModule(plugin)` from @k8or/core).
 */
export class ProviderLoader {
  readonly roots: string[];

  constructor(options: ProviderLoaderOptions = {}) {
    this.roots = [...(options.root ? [options.root] : []), OWN_INSTALL];
  }

  /** Every provider package installed where this loader looks. */
  installed(): string[] {
    return installedProviderPackages(this.roots);
  }

  /** Imports one provider package by provider name (`aws`) or package name; throws ProviderLoadError listing the installed ones when it is not there. */
  async load(requested: string): Promise<LoadedProviderPackage> {
    const candidates = packageCandidates(requested);
    for (const packageName of candidates) {
      const dir = findPackageDir(packageName, this.roots);
      if (!dir) continue;
      const entry = packageEntryUrl(dir);
      if (!existsSync(fileURLToPath(entry))) throw new ProviderLoadError(`provider package ${packageName} (${dir}) is installed but its entry ${fileURLToPath(entry)} is missing (not built? run npm run build)`);
      const exports = (await import(entry)) as { default?: unknown };
      if (!isContainerModule(exports.default)) {
        throw new ProviderLoadError(`provider package ${packageName} (${dir}) does not export a ContainerModule as its default export; build it with providerModule(plugin) from @k8or/core`);
      }
      return { requested, packageName, entryUrl: entry, module: exports.default };
    }
    const installed = this.installed();
    throw new ProviderLoadError(
      `provider "${requested}" is not installed (looked for ${candidates.join(' and ')} from ${this.roots.join(', ')}); installed providers: ${installed.length ? installed.join(', ') : 'none'}`,
    );
  }

  /**
   * Loads the named providers (every installed one when `names` is empty) into
   * a new container and returns it with the plugins by provider name. Two
   * packages serving one provider name is an error.
   */
  async loadAll(names: readonly string[]): Promise<{ container: Container; providers: Map<string, ProviderPlugin>; packages: LoadedProviderPackage[] }> {
    const wanted = names.length ? names : this.installed();
    const container = new Container();
    const packages: LoadedProviderPackage[] = [];
    for (const name of wanted) {
      const loaded = await this.load(name);
      const before = loadedProviders(container);
      await container.load(loaded.module);
      const after = container.isBound(PROVIDER_PLUGIN) ? container.getAll<ProviderPlugin>(PROVIDER_PLUGIN) : [];
      if (after.length === [...before.values()].length) throw new ProviderLoadError(`provider package ${loaded.packageName} bound no ProviderPlugin`);
      const seen = new Set<string>();
      for (const plugin of after) {
        if (seen.has(plugin.provider)) throw new ProviderLoadError(`two provider packages serve provider "${plugin.provider}" (the second is ${loaded.packageName})`);
        seen.add(plugin.provider);
      }
      packages.push(loaded);
    }
    return { container, providers: loadedProviders(container), packages };
  }
}

/** A ContainerModule from this or another copy of inversify (a provider may bring its own). */
function isContainerModule(value: unknown): value is ContainerModule {
  if (value instanceof ContainerModule) return true;
  return typeof value === 'object' && value !== null && typeof (value as { load?: unknown }).load === 'function' && typeof (value as { id?: unknown }).id === 'number';
}
