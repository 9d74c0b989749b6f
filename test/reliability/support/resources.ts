// The suite's side of a run: Buckets and Tables created, edited and deleted through the API server
// as a user would (the admin's client, never faulted), and a ledger of what each should end as.
import type { KubeRest } from '@k8or/core';
import { USER_NAMESPACE } from './cluster.ts';

export type Kind = 'Bucket' | 'Table';

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
  kind: Kind;
  name: string;
  /** The external name the webhook defaulted, known from the create's answer. */
  externalName: string;
  deletionPolicy: 'Delete' | 'Retain';
  fate: Fate;
  /** The spec fields the suite last set (compared with the cloud at the end). */
  desired: { versioning?: boolean };
  /** Objects or items written into it before the faults, read back after. */
  holdsData: boolean;
  /** Table: spec.deletionProtection (DynamoDB refuses DeleteTable). */
  deletionProtection: boolean;
}

export const GROUP_VERSION = 'k8or.io/v1alpha1';

export function collectionPath(kind: Kind): string {
  return `/apis/k8or.io/v1alpha1/namespaces/${USER_NAMESPACE}/${kind === 'Bucket' ? 'buckets' : 'tables'}`;
}

export function objectPath(kind: Kind, name: string): string {
  return `${collectionPath(kind)}/${name}`;
}

export interface NewResource {
  kind: Kind;
  name: string;
  deletionPolicy?: 'Delete' | 'Retain';
  /** Bucket: spec.versioning. */
  versioning?: boolean;
  /** Table: spec.deletionProtection. */
  deletionProtection?: boolean;
  protect?: boolean;
}

function manifest(resource: NewResource): ManagedObject {
  const spec: Record<string, unknown> = { deletionPolicy: resource.deletionPolicy ?? 'Delete', labels: { suite: 'reliability' } };
  if (resource.kind === 'Bucket') {
    spec['versioning'] = resource.versioning ?? false;
    spec['forceDelete'] = false;
  } else {
    spec['partitionKey'] = { name: 'id', type: 'string' };
    if (resource.deletionProtection) spec['deletionProtection'] = true;
  }
  return {
    apiVersion: GROUP_VERSION,
    kind: resource.kind,
    metadata: { name: resource.name, namespace: USER_NAMESPACE, ...(resource.protect ? { annotations: { 'k8or.io/protect': 'true' } } : {}) },
    spec,
  };
}

/** The suite's record of every resource of a run and what it should end as. */
export class Ledger {
  readonly entries = new Map<string, Entry>();
  private readonly admin: KubeRest;

  // Node runs this file with type stripping, which has no parameter properties.
  constructor(admin: KubeRest) {
    this.admin = admin;
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

  async create(resource: NewResource): Promise<Entry> {
    const created = await this.admin.create<ManagedObject>(collectionPath(resource.kind), manifest(resource));
    const externalName = created.spec.name;
    if (!externalName) throw new Error(`the webhook gave ${resource.kind}/${resource.name} no spec.name`);
    const entry: Entry = {
      kind: resource.kind,
      name: resource.name,
      externalName,
      deletionPolicy: resource.deletionPolicy ?? 'Delete',
      fate: resource.protect ? 'protected' : 'live',
      desired: resource.kind === 'Bucket' ? { versioning: resource.versioning ?? false } : {},
      holdsData: false,
      deletionProtection: resource.deletionProtection ?? false,
    };
    this.entries.set(this.key(resource.kind, resource.name), entry);
    return entry;
  }

  /** A spec edit: a Bucket's versioning flips; a Table's labels change (a tag update in DynamoDB). */
  async update(entry: Entry, round: number): Promise<void> {
    if (entry.kind === 'Bucket') {
      const versioning = !entry.desired.versioning;
      await this.admin.patch(objectPath(entry.kind, entry.name), { spec: { versioning, labels: { suite: 'reliability', round: String(round) } } });
      entry.desired.versioning = versioning;
    } else {
      await this.admin.patch(objectPath(entry.kind, entry.name), { spec: { labels: { suite: 'reliability', round: String(round) } } });
    }
  }

  /**
   * Asks for the deletion, and records what must come of it: a protected resource is refused by the
   * webhook (and must stay); one holding data under Delete stays blocked; the rest go.
   */
  async delete(entry: Entry): Promise<void> {
    try {
      await this.admin.request('DELETE', objectPath(entry.kind, entry.name));
    } catch (error) {
      if (entry.fate === 'protected' && /is protected from deletion/.test(String(error))) return;
      throw error;
    }
    if (entry.fate === 'protected') throw new Error(`the webhook let ${entry.kind}/${entry.name} (k8or.io/protect) be deleted`);
    const guarded = entry.kind === 'Bucket' ? entry.holdsData : entry.deletionProtection;
    entry.fate = guarded && entry.deletionPolicy === 'Delete' ? 'blocked' : 'deleted';
  }

  async read(entry: Entry): Promise<ManagedObject | undefined> {
    return await this.admin.get<ManagedObject>(objectPath(entry.kind, entry.name));
  }
}

export function condition(object: ManagedObject | undefined, type: string): Condition | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}
