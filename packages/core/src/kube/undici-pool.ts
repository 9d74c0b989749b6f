import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';

/**
 * undici's connection pool, loaded on its own. The package's index also loads
 * fetch, WebSocket, its caches and its mocks: 12 to 17 MiB more RSS in a
 * process that imports core (measured beside a KubeRest making requests),
 * where the pool alone adds about 4 MiB over node:https. The operator keeps
 * client-node out of its process for the same reason (kube/kubeconfig.ts).
 * The path is undici's own file for the class its index exports as `Pool`;
 * the dependency is pinned to patch releases so that it stays there.
 */
export const Pool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
export type Pool = UndiciPool;
