import type { ManagedKindName, ManagedResource, ManagedStatus, ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '../provider/contract.js';

/** The metadata of a Namespace the engine reads (its annotations). */
export interface NamespaceInfo {
  metadata: { name?: string; annotations?: Record<string, string> };
}

/**
 * The small interfaces behind which every external effect of the reconciler
 * sits, so the algorithm can be read (and tested) on its own.
 */

/** Changes to a managed object's metadata (and spec.name) made in one merge patch. */
export interface ManagedPatch {
  /** Annotations to set (string) or remove (null). */
  annotations?: Record<string, string | null>;
  /** The complete new finalizer list; sent with a resourceVersion precondition. */
  finalizers?: string[];
  /** Sets spec.name (the external name). */
  specName?: string;
  /**
   * Sends the resource's resourceVersion as a precondition, so the patch fails
   * with 409 if the object changed since it was read. Set for every patch
   * decided on what the object said (it may come from a cache that is behind).
   */
  guarded?: boolean;
}

/** Reads and writes managed objects on the API server. */
export interface ManagedResourceClient {
  /**
   * The object, or undefined when it does not exist. It may come from a cache,
   * never older than this client's own last write to it; writes decided on it
   * are guarded by its resourceVersion.
   */
  get(kind: ManagedKindName, namespace: string, name: string, signal?: AbortSignal): Promise<ManagedResource | undefined>;
  /** Applies a merge patch; returns the object as stored. Throws a 409 KubeApiError on a stale resourceVersion (finalizers or `guarded`). */
  patch(resource: ManagedResource, patch: ManagedPatch, signal?: AbortSignal): Promise<ManagedResource>;
  /** Replaces status through the /status subresource, guarded by resource.metadata.resourceVersion. Throws 409 when stale. */
  writeStatus(resource: ManagedResource, status: ManagedStatus, signal?: AbortSignal): Promise<ManagedResource>;
  /**
   * Optional: every object of `kind` (any namespace) whose `spec.name` is `externalName`, from a
   * cache. The engine uses it to let only one object call the cloud for one cloud resource; without
   * it, that check is skipped (the webhook still makes it).
   */
  withExternalName?(kind: ManagedKindName, externalName: string): ManagedResource[];
}

/** Decoded Secret data. */
export type SecretData = Readonly<Record<string, string>>;

/** Where the reconciler reads configuration it does not own: namespaces, ProviderConfigs, Secrets. */
export interface ConfigLookups {
  namespace(name: string): Promise<NamespaceInfo | undefined>;
  providerConfig(name: string): Promise<ProviderConfig | undefined>;
  secret(namespace: string, name: string): Promise<SecretData | undefined>;
}

export type EventType = 'Normal' | 'Warning';

/** What an Event is about (core/v1 ObjectReference). */
export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

/** Records core/v1 Events. Must never throw: an Event is worth less than the reconcile it describes. */
export interface EventRecorder {
  /** `signal`: the reconcile's; once aborted (the engine stops or lost its Lease) the Event is not written. */
  record(object: InvolvedObject, type: EventType, reason: string, message: string, signal?: AbortSignal): Promise<void>;
}

/** The values written to `spec.writeOutputsTo`. */
export interface Outputs {
  externalName: string;
  provider: string;
  location?: string;
  url?: string;
  id?: string;
}

/** Keeps the outputs ConfigMap of a resource. */
export interface OutputsWriter {
  /** Creates or updates the ConfigMap when its content differs. `foreign`: a ConfigMap of that name exists and is not ours. */
  publish(resource: ManagedResource, configMapName: string, outputs: Outputs, signal?: AbortSignal): Promise<'unchanged' | 'written' | 'foreign'>;
  /** Deletes the ConfigMap if it is ours. */
  remove(resource: ManagedResource, configMapName: string, signal?: AbortSignal): Promise<void>;
}

/** The provider plugins the operator loaded, by `ProviderConfig.spec.provider`. */
export type ProviderPlugins = ReadonlyMap<string, ProviderPlugin>;
