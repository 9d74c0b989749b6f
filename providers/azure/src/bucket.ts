/**
 * Bucket -> Azure Blob container: the mapping from the portable spec, observe/diff, and create/update/delete.
 */
import type { BlobServiceClient, ContainerClient, ContainerGetPropertiesResponse, PublicAccessType } from '@azure/storage-blob';
import type { Bucket, PublicAccess } from '@k8or/api';
import {
  DeletionBlockedError,
  NotOwnedError,
  type CallOptions,
  type ConnectionContext,
  type Connector,
  type ExternalClient,
  type FieldDiff,
  type InventoryContext,
  type InventoryItem,
  type Observation,
  type Presence,
  type ProtectionSetting,
} from '@k8or/core';
import { blobServiceClient } from './clients.js';
import { clientSettings } from './config.js';
import { callAzure, hasCode } from './errors.js';
import { AzureServices } from './rate-limits.js';
import { OWNER_METADATA_PREFIX, desiredMetadata, diffMetadata, ownerTagsIn } from './metadata.js';
import { everyPage, type AzureConnectorOptions } from './paging.js';
import { publicUrl } from './public-url.js';
import { unappliedBucketSettings } from './unapplied.js';

// --- mapping: portable spec -> container ---------------------------------------------------------

/** A container's public access level: `none` (private), `blob` (anonymous reads of blobs) or `container` (and listing). */
export type AccessLevel = 'none' | PublicAccessType;

/** Blocked -> private; Allowed -> anonymous read of blobs by URL (listing stays private). */
export function accessLevelFor(publicAccess: PublicAccess | undefined): AccessLevel {
  return publicAccess === 'Allowed' ? 'blob' : 'none';
}

/**
 * An access level as the portable setting: `none` is Blocked; `blob` and `container` are Allowed
 * (`container` also lets anyone list the blobs, which the portable spec cannot say: the nearest
 * value, and k8or's update sets such a container to `blob`).
 */
export const portablePublicAccess = (level: AccessLevel): PublicAccess => (level === 'none' ? 'Blocked' : 'Allowed');

/** The SDK's `access` option for an access level (none is the absence of the header). */
const sdkAccess = (level: AccessLevel): PublicAccessType | undefined => (level === 'none' ? undefined : level);

// --- observe: container -> comparable settings ----------------------------------------------------

/** The managed settings of one container, as Azure reports them. */
export interface ObservedContainer {
  accessLevel: AccessLevel;
  metadata: Record<string, string>;
  etag: string | undefined;
  lastModified: Date | undefined;
  legalHold: boolean;
  immutabilityPolicy: boolean;
}

export function observedContainer(properties: ContainerGetPropertiesResponse): ObservedContainer {
  return {
    accessLevel: properties.blobPublicAccess ?? 'none',
    metadata: properties.metadata ?? {},
    etag: properties.etag,
    lastModified: properties.lastModified,
    legalHold: properties.hasLegalHold === true,
    immutabilityPolicy: properties.hasImmutabilityPolicy === true,
  };
}

/**
 * The container's protections as found: private access (public access blocked), and a legal hold
 * or an immutability policy, either of which keeps blobs, and so the container, from deletion.
 * A container has no identity to report: its etag and last-modified time change with every
 * metadata or access write, and Azure gives it no creation time.
 */
export function containerProtection(observed: Pick<ObservedContainer, 'accessLevel' | 'legalHold' | 'immutabilityPolicy'>): ProtectionSetting[] {
  return [
    { field: 'spec.publicAccess', enabled: observed.accessLevel === 'none' },
    { field: 'legalHold', enabled: observed.legalHold, blocksDeletion: true },
    { field: 'immutabilityPolicy', enabled: observed.immutabilityPolicy, blocksDeletion: true },
  ];
}

/** Every managed setting that differs between the spec and the container, with spec field paths. */
export function diffContainer(bucket: Bucket, observed: ObservedContainer, ownerTags: Readonly<Record<string, string>>): FieldDiff[] {
  const diff: FieldDiff[] = [];
  const desiredAccess = accessLevelFor(bucket.spec.publicAccess);
  if (desiredAccess !== observed.accessLevel) diff.push({ field: 'spec.publicAccess', desired: portablePublicAccess(desiredAccess), actual: portablePublicAccess(observed.accessLevel) });
  diff.push(...diffMetadata(bucket.spec.labels, ownerTags, observed.metadata));
  return diff;
}

/** atProvider for a container: its URL (also its id), etag and last-modified time. */
export function containerAtProvider(url: string, observed: ObservedContainer): { id: string; url: string; etag?: string; lastModified?: string } {
  return {
    id: url,
    url,
    ...(observed.etag ? { etag: observed.etag } : {}),
    ...(observed.lastModified ? { lastModified: observed.lastModified.toISOString() } : {}),
  };
}

// --- the client ---------------------------------------------------------------------------------

/** One Blob container's client: observe, create, update, delete. */
export class BlobContainerClient implements ExternalClient<Bucket> {
  readonly #container: ContainerClient;
  readonly #context: ConnectionContext;

  constructor(service: BlobServiceClient, context: ConnectionContext) {
    this.#container = service.getContainerClient(context.externalName);
    this.#context = context;
  }

  get #name(): string {
    return this.#context.externalName;
  }

  /** One SDK call, recorded and classified, aborted with the engine's signal. */
  #call<T>(call: CallOptions, operation: string, send: (container: ContainerClient, abort: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    return callAzure(this.#context, { service: AzureServices.blobContainers, signal: call.signal }, operation, () => send(this.#container, { abortSignal: call.signal }));
  }

  /** The container's properties, or undefined on a definite ContainerNotFound (a 403 is an error, never absence). */
  async #properties(call: CallOptions): Promise<ContainerGetPropertiesResponse | undefined> {
    try {
      return await this.#call(call, 'GetContainerProperties', (c, abort) => c.getProperties(abort));
    } catch (error) {
      if (hasCode(error, 'ContainerNotFound')) return undefined;
      throw error;
    }
  }

  async observe(bucket: Bucket, call: CallOptions): Promise<Observation> {
    const properties = await this.#properties(call);
    if (properties === undefined) return { exists: false, upToDate: false, ready: false };
    const observed = observedContainer(properties);
    const diff = diffContainer(bucket, observed, this.#context.ownerTags);
    const settingIssues = unappliedBucketSettings(bucket);
    return {
      exists: true,
      ready: true,
      upToDate: diff.length === 0,
      diff,
      // The container client's URL keeps the service URL's query string: a SAS token, never published.
      atProvider: containerAtProvider(publicUrl(this.#container.url), observed),
      ownerTags: ownerTagsIn(observed.metadata, this.#context.ownerTags),
      protection: containerProtection(observed),
      ...(settingIssues.length > 0 ? { settingIssues } : {}),
    };
  }

  /** Existence and owner metadata: observe's one Get Container Properties (metadata comes with it), no settings compared. */
  async probe(_bucket: Bucket, call: CallOptions): Promise<Presence> {
    const properties = await this.#properties(call);
    if (properties === undefined) return { exists: false };
    return { exists: true, ownerTags: ownerTagsIn(properties.metadata ?? {}, this.#context.ownerTags), protection: containerProtection(observedContainer(properties)) };
  }

  /**
   * Deletion policy Retain: the container's metadata without k8or's owner metadata (Set Container
   * Metadata), so another cluster or object can adopt it; labels, access and blobs stay. A missing
   * container, or one without owner metadata, has none to remove.
   */
  async release(_bucket: Bucket, call: CallOptions): Promise<void> {
    const properties = await this.#properties(call);
    if (properties === undefined) return;
    const metadata = properties.metadata ?? {};
    const kept = Object.fromEntries(Object.entries(metadata).filter(([key]) => !key.toLowerCase().startsWith(OWNER_METADATA_PREFIX)));
    if (Object.keys(kept).length === Object.keys(metadata).length) return;
    try {
      await this.#call(call, 'SetContainerMetadata', (c, abort) => c.setMetadata(kept, abort));
    } catch (error) {
      if (!hasCode(error, 'ContainerNotFound')) throw error;
    }
  }

  /**
   * Create Container with the metadata (labels and owner metadata) and the public access level in
   * the one call, so no container of ours ever lacks its owner. A name that exists is success only
   * when its owner metadata is ours (a repeated create); otherwise it is someone else's.
   */
  async create(bucket: Bucket, call: CallOptions): Promise<void> {
    const metadata = desiredMetadata(bucket.spec.labels, this.#context.ownerTags);
    const access = sdkAccess(accessLevelFor(bucket.spec.publicAccess));
    try {
      await this.#call(call, 'CreateContainer', (c, abort) => c.create({ metadata, ...(access ? { access } : {}), ...abort }));
    } catch (error) {
      if (!hasCode(error, 'ContainerAlreadyExists')) throw error;
      const existing = await this.#properties(call);
      const found = existing ? ownerTagsIn(existing.metadata ?? {}, this.#context.ownerTags) : undefined;
      const ours = found !== undefined && Object.entries(this.#context.ownerTags).every(([tag, value]) => found[tag] === value);
      if (!ours) throw new NotOwnedError(`CreateContainer: container "${this.#name}" already exists and is not this object's (ContainerAlreadyExists)`, { code: 'ContainerAlreadyExists', cause: error });
    }
  }

  /** Repairs each setting the observation found different, and only those. What a container cannot hold, observe reports. */
  async update(bucket: Bucket, observation: Observation, call: CallOptions): Promise<void> {
    const fields = (observation.diff ?? []).map((d) => d.field);
    const drifted = (prefix: string): boolean => fields.some((field) => field === prefix || field.startsWith(`${prefix}.`));
    // Adoption finds our owner metadata missing: those are ownerTags.* differences, written with the labels.
    if (drifted('spec.labels') || drifted('ownerTags')) await this.#putMetadata(bucket, call);
    // A protection the engine holds comes with the container's own value (Blocked) in the spec given: then nothing to write.
    const access = (observation.diff ?? []).find((d) => d.field === 'spec.publicAccess');
    if (access && !(accessLevelFor(bucket.spec.publicAccess) === 'none' && access.actual === 'Blocked')) await this.#putAccessLevel(bucket, call);
  }

  /**
   * Delete Container. Azure deletes a container with everything in it, so without forceDelete a
   * container holding any blob (current, snapshot, version or soft-deleted) is left alone with
   * DeletionBlockedError. Missing, or already being deleted, is success.
   */
  async delete(bucket: Bucket, call: CallOptions): Promise<void> {
    if (!bucket.spec.forceDelete) {
      const blob = await this.#anyBlob(call);
      if (blob !== undefined) {
        throw new DeletionBlockedError(
          `Azure container "${this.#name}" is not empty (it holds "${blob}"); set spec.forceDelete: true to delete its blobs with it, or deletionPolicy: Retain to keep it`,
          { code: 'ContainerNotEmpty' },
        );
      }
    }
    try {
      await this.#call(call, 'DeleteContainer', (c, abort) => c.delete(abort));
    } catch (error) {
      if (!hasCode(error, 'ContainerNotFound', 'ContainerBeingDeleted')) throw error;
    }
  }

  /**
   * The name of one blob in the container, or undefined when it is empty (or gone). Azure may answer
   * a listing page with fewer items than asked, none included, and a marker: only a page without a
   * marker ends the search. Each page is a call of its own (a rate-limit token each).
   */
  async #anyBlob(call: CallOptions): Promise<string | undefined> {
    let continuationToken: string | undefined;
    try {
      do {
        const page = await this.#call(call, 'ListBlobs', async (c, abort) => {
          const pages = c.listBlobsFlat({ includeSnapshots: true, includeVersions: true, includeDeleted: true, ...abort }).byPage({ maxPageSize: 1, ...(continuationToken ? { continuationToken } : {}) });
          const next = await pages.next();
          return next.done ? undefined : { blob: next.value.segment.blobItems[0]?.name, continuationToken: next.value.continuationToken };
        });
        if (page?.blob !== undefined) return page.blob;
        continuationToken = page?.continuationToken || undefined;
      } while (continuationToken);
      return undefined;
    } catch (error) {
      if (hasCode(error, 'ContainerNotFound')) return undefined;
      throw error;
    }
  }

  async #putMetadata(bucket: Bucket, call: CallOptions): Promise<void> {
    const metadata = desiredMetadata(bucket.spec.labels, this.#context.ownerTags);
    await this.#call(call, 'SetContainerMetadata', (c, abort) => c.setMetadata(metadata, abort));
  }

  /** Set Container ACL replaces the stored access policies too, so they are read and written back unchanged. */
  async #putAccessLevel(bucket: Bucket, call: CallOptions): Promise<void> {
    const current = await this.#call(call, 'GetContainerACL', (c, abort) => c.getAccessPolicy(abort));
    const access = sdkAccess(accessLevelFor(bucket.spec.publicAccess));
    await this.#call(call, 'SetContainerACL', (c, abort) => c.setAccessPolicy(access, current.signedIdentifiers, abort));
  }
}

// --- the connector ------------------------------------------------------------------------------

/** A Bucket connector; `options` are internal (tests list in small pages). */
export function azureBucketConnector(options: AzureConnectorOptions = {}): Connector<Bucket> {
  return {
    /** Builds (or reuses) the Blob service client for the ProviderConfig's account, endpoint and credentials. */
    async connect(_bucket: Bucket, context: ConnectionContext): Promise<ExternalClient<Bucket>> {
      return new BlobContainerClient(blobServiceClient(clientSettings(context.providerConfig, context.credentials, 'Bucket'), options), context);
    },

    /** Every container of the storage account (List Containers, every page), with its public access as spec.publicAccess. */
    async list(context: InventoryContext, call: CallOptions): Promise<InventoryItem<Bucket>[]> {
      const service = blobServiceClient(clientSettings(context.providerConfig, context.credentials, 'Bucket'), options);
      const containers = await everyPage(context, { service: AzureServices.blobContainers, signal: call.signal }, 'ListContainers', async (continuationToken) => {
        const pages = service.listContainers({ abortSignal: call.signal }).byPage({ ...(continuationToken ? { continuationToken } : {}), ...(options.listPageSize ? { maxPageSize: options.listPageSize } : {}) });
        const page = await pages.next();
        return page.done ? { items: [], continuationToken: undefined } : { items: page.value.containerItems, continuationToken: page.value.continuationToken };
      });
      return containers.map((container) => ({ externalName: container.name, spec: { publicAccess: portablePublicAccess(container.properties.publicAccess ?? 'none') } }));
    },
  };
}

export const bucketConnector: Connector<Bucket> = azureBucketConnector();
