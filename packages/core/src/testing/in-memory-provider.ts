import { isDeepStrictEqual } from 'node:util';
import { OwnerTags, type Bucket, type ProviderName, type Table } from '@k8or/api';
import type { CallOptions, CloudServiceRateLimit, ConnectionContext, ExternalClient, FieldDiff, Observation, Presence, ProtectionSetting, ProviderPlugin, ResourceIdentity } from '../provider/contract.js';
import { DeletionBlockedError, NotOwnedError } from '../provider/errors.js';
import type { CloudBucket, CloudTable, InMemoryCloud } from './in-memory-cloud.js';

export interface InMemoryProviderOptions {
  /** The ProviderConfig.spec.provider value it serves. Default `aws`. */
  provider?: ProviderName;
  /** Location used when neither the resource nor the ProviderConfig names one. */
  defaultLocation?: string;
  /** Recorded on every call (CloudCall.caller), to tell two engines over one cloud apart. */
  caller?: string;
  /** Whether the clients have the optional `probe` (one `probe` call on the delete path); without it the engine observes. Default true. */
  probe?: boolean;
  /**
   * `none`: the clients report neither owner tags nor an identity, as for a kind whose cloud has
   * neither (an Azure table, a Bigtable table); a create of a name that exists is then always
   * NotOwnedError ("already exists" cannot be proven ours). Default `all`.
   */
  reports?: 'all' | 'none';
  /**
   * With `reports: 'none'`: the clients' `identityUnavailable` fact, as for credentials that can
   * give a resource no identity (an Azure table through an account SAS). Default: none said.
   */
  identityUnavailable?: string;
  /**
   * Declare one rate-limited service, `in-memory`, with this default pace: every call then takes a
   * token of its ProviderConfig's bucket (`spec.rateLimits['in-memory']` overrides it). Default: no
   * rate limits.
   */
  rateLimit?: Omit<CloudServiceRateLimit, 'description'>;
}

/** The rate-limited service of an in-memory plugin with `rateLimit`. */
export const IN_MEMORY_SERVICE = 'in-memory';

/** The connection contexts of plugins that declare `rateLimit`: their calls name IN_MEMORY_SERVICE. */
const rateLimited = new WeakSet<ConnectionContext>();

/** Runs one cloud call through the engine's recorder, under the rate-limited service where declared. */
function record(context: ConnectionContext, call: CallOptions) {
  return <T>(operation: string, run: () => Promise<T>): Promise<T> =>
    context.recordCall(operation, run, rateLimited.has(context) ? { service: IN_MEMORY_SERVICE, signal: call.signal } : undefined);
}

const sameTags = (found: Record<string, string>, ours: Readonly<Record<string, string>>): boolean =>
  Object.entries(ours).every(([key, value]) => found[key] === value);

function diffField(diff: FieldDiff[], field: string, desired: unknown, actual: unknown): void {
  if (!isDeepStrictEqual(desired, actual)) diff.push({ field, desired, actual });
}

function locationFor(resource: { spec: { location?: string } }, context: ConnectionContext, fallback: string): string {
  return resource.spec.location ?? context.providerConfig.spec.region ?? fallback;
}

/** The cloud's own identity of a resource: its creation time and the id the cloud gave it. */
function identityOf(resource: { createdTime: string; uid?: string }): ResourceIdentity {
  return { createdTime: resource.createdTime, ...(resource.uid ? { uid: resource.uid } : {}) };
}

function bucketProtection(bucket: CloudBucket): ProtectionSetting[] {
  return [
    { field: 'spec.versioning', enabled: bucket.versioning },
    { field: 'retentionPolicy', enabled: bucket.retentionLocked ?? false, blocksDeletion: true },
  ];
}

function tableProtection(table: CloudTable): ProtectionSetting[] {
  return [{ field: 'spec.deletionProtection', enabled: table.deletionProtection ?? false, blocksDeletion: true }];
}

/** Removes k8or's owner tags (Retain releases the resource for another owner to adopt). */
function withoutOwnerTags(tags: Record<string, string>): Record<string, string> {
  const ownerKeys = new Set<string>(Object.values(OwnerTags));
  return Object.fromEntries(Object.entries(tags).filter(([key]) => !ownerKeys.has(key)));
}

/** The optional probe: existence, owner tags, identity and protection, one recorded call. */
async function probeIn<T extends CloudBucket | CloudTable>(
  cloud: InMemoryCloud,
  kind: 'Bucket' | 'Table',
  store: ReadonlyMap<string, T>,
  protection: (found: T) => ProtectionSetting[],
  context: ConnectionContext,
  caller: string | undefined,
  call: CallOptions,
): Promise<Presence> {
  return await record(context, call)('probe', async () => {
    await cloud.enter(kind, 'probe', context.externalName, { signal: call.signal, credentials: context.credentials, caller });
    const found = store.get(context.externalName);
    return found ? { exists: true, ownerTags: { ...found.tags }, identity: identityOf(found), protection: protection(found) } : { exists: false };
  });
}

/** The optional release: our owner tags removed, nothing else changed. */
async function releaseIn(
  cloud: InMemoryCloud,
  kind: 'Bucket' | 'Table',
  store: ReadonlyMap<string, CloudBucket | CloudTable>,
  context: ConnectionContext,
  caller: string | undefined,
  call: CallOptions,
): Promise<void> {
  await record(context, call)('release', async () => {
    await cloud.enter(kind, 'release', context.externalName, { signal: call.signal, credentials: context.credentials, caller });
    const found = store.get(context.externalName);
    if (found) found.tags = withoutOwnerTags(found.tags);
  });
}

class BucketClient implements ExternalClient<Bucket> {
  readonly #cloud: InMemoryCloud;
  readonly #context: ConnectionContext;
  readonly #defaultLocation: string;
  readonly #caller: string | undefined;
  readonly probe?: (resource: Bucket, call: CallOptions) => Promise<Presence>;

  constructor(cloud: InMemoryCloud, context: ConnectionContext, defaultLocation: string, caller: string | undefined, withProbe: boolean) {
    this.#cloud = cloud;
    this.#context = context;
    this.#defaultLocation = defaultLocation;
    this.#caller = caller;
    if (withProbe) this.probe = async (_resource, call) => await probeIn(cloud, 'Bucket', cloud.buckets, bucketProtection, context, caller, call);
  }

  get #name(): string {
    return this.#context.externalName;
  }

  async observe(resource: Bucket, call: CallOptions): Promise<Observation> {
    return await record(this.#context, call)('observe', async () => {
      await this.#cloud.enter('Bucket', 'observe', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      const bucket = this.#cloud.buckets.get(this.#name);
      if (!bucket) return { exists: false, upToDate: false, ready: false };
      const diff: FieldDiff[] = [];
      diffField(diff, 'spec.versioning', resource.spec.versioning ?? false, bucket.versioning);
      diffField(diff, 'spec.labels', resource.spec.labels ?? {}, bucket.labels);
      const immutableDiff: FieldDiff[] = [];
      if (resource.spec.location) diffField(immutableDiff, 'spec.location', resource.spec.location, bucket.location);
      return {
        exists: true,
        upToDate: diff.length === 0,
        ready: true,
        diff,
        immutableDiff,
        ownerTags: { ...bucket.tags },
        identity: identityOf(bucket),
        protection: bucketProtection(bucket),
        atProvider: {
          id: `arn:mem:s3:::${bucket.name}`,
          url: `https://${bucket.name}.storage.mem.test`,
          location: bucket.location,
          createdTime: bucket.createdTime,
        },
      };
    });
  }

  async create(resource: Bucket, call: CallOptions): Promise<void> {
    await record(this.#context, call)('create', async () => {
      const entered = await this.#cloud.enter('Bucket', 'create', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      await this.#cloud.crashPoint('before-create', entered);
      const existing = this.#cloud.buckets.get(this.#name);
      if (existing) {
        if (sameTags(existing.tags, this.#context.ownerTags)) return;
        throw new NotOwnedError(`bucket name "${this.#name}" is already taken`, { code: 'BucketAlreadyExists' });
      }
      this.#cloud.buckets.set(this.#name, {
        name: this.#name,
        location: locationFor(resource, this.#context, this.#defaultLocation),
        versioning: resource.spec.versioning ?? false,
        tags: { ...this.#context.ownerTags },
        labels: { ...resource.spec.labels },
        objects: 0,
        createdTime: this.#cloud.timestamp(),
        uid: this.#cloud.newId(),
      });
      await this.#cloud.crashPoint('after-create', entered);
    });
  }

  async update(resource: Bucket, _observation: Observation, call: CallOptions): Promise<void> {
    await record(this.#context, call)('update', async () => {
      await this.#cloud.enter('Bucket', 'update', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      const bucket = this.#cloud.buckets.get(this.#name);
      if (!bucket) throw new Error(`bucket "${this.#name}" does not exist`);
      bucket.versioning = resource.spec.versioning ?? false;
      bucket.labels = { ...resource.spec.labels };
      bucket.tags = { ...bucket.tags, ...this.#context.ownerTags };
    });
  }

  async delete(resource: Bucket, call: CallOptions): Promise<void> {
    await record(this.#context, call)('delete', async () => {
      await this.#cloud.enter('Bucket', 'delete', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      const bucket = this.#cloud.buckets.get(this.#name);
      if (!bucket) return;
      if (bucket.retentionLocked) {
        throw new DeletionBlockedError(`bucket "${this.#name}" has a locked retention policy; it cannot be deleted while the lock holds`, { code: 'RetentionPolicyLocked' });
      }
      if (bucket.objects > 0 && !resource.spec.forceDelete) {
        throw new DeletionBlockedError(`bucket "${this.#name}" holds ${bucket.objects} objects; empty it, or set spec.forceDelete: true to delete its contents too`, { code: 'BucketNotEmpty' });
      }
      this.#cloud.buckets.delete(this.#name);
    });
  }

  async release(_resource: Bucket, call: CallOptions): Promise<void> {
    await releaseIn(this.#cloud, 'Bucket', this.#cloud.buckets, this.#context, this.#caller, call);
  }
}

class TableClient implements ExternalClient<Table> {
  readonly #cloud: InMemoryCloud;
  readonly #context: ConnectionContext;
  readonly #defaultLocation: string;
  readonly #caller: string | undefined;
  readonly probe?: (resource: Table, call: CallOptions) => Promise<Presence>;

  constructor(cloud: InMemoryCloud, context: ConnectionContext, defaultLocation: string, caller: string | undefined, withProbe: boolean) {
    this.#cloud = cloud;
    this.#context = context;
    this.#defaultLocation = defaultLocation;
    this.#caller = caller;
    if (withProbe) this.probe = async (_resource, call) => await probeIn(cloud, 'Table', cloud.tables, tableProtection, context, caller, call);
  }

  get #name(): string {
    return this.#context.externalName;
  }

  async observe(resource: Table, call: CallOptions): Promise<Observation> {
    return await record(this.#context, call)('observe', async () => {
      await this.#cloud.enter('Table', 'observe', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      const table = this.#cloud.tables.get(this.#name);
      if (!table) return { exists: false, upToDate: false, ready: false };
      if (table.state === 'CREATING') {
        table.observesLeft -= 1;
        if (table.observesLeft < 0) table.state = 'ACTIVE';
      }
      const diff: FieldDiff[] = [];
      diffField(diff, 'spec.billing', resource.spec.billing ?? { mode: 'onDemand' }, table.billing);
      diffField(diff, 'spec.pointInTimeRecovery', resource.spec.pointInTimeRecovery ?? false, table.pointInTimeRecovery);
      diffField(diff, 'spec.ttlAttribute', resource.spec.ttlAttribute, table.ttlAttribute);
      diffField(diff, 'spec.labels', resource.spec.labels ?? {}, table.labels);
      diffField(diff, 'spec.deletionProtection', resource.spec.deletionProtection ?? false, table.deletionProtection ?? false);
      const immutableDiff: FieldDiff[] = [];
      diffField(immutableDiff, 'spec.partitionKey', resource.spec.partitionKey, table.partitionKey);
      diffField(immutableDiff, 'spec.sortKey', resource.spec.sortKey, table.sortKey);
      return {
        exists: true,
        upToDate: diff.length === 0,
        ready: table.state === 'ACTIVE',
        diff,
        immutableDiff,
        // As DynamoDB: a table lists its tags only once ACTIVE.
        ...(table.state === 'ACTIVE' ? { ownerTags: { ...table.tags } } : {}),
        identity: identityOf(table),
        protection: tableProtection(table),
        atProvider: {
          id: `arn:mem:dynamodb:${table.location}:table/${table.name}`,
          location: table.location,
          createdTime: table.createdTime,
          state: table.state,
          itemCount: table.itemCount,
        },
      };
    });
  }

  async create(resource: Table, call: CallOptions): Promise<void> {
    await record(this.#context, call)('create', async () => {
      const entered = await this.#cloud.enter('Table', 'create', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      await this.#cloud.crashPoint('before-create', entered);
      const existing = this.#cloud.tables.get(this.#name);
      if (existing) {
        if (sameTags(existing.tags, this.#context.ownerTags)) return;
        throw new NotOwnedError(`table name "${this.#name}" is already taken`, { code: 'ResourceInUseException' });
      }
      const spec = resource.spec;
      this.#cloud.tables.set(this.#name, {
        name: this.#name,
        location: this.#context.providerConfig.spec.region ?? this.#defaultLocation,
        partitionKey: spec.partitionKey,
        ...(spec.sortKey ? { sortKey: spec.sortKey } : {}),
        billing: spec.billing ?? { mode: 'onDemand' },
        ...(spec.ttlAttribute ? { ttlAttribute: spec.ttlAttribute } : {}),
        pointInTimeRecovery: spec.pointInTimeRecovery ?? false,
        tags: { ...this.#context.ownerTags },
        labels: { ...spec.labels },
        itemCount: 0,
        createdTime: this.#cloud.timestamp(),
        uid: this.#cloud.newId(),
        deletionProtection: spec.deletionProtection ?? false,
        state: this.#cloud.observesUntilActive > 0 ? 'CREATING' : 'ACTIVE',
        observesLeft: this.#cloud.observesUntilActive,
      });
      await this.#cloud.crashPoint('after-create', entered);
    });
  }

  async update(resource: Table, _observation: Observation, call: CallOptions): Promise<void> {
    await record(this.#context, call)('update', async () => {
      await this.#cloud.enter('Table', 'update', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      const table = this.#cloud.tables.get(this.#name);
      if (!table) throw new Error(`table "${this.#name}" does not exist`);
      table.billing = resource.spec.billing ?? { mode: 'onDemand' };
      table.pointInTimeRecovery = resource.spec.pointInTimeRecovery ?? false;
      if (resource.spec.ttlAttribute) table.ttlAttribute = resource.spec.ttlAttribute;
      else delete table.ttlAttribute;
      table.labels = { ...resource.spec.labels };
      table.deletionProtection = resource.spec.deletionProtection ?? false;
      table.tags = { ...table.tags, ...this.#context.ownerTags };
    });
  }

  async delete(resource: Table, call: CallOptions): Promise<void> {
    await record(this.#context, call)('delete', async () => {
      await this.#cloud.enter('Table', 'delete', this.#name, { signal: call.signal, credentials: this.#context.credentials, caller: this.#caller });
      const table = this.#cloud.tables.get(this.#name);
      if (table?.deletionProtection || resource.spec.deletionProtection) {
        throw new DeletionBlockedError(`table "${this.#name}" has deletion protection on; set spec.deletionProtection: false to delete it`, { code: 'DeletionProtection' });
      }
      this.#cloud.tables.delete(this.#name);
    });
  }

  async release(_resource: Table, call: CallOptions): Promise<void> {
    await releaseIn(this.#cloud, 'Table', this.#cloud.tables, this.#context, this.#caller, call);
  }
}

/**
 * A provider plugin over an InMemoryCloud, implementing the contract for
 * Bucket and Table: for engine tests, examples and benchmarks.
 */
export function inMemoryProviderPlugin(cloud: InMemoryCloud, options: InMemoryProviderOptions = {}): ProviderPlugin {
  const defaultLocation = options.defaultLocation ?? 'mem-central-1';
  const factless = options.reports === 'none';
  const connector = <R extends Bucket | Table>(make: (context: ConnectionContext) => ExternalClient<R>, store: ReadonlyMap<string, unknown>) => ({
    connect: async (_resource: unknown, context: ConnectionContext): Promise<ExternalClient<R>> => {
      cloud.lastCredentials = context.credentials;
      if (options.rateLimit) rateLimited.add(context);
      const client = make(context);
      return factless ? withoutOwnershipFacts(client, () => store.has(context.externalName), context.externalName, options.identityUnavailable) : client;
    },
  });
  return {
    provider: options.provider ?? 'aws',
    packageName: '@k8or/core/testing',
    connectors: {
      Bucket: connector<Bucket>((context) => new BucketClient(cloud, context, defaultLocation, options.caller, options.probe ?? true), cloud.buckets),
      Table: connector<Table>((context) => new TableClient(cloud, context, defaultLocation, options.caller, options.probe ?? true), cloud.tables),
    },
    // One recorded call per observe, under no rate-limited service.
    observeCalls: { Bucket: { '': 1 }, Table: { '': 1 } },
    validation: { validate: () => ({ violations: [], warnings: [] }) },
    ...(options.rateLimit ? { rateLimits: { [IN_MEMORY_SERVICE]: { ...options.rateLimit, description: 'every call of the in-memory cloud' } } } : {}),
    // Every client of this plugin reaches the one InMemoryCloud; the target still follows the
    // ProviderConfig, as a real cloud's does, so retargeting is seen.
    targetOf: (_kind, providerConfig) => ({ region: providerConfig.spec.region ?? defaultLocation, endpoint: providerConfig.spec.endpoint ?? '' }),
  };
}

/** A client that reports no owner tags and no identity (a cloud without either for the kind). */
function withoutOwnershipFacts<R extends Bucket | Table>(client: ExternalClient<R>, exists: () => boolean, name: string, identityUnavailable: string | undefined): ExternalClient<R> {
  const strip = <T extends Presence>(found: T): T => {
    const { ownerTags: _tags, identity: _identity, ...rest } = found;
    return rest as T;
  };
  const probe = client.probe?.bind(client);
  return {
    observe: async (resource, call) => strip(await client.observe(resource, call)),
    ...(probe ? { probe: async (resource: R, call: CallOptions) => strip(await probe(resource, call)) } : {}),
    create: async (resource, call) => {
      if (exists()) throw new NotOwnedError(`"${name}" already exists; this cloud cannot tell whose it is`, { code: 'AlreadyExists' });
      return await client.create(resource, call);
    },
    update: (resource, observation, call) => client.update(resource, observation, call),
    delete: (resource, call) => client.delete(resource, call),
    ...(client.release ? { release: client.release.bind(client) } : {}),
    ...(identityUnavailable !== undefined ? { identityUnavailable } : {}),
  };
}
