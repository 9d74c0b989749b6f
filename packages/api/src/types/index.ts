export * from './meta.js';
export * from './common.js';
export * from './bucket.js';
export * from './table.js';
export * from './provider-config.js';

import type { Bucket } from './bucket.js';
import type { Table } from './table.js';

/** Any resource that stands for a cloud resource. */
export type ManagedResource = Bucket | Table;

/** The managed resource type of one kind: `ManagedResourceOf<'Bucket'>` is `Bucket`. */
export type ManagedResourceOf<K extends ManagedResource['kind']> = Extract<ManagedResource, { kind: K }>;
