// Every store of a fault run, by cloud and kind.
import type { Azurite } from '@k8or/local-clouds';
import { dynamoDbTables, s3Buckets } from './aws.ts';
import { azureContainers, azureTables } from './azure.ts';
import { bigtableTables } from './bigtable.ts';
import { gcsBuckets } from './gcp.ts';
import type { CloudName, Kind, Store } from './store.ts';

export type { CloudName, Kind, Store } from './store.ts';

export interface Stores {
  of(cloud: CloudName, kind: Kind): Store;
  /** Every store of the run, in the order the clouds' resources are made. */
  all(): Store[];
  close(): Promise<void>;
}

export interface StoreBackends {
  s3: string;
  dynamodb: string;
  gcs: string;
  gcpProject: string;
  /** host:port of the Bigtable emulator, when it is installed (its tables join the runs then). */
  bigtable: { host: string; instance: string } | undefined;
  azurite: Azurite;
}

export function stores(backends: StoreBackends): Stores {
  const bigtable = backends.bigtable ? bigtableTables(backends.bigtable.host, backends.gcpProject, backends.bigtable.instance) : undefined;
  const list: Store[] = [
    s3Buckets(backends.s3),
    dynamoDbTables(backends.dynamodb),
    gcsBuckets(backends.gcs, backends.gcpProject),
    ...(bigtable ? [bigtable] : []),
    azureContainers(backends.azurite),
    azureTables(backends.azurite),
  ];
  return {
    of: (cloud, kind) => {
      const store = list.find((s) => s.cloud === cloud && s.kind === kind);
      if (!store) throw new Error(`no ${cloud} ${kind} in the fault runs`);
      return store;
    },
    all: () => list,
    close: async () => await bigtable?.close(),
  };
}
