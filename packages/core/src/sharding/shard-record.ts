import { isDeepStrictEqual } from 'node:util';
import { Annotations, type ManagedKindName, type ProviderConfig } from '@k8or/api';
import { withoutUnreadMetadata } from '../informer/informer.js';
import type { ObjectWithMetadata } from '../informer/object-key.js';
import { annotation, stringField } from '../policy/read.js';
import type { NamespaceInfo } from '../reconcile/ports.js';
import { drainLabel, shardLabel } from './labels.js';

/**
 * What the assigner keeps of one Bucket or Table: its identity, the resourceVersion its label
 * patches are conditional on, its shard and drain labels, and the fields its shard key is made
 * from (`shardKeySourceOf`: the external name's `spec.name` or annotation, the uid a default
 * name may carry, `spec.providerConfigRef`). The key itself is computed per pass, because it
 * also depends on the object's Namespace and ProviderConfig, which change on their own.
 */
export interface ShardRecord {
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
    /** Only the shard and drain labels of the record's kind. */
    labels: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { name?: string; providerConfigRef?: { name: string } };
}

/** Makes the compact record of a Bucket or Table as listed or watched (an informer transform). */
export function shardRecordOf(kind: ManagedKindName, object: unknown): ShardRecord {
  const labels: Record<string, string> = {};
  for (const key of [shardLabel(kind), drainLabel(kind)]) {
    const value = stringField(object, 'metadata', 'labels', key);
    if (value !== undefined) labels[key] = value;
  }
  const uid = stringField(object, 'metadata', 'uid');
  const resourceVersion = stringField(object, 'metadata', 'resourceVersion');
  const externalName = annotation(object, Annotations.externalName);
  const specName = stringField(object, 'spec', 'name');
  const providerConfig = stringField(object, 'spec', 'providerConfigRef', 'name');
  const record: ShardRecord = {
    metadata: {
      name: stringField(object, 'metadata', 'name') ?? '',
      namespace: stringField(object, 'metadata', 'namespace') ?? '',
      ...(uid !== undefined ? { uid } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      labels,
      ...(externalName !== undefined ? { annotations: { [Annotations.externalName]: externalName } } : {}),
    },
  };
  if (specName !== undefined || providerConfig !== undefined) {
    record.spec = { ...(specName !== undefined ? { name: specName } : {}), ...(providerConfig !== undefined ? { providerConfigRef: { name: providerConfig } } : {}) };
  }
  return record;
}

/** What the assigner keeps of a Namespace: its name and the ProviderConfig annotation. */
export function namespaceRecordOf(object: unknown): NamespaceInfo & ObjectWithMetadata {
  const providerConfig = annotation(object, Annotations.providerConfig);
  const resourceVersion = stringField(object, 'metadata', 'resourceVersion');
  return {
    metadata: {
      name: stringField(object, 'metadata', 'name') ?? '',
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      ...(providerConfig !== undefined ? { annotations: { [Annotations.providerConfig]: providerConfig } } : {}),
    },
  };
}

/** What the assigner keeps of a ProviderConfig: all but its status and the metadata nothing reads. */
export function providerConfigRecordOf(object: ProviderConfig): ProviderConfig {
  const { status: _status, ...kept } = withoutUnreadMetadata(object);
  return kept;
}

/** Two records of one object that differ in nothing the assigner plans from (a status write, say). */
export function sameButVersion(a: ObjectWithMetadata, b: ObjectWithMetadata): boolean {
  const unversioned = (o: ObjectWithMetadata) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return isDeepStrictEqual(unversioned(a), unversioned(b));
}
