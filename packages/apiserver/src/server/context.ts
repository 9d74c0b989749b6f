/** Everything a request handler needs, built once per sandbox. */
import type { Logger } from 'pino';
import type { AdmissionChain } from '../admission/chain.js';
import type { GarbageCollector } from '../controllers/garbage-collector.js';
import type { SchemaCache } from '../crd/schema-cache.js';
import type { ResourceRegistry } from '../resources/registry.js';
import type { ListSnapshots } from '../store/list-snapshots.js';
import type { ObjectStore } from '../store/store.js';
import type { WatchHistory } from '../watch/history.js';
import type { WatchHub } from '../watch/hub.js';
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
  garbageCollector: GarbageCollector;
  /** States that paged lists continue from. */
  listSnapshots: ListSnapshots;
  /** Interval between BOOKMARK events on watches that allow them. */
  bookmarkIntervalMs: number;
  /** Host:port clients reach us at (for discovery's serverAddressByClientCIDRs). */
  serverAddress: string;
  /** Injected failures, for tests of clients (off by default). */
  faults: FaultInjector;
}
