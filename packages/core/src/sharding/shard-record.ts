import { isDeepStrictEqual } from 'node:util';
import { Annotations, type ManagedKindName, type ProviderConfig } from '@k8or/api';
import { withoutUnreadMetadata } from '../informer/informer.js';
import { objectKey, splitObjectKey, type KeptKey, type ObjectWithMetadata } from '../informer/object-key.js';
import { annotation, stringField } from '../policy/read.js';
import type { NamespaceInfo } from '../reconcile/ports.js';
import { drainLabel, shardLabel } from './labels.js';
import type { ShardedObject } from './plan.js';
import type { ShardKeyObject } from './resource-key.js';

/**
 * Shares one copy of strings many records repeat (namespaces, shard and ProviderConfig names):
 * each watched object would otherwise bring its own. Cleared when it grows past `limit`, which
 * only ends the sharing of what it held.
 */
export class StringPool {
  readonly #strings = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  share<T extends string | undefined>(value: T): T {
    if (value === undefined) return value;
    const known = this.#strings.get(value);
    if (known !== undefined) return known as T;
    if (this.#strings.size >= this.#limit) this.#strings.clear();
    this.#strings.set(value, value);
    return value;
  }
}

/** What a `ShardRecord` is made from. */
export interface ShardRecordFields {
  kind: ManagedKindName;
  name: string;
  namespace: string;
  resourceVersion: string | undefined;
  shard: string | undefined;
  draining: boolean;
  givenName: string | undefined;
  uid: string | undefined;
  providerConfigName: string | undefined;
  /** The `objectKey` of the object when a record of it kept one already: this record keeps that same string. */
  cacheKey?: string;
}

/**
 * What the assigner keeps of one Bucket or Table, in one flat object: the leader keeps one of
 * these for every object of the cluster, not a share. Its identity, the resourceVersion its label
 * patches are conditional on, its shard and drain labels, and what its shard key is made from
 * (the external name when given: `spec.name`, else the external-name annotation; the uid only when
 * none is given, for a provider's default name; `spec.providerConfigRef`). The key itself depends
 * on the object's Namespace and ProviderConfig too, which change on their own: its ring position is
 * kept with the cache's context version it was computed at (`keyHashAt`).
 *
 * Kept small: the name is read from the cache key (`cacheKey`, the one string the cache's map
 * holds too), and a resourceVersion in the API server's decimal form is kept as a number.
 */
export class ShardRecord implements ShardedObject, KeptKey {
  readonly kind: ManagedKindName;
  readonly cacheKey: string;
  readonly namespace: string;
  readonly shard: string | undefined;
  readonly draining: boolean;
  readonly givenName: string | undefined;
  readonly uid: string | undefined;
  readonly providerConfigName: string | undefined;
  readonly #resourceVersion: number | string | undefined;
  #keyHash = 0;
  #keyContext = -1;

  constructor(fields: ShardRecordFields) {
    this.kind = fields.kind;
    this.namespace = fields.namespace;
    this.cacheKey = fields.cacheKey ?? objectKey({ metadata: { name: fields.name, namespace: fields.namespace } });
    this.#resourceVersion = compactVersion(fields.resourceVersion);
    this.shard = fields.shard;
    this.draining = fields.draining;
    this.givenName = fields.givenName;
    this.uid = fields.uid;
    this.providerConfigName = fields.providerConfigName;
  }

  get name(): string {
    return splitObjectKey(this.cacheKey).name;
  }

  get resourceVersion(): string | undefined {
    const version = this.#resourceVersion;
    return typeof version === 'number' ? String(version) : version;
  }

  /** The informer and its cache read name, namespace and resourceVersion under `metadata`: the record is its own, so it stays one object. */
  get metadata(): { readonly name: string; readonly namespace: string; readonly resourceVersion: string | undefined } {
    return this;
  }

  /** The ring position of the shard key last computed by `keyHashAt`. */
  get keyHash(): number {
    if (this.#keyContext < 0) throw new Error(`the shard key of ${this.kind} ${this.cacheKey} was not computed`);
    return this.#keyHash;
  }

  /** The ring position of the shard key at `contextVersion`: kept, or computed by `compute` when the context changed since. */
  keyHashAt(contextVersion: number, compute: () => number): number {
    if (this.#keyContext !== contextVersion) {
      this.#keyHash = compute();
      this.#keyContext = contextVersion;
    }
    return this.#keyHash;
  }

  /** The object as `shardKeySourceOf` reads it (made for that call, not kept). */
  keyObject(): ShardKeyObject {
    return {
      metadata: { name: this.name, namespace: this.namespace, ...(this.uid !== undefined ? { uid: this.uid } : {}) },
      spec: { ...(this.givenName !== undefined ? { name: this.givenName } : {}), ...(this.providerConfigName !== undefined ? { providerConfigRef: { name: this.providerConfigName } } : {}) },
    } as ShardKeyObject;
  }

  /** Both records say the same of everything a plan reads (a status write changes only the resourceVersion). */
  samePlanInputs(other: ShardRecord): boolean {
    return (
      this.kind === other.kind && this.cacheKey === other.cacheKey && this.shard === other.shard && this.draining === other.draining &&
      this.givenName === other.givenName && this.uid === other.uid && this.providerConfigName === other.providerConfigName
    );
  }
}

/** A resourceVersion as a number when that gives it back exactly (the API server's are decimal numbers), else as it is. */
function compactVersion(version: string | undefined): number | string | undefined {
  if (version === undefined) return undefined;
  const number = Number(version);
  return Number.isSafeInteger(number) && String(number) === version ? number : version;
}

/**
 * Makes the record of a Bucket or Table as listed or watched (an informer transform), its repeated
 * strings shared through `pool`; `keptKey` gives the cache key the record of the object already in
 * the cache keeps, so an update does not bring a second copy of it.
 */
export function shardRecordOf(kind: ManagedKindName, object: unknown, pool: StringPool = new StringPool(), keptKey?: (key: string) => string | undefined): ShardRecord {
  const specName = stringField(object, 'spec', 'name');
  // As `externalNameFor` reads it: `spec.name` when present (even empty), else the annotation.
  const givenName = specName !== undefined ? specName : annotation(object, Annotations.externalName);
  const name = stringField(object, 'metadata', 'name') ?? '';
  const namespace = pool.share(stringField(object, 'metadata', 'namespace') ?? '');
  const key = objectKey({ metadata: { name, namespace } });
  return new ShardRecord({
    kind,
    name,
    namespace,
    cacheKey: keptKey?.(key) ?? key,
    resourceVersion: stringField(object, 'metadata', 'resourceVersion'),
    shard: pool.share(stringField(object, 'metadata', 'labels', shardLabel(kind))),
    draining: stringField(object, 'metadata', 'labels', drainLabel(kind)) !== undefined,
    givenName,
    uid: givenName ? undefined : stringField(object, 'metadata', 'uid'),
    providerConfigName: pool.share(stringField(object, 'spec', 'providerConfigRef', 'name')),
  });
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
