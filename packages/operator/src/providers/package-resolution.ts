import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * `aws` -> `@k8or/provider-aws` (then `k8or-provider-aws`); a name with a
 * scope or the `k8or-provider-` prefix is a package name already.
 */
export function packageCandidates(name: string): string[] {
  if (name.startsWith('@') || name.startsWith('k8or-provider-')) return [name];
  return [`@k8or/provider-${name}`, `k8or-provider-${name}`];
}

/** Every `node_modules` folder Node would search from `dir`: its own, then each parent's. */
export function nodeModulesChain(dir: string): string[] {
  const chain: string[] = [];
  let current = resolve(dir);
  for (;;) {
    if (basename(current) !== 'node_modules') chain.push(join(current, 'node_modules'));
    const parent = dirname(current);
    if (parent === current) return chain;
    current = parent;
  }
}

/** The folder of `packageName` as Node finds it from one of `roots` (first wins), or undefined. */
export function findPackageDir(packageName: string, roots: readonly string[]): string | undefined {
  for (const root of roots) {
    for (const modules of nodeModulesChain(root)) {
      const dir = join(modules, packageName);
      if (existsSync(join(dir, 'package.json'))) return dir;
    }
  }
  return undefined;
}

interface PackageJson {
  name?: string;
  main?: string;
  exports?: unknown;
}

/**
 * The entry the operator imports from a provider package folder: its `./module` export when it has
 * one (the ContainerModule alone, without the root's SDK-bound re-exports, so a cloud's SDKs load
 * with its first resource), else its `import` entry as Node's ESM resolver reads it (`exports` ".",
 * then `main`).
 */
export function packageEntryUrl(dir: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
  const exports = manifest.exports;
  const moduleEntry = exports && typeof exports === 'object' && !Array.isArray(exports) && './module' in exports ? exportTarget((exports as Record<string, unknown>)['./module']) : undefined;
  const fromExports = moduleEntry ?? exportTarget(exports);
  return pathToFileURL(join(dir, fromExports ?? manifest.main ?? 'index.js')).href;
}

const CONDITIONS = ['node', 'import', 'default'];

function exportTarget(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (Array.isArray(exports)) {
    for (const item of exports) {
      const target = exportTarget(item);
      if (target) return target;
    }
    return undefined;
  }
  if (!exports || typeof exports !== 'object') return undefined;
  const map = exports as Record<string, unknown>;
  if ('.' in map) return exportTarget(map['.']);
  if (Object.keys(map).some((key) => key.startsWith('.'))) return undefined;
  for (const condition of CONDITIONS) {
    if (condition in map) {
      const target = exportTarget(map[condition]);
      if (target) return target;
    }
  }
  return undefined;
}

const PROVIDER_PACKAGE = /^(@k8or\/provider-.+|k8or-provider-.+|@[^/]+\/k8or-provider-.+)$/;

/**
 * Provider packages installed where `roots` would find them: `@k8or/provider-*`, `k8or-provider-*`,
 * `@scope/k8or-provider-*`. A package marked `private` (never published: a monorepo's own tooling,
 * such as `@k8or/provider-testkit`) is not discovered; naming it still loads it.
 */
export function installedProviderPackages(roots: readonly string[]): string[] {
  const found = new Set<string>();
  for (const root of roots) {
    for (const modules of nodeModulesChain(root)) {
      for (const name of safeList(modules)) {
        if (name.startsWith('@')) {
          for (const scoped of safeList(join(modules, name))) {
            const full = `${name}/${scoped}`;
            if (PROVIDER_PACKAGE.test(full) && isPublishedPackage(join(modules, full))) found.add(full);
          }
        } else if (PROVIDER_PACKAGE.test(name) && isPublishedPackage(join(modules, name))) {
          found.add(name);
        }
      }
    }
  }
  return [...found].sort();
}

/** A package is there and not marked private. */
function isPublishedPackage(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { private?: unknown }).private !== true;
  } catch {
    return false;
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
