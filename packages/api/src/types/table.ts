import type { ObjectMeta } from './meta.js';
import type { ManagedSpec, ManagedStatus } from './common.js';

export type KeyType = 'string' | 'number' | 'binary';
export const KEY_TYPES: readonly KeyType[] = ['string', 'number', 'binary'];

export interface KeyAttribute {
  name: string;
  type: KeyType;
}

export type BillingMode = 'onDemand' | 'provisioned';

export interface TableBilling {
  mode: BillingMode;
  readCapacity?: number;
  writeCapacity?: number;
}

export interface TableSpec extends ManagedSpec {
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  billing?: TableBilling;
  ttlAttribute?: string;
  pointInTimeRecovery?: boolean;
  deletionProtection?: boolean;
}

export interface Table {
  apiVersion: 'k8or.io/v1alpha1';
  kind: 'Table';
  metadata: ObjectMeta;
  spec: TableSpec;
  status?: ManagedStatus;
}
