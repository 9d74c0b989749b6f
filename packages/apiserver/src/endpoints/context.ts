/** Everything a request handler needs, built once per sandbox. */
import type { Logger } from 'pino';
import type { AdmissionChain } from '../admission/chain.js';
import type { SchemaCache } from '../registry/schema-cache.js';
import type { ResourceRegistry } from '../registry/registry.js';
import type { ListSnapshots } from '../storage/list-snapshots.js';
import type { ObjectStore } from '../storage/store.js';
import type { WatchHistory } from '../storage/watch/history.js';
import type { WatchHub } from '../storage/watch/hub.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { RbacAuthorizer } from '../auth/rbac.js';
import type { FaultInjector } from './faults.js';

export interface ServerContext {
  registry: ResourceRegistry;
  store: ObjectStore;
  history: WatchHistory;
  hub: WatchHub;
  schemas: SchemaCache;
  admission: AdmissionChain;
  logger: Logger;
  /** Who a bearer token stands for. */
  authenticator: Authenticator;
  /** RBAC over the stored roles and bindings, with each user's record of use. */
  authorizer: RbacAuthorizer;
  /** The garbage collector, for `propagationPolicy: Orphan`: drops the owner's references from its dependents. */
  garbageCollector: { orphanDependents(ownerUid: string, namespace: string): void };
  /** States that paged lists continue from. */
  listSnapshots: ListSnapshots;
  /** Interval between BOOKMARK events on watches that allow them. */
  bookmarkIntervalMs: number;
  /** Host:port clients reach us at (for discovery's serverAddressByClientCIDRs). */
  serverAddress: string;
  /** Injected failures, for tests of clients (off by default). */
  faults: FaultInjector;
}
