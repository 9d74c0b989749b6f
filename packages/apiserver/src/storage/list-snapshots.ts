/**
 * Paged lists are consistent, as with etcd: the pages after the first are served from the state the
 * first page saw. Stored objects are never changed in place, so a snapshot is just the list of them.
 * Snapshots expire (etcd compacts after about five minutes); a continue token past that gets 410.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../types.js';

interface Snapshot {
  objects: KubeObject[];
  resourceVersion: number;
  expiresAt: number;
}

const TTL_MS = 5 * 60 * 1000;
const MAX_SNAPSHOTS = 200;

export class ListSnapshots {
  private readonly snapshots = new Map<string, Snapshot>();

  /** Keep `objects` (as seen at `resourceVersion`) for later pages; returns the snapshot id. */
  keep(objects: KubeObject[], resourceVersion: number): string {
    this.expire();
    if (this.snapshots.size >= MAX_SNAPSHOTS) {
      const oldest = this.snapshots.keys().next().value;
      if (oldest !== undefined) this.snapshots.delete(oldest);
    }
    const id = randomBytes(9).toString('base64url');
    this.snapshots.set(id, { objects, resourceVersion, expiresAt: Date.now() + TTL_MS });
    return id;
  }

  get(id: string): Snapshot | undefined {
    this.expire();
    return this.snapshots.get(id);
  }

  /** Forget every snapshot (compactHistory: older resourceVersions are gone). */
  clear(): void {
    this.snapshots.clear();
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, s] of this.snapshots) {
      if (s.expiresAt > now) break;
      this.snapshots.delete(id);
    }
  }
}
