// The suite's side of a run: Buckets and Tables in every cloud created, edited and deleted through the
// API server as a user would (the admin's client, never faulted), and a ledger of what each should end as.
import type { KubeRest } from '@k8or/core';
import type { CloudName, Kind } from './stores/index.ts';

export type { CloudName, Kind } from './stores/index.ts';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface ManagedObject {
  apiVersion: string;
  kind: Kind;
  metadata: { name: string; namespace: string; generation?: number; deletionTimestamp?: string; finalizers?: string[]; annotations?: Record<string, string>; resourceVersion?: string };
  spec: Record<string, unknown> & { name?: string };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

/**
 * What a resource should end as:
 * - `live`: exists, Ready and Synced at its latest generation, in the cloud as its spec says;
 * - `deleted`: gone from the API server (finalizer released); gone from the cloud under Delete, kept under Retain;
 * - `blocked`: its deletion was asked for, but it holds data and the policy forbids losing it
 *   (`forceDelete: false`, `deletionProtection`): it stays, Terminating, with the reason in a condition;
 * - `protected`: `k8or.io/protect` made the webhook refuse its deletion: it stays, live.
 */
export type Fate = 'live' | 'deleted' | 'blocked' | 'protected';

export interface Entry {
  cloud: CloudName;
  kind: Kind;
  namespace: string;
  name: string;
  /** The external name the webhook defaulted, known from the create's answer. */
  externalName: string;
  deletionPolicy: 'Delete' | 'Retain';
  fate: Fate;
  /** The spec fields the suite last set (compared with the cloud at the end). */
  desired: { versioning?: boolean; ttlAttribute?: string | undefined; round?: string };
  /** Objects, blobs or items written into it before the faults, read back after. */
  holdsData: boolean;
  /** Table: spec.deletionProtection (the engine refuses to delete it). */
  deletionProtection: boolean;
  /** Spec edits the suite made (each worth one more reconcile in a call bound). */
  edits: number;
}

export const GROUP_VERSION = 'k8or.io/v1alpha1';

/** The ProviderConfig of each cloud in a fault run (AWS is the cluster default, named by no reference). */
export const PROVIDER_CONFIG_OF = { aws: undefined, gcp: 'reliability-gcp', azure: 'reliability-azure' } as const satisfies Record<CloudName, string | undefined>;

export function collectionPath(namespace: string, kind: Kind): string {
  return `/apis/k8or.io/v1alpha1/namespaces/${namespace}/${kind === 'Bucket' ? 'buckets' : 'tables'}`;
}

export interface NewResource {
  cloud: CloudName;
  kind: Kind;
  name: string;
  deletionPolicy?: 'Delete' | 'Retain';
  /** Bucket on AWS and GCP: spec.versioning. */
  versioning?: boolean;
  /** Table: spec.deletionProtection. */
  deletionProtection?: boolean;
  protect?: boolean;
}

/** Versioning is a bucket setting on S3 and GCS; Azure has it per account, not per container. */
const hasVersioning = (cloud: CloudName, kind: Kind): boolean => kind === 'Bucket' && cloud !== 'azure';

function manifest(namespace: string, resource: NewResource): ManagedObject {
  const spec: Record<string, unknown> = { deletionPolicy: resource.deletionPolicy ?? 'Delete' };
  const providerConfig = PROVIDER_CONFIG_OF[resource.cloud];
  if (providerConfig) spec['providerConfigRef'] = { name: providerConfig };
  if (resource.kind === 'Bucket') {
    // (labels on Buckets only: DynamoDB Local has no table tags and Azure tables none at all, so a Table's labels never apply there)
    spec['labels'] = { suite: 'reliability' };
    if (hasVersioning(resource.cloud, resource.kind)) spec['versioning'] = resource.versioning ?? false;
    spec['forceDelete'] = false;
  } else {
    spec['partitionKey'] = { name: 'id', type: 'string' };
    if (resource.deletionProtection) spec['deletionProtection'] = true;
  }
  return {
    apiVersion: GROUP_VERSION,
    kind: resource.kind,
    metadata: { name: resource.name, namespace, ...(resource.protect ? { annotations: { 'k8or.io/protect': 'true' } } : {}) },
    spec,
  };
}

/** The suite's record of every resource of one run (one namespace) and what it should end as. */
export class Ledger {
  readonly entries = new Map<string, Entry>();

  readonly namespace: string;

  private readonly admin: KubeRest;

  constructor(admin: KubeRest, namespace: string) {
    this.admin = admin;
    this.namespace = namespace;
  }

  key(kind: Kind, name: string): string {
    return `${kind}/${name}`;
  }

  get(kind: Kind, name: string): Entry {
    const entry = this.entries.get(this.key(kind, name));
    if (!entry) throw new Error(`${kind}/${name} is not in the ledger`);
    return entry;
  }

  list(filter: (entry: Entry) => boolean = () => true): Entry[] {
    return [...this.entries.values()].filter(filter);
  }

  /**
   * The external name of a kind without tags (an Azure or Bigtable table) carries the object's uid
   * token, so the webhook leaves it to the engine, which writes it before its first create.
   */
  async #namedByTheEngine(resource: NewResource, timeoutMs = 300_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const object = await this.admin.get<ManagedObject>(this.path(resource)).catch(() => undefined);
      if (object?.spec.name) return object.spec.name;
      if (Date.now() > deadline) throw new Error(`neither the webhook nor the engine gave ${resource.kind}/${resource.name} a spec.name within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  path(entry: Pick<Entry, 'kind' | 'name'>): string {
    return `${collectionPath(this.namespace, entry.kind)}/${entry.name}`;
  }

  async create(resource: NewResource): Promise<Entry> {
    const created = await this.admin.create<ManagedObject>(collectionPath(this.namespace, resource.kind), manifest(this.namespace, resource));
    const externalName = created.spec.name ?? (await this.#namedByTheEngine(resource));
    const entry: Entry = {
      cloud: resource.cloud,
      kind: resource.kind,
      namespace: this.namespace,
      name: resource.name,
      externalName,
      deletionPolicy: resource.deletionPolicy ?? 'Delete',
      fate: resource.protect ? 'protected' : 'live',
      desired: hasVersioning(resource.cloud, resource.kind) ? { versioning: resource.versioning ?? false } : {},
      holdsData: false,
      deletionProtection: resource.deletionProtection ?? false,
      edits: 0,
    };
    this.entries.set(this.key(resource.kind, resource.name), entry);
    return entry;
  }

  /**
   * A spec edit: a Bucket's labels change (and on S3 and GCS its versioning flips); a Table's TTL
   * attribute is set or unset (DynamoDB's TTL; Bigtable's GC rule). (Azure tables have nothing to edit:
   * the workload does not pick them.)
   */
  async update(entry: Entry, round: number): Promise<void> {
    if (entry.kind === 'Bucket') {
      const versioning = hasVersioning(entry.cloud, entry.kind) ? !entry.desired.versioning : undefined;
      await this.admin.patch(this.path(entry), { spec: { ...(versioning === undefined ? {} : { versioning }), labels: { suite: 'reliability', round: String(round) } } });
      if (versioning !== undefined) entry.desired.versioning = versioning;
      entry.desired.round = String(round);
    } else {
      const ttlAttribute = entry.desired.ttlAttribute ? undefined : `expiresAt${round}`;
      await this.admin.patch(this.path(entry), { spec: { ttlAttribute: ttlAttribute ?? null } });
      entry.desired.ttlAttribute = ttlAttribute;
    }
    entry.edits++;
  }

  /**
   * Asks for the deletion, and records what must come of it: a protected resource is refused by the
   * webhook (and must stay); one holding data under Delete stays blocked; the rest go.
   */
  async delete(entry: Entry): Promise<void> {
    try {
      await this.admin.request('DELETE', this.path(entry));
    } catch (error) {
      if (entry.fate === 'protected' && /is protected from deletion/.test(String(error))) return;
      throw error;
    }
    if (entry.fate === 'protected') throw new Error(`the webhook let ${entry.kind}/${entry.name} (k8or.io/protect) be deleted`);
    const guarded = entry.kind === 'Bucket' ? entry.holdsData : entry.deletionProtection;
    entry.fate = guarded && entry.deletionPolicy === 'Delete' ? 'blocked' : 'deleted';
  }

  /** Every Bucket and Table of the run's namespace, by `key(kind, name)`. */
  async readAll(): Promise<Map<string, ManagedObject>> {
    const lists = await Promise.all((['Bucket', 'Table'] as const).map(async (kind) => ({ kind, list: await this.admin.get<{ items: ManagedObject[] }>(collectionPath(this.namespace, kind)) })));
    return new Map(lists.flatMap(({ kind, list }) => (list?.items ?? []).map((object) => [this.key(kind, object.metadata.name), object] as const)));
  }
}

export function condition(object: ManagedObject | undefined, type: string): Condition | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}
