import { createRequire } from 'node:module';
import type * as NodeHttp from 'node:http';

/**
 * `node:http`, loaded as CommonJS. An ESM import of it builds a namespace of all its exports and
 * so reads its lazy `WebSocket`, `CloseEvent` and `MessageEvent`, which load node's own copy of
 * undici: 3 to 4 MiB resident in every process, for nothing here uses them
 * (docs/benchmarks.md, "Operator process at scale"). Import types from `node:http` with
 * `import type`, and its values from here.
 */
export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof NodeHttp;
