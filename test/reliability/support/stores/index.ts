// Every store of a fault run, by cloud and kind.
import type { Azurite } from '@k8or/local-clouds';
import { dynamoDbTables, s3Buckets } from './aws.ts';
import { azureContainers, azureTables } from './azure.ts';
import { gcsBuckets } from './gcp.ts';
import type { CloudName, Kind, Store } from './store.ts';

export type { CloudName, Kind, Store } from './store.ts';

/** The clouds and kinds a fault run drives (Bigtable left out: docs/reliability.md says why). */
export const CLOUD_KINDS: ReadonlyArray<{ cloud: CloudName; kinds: readonly Kind[] }> = [
  { cloud: 'aws', kinds: ['Bucket', 'Table'] },
  { cloud: 'gcp', kinds: ['Bucket'] },
  { cloud: 'azure', kinds: ['Bucket', 'Table'] },
];

export interface Stores {
  of(cloud: CloudName, kind: Kind): Store;
  all(): Store[];
}

export function stores(backends: { s3: string; dynamodb: string; gcs: string; gcpProject: string; azurite: Azurite }): Stores {
  const list = [s3Buckets(backends.s3), dynamoDbTables(backends.dynamodb), gcsBuckets(backends.gcs, backends.gcpProject), azureContainers(backends.azurite), azureTables(backends.azurite)];
  return {
    of: (cloud, kind) => {
      const store = list.find((s) => s.cloud === cloud && s.kind === kind);
      if (!store) throw new Error(`no ${cloud} ${kind} in the fault runs`);
      return store;
    },
    all: () => list,
  };
}
