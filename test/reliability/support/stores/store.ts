// The suite's own view of one kind of cloud resource (S3 buckets, DynamoDB tables, GCS buckets, Bigtable
// tables, Azure containers and tables), straight at its backend with the real SDK, never through the operator's
// proxies: whether a resource exists, whether it is as the suite last asked, the data written into it
// before the faults, and which of the operator's calls at the proxy create or delete it.
import type { ProxiedApi } from '../cloud-proxy.ts';
import type { Entry } from '../resources.ts';

export type CloudName = 'aws' | 'gcp' | 'azure';
export type Kind = 'Bucket' | 'Table';

export interface Store {
  readonly cloud: CloudName;
  readonly kind: Kind;
  /** The recording proxy the operator's calls to this backend pass through. */
  readonly dialect: ProxiedApi;
  /** The operator's writes, as the proxy names them (`CLOUD_DIALECTS[dialect].operationOf`; Bigtable's RPC methods). */
  readonly writes: { create: string; delete: string; settings: readonly string[] };
  /**
   * The most calls one reconcile of a resource of this kind makes at its proxy, counted from its
   * provider's code: a reconcile observes, makes at most one write (create, update or delete) and
   * observes again (`packages/core/src/reconcile/reconciler.ts`); an observe that finds nothing is one
   * call. The largest of observe + update + observe, nothing + create + observe and observe + delete
   * + observe, for the specs the suite writes (no lifecycle rules, no forceDelete: no paging through
   * objects), with no cloud fault to retry (the fault runs have none). The bound on calls per resource
   * (`callBound`) multiplies it by the reconciles the resource earned.
   */
  readonly callsPerReconcile: number;
  /** Whether the suite edits this kind here (a spec field the cloud applies and the suite can read back). */
  readonly editable: boolean;
  exists(name: string): Promise<boolean>;
  /** Every resource of this kind in the backend (for the leak check). */
  names(): Promise<string[]>;
  /** How the cloud resource differs from the settings the suite last asked for (empty: as asked). */
  settingsProblems(entry: Entry): Promise<string[]>;
  /** Writes the data of one resource (objects, blobs or items) before the faults. */
  writeData(entry: Entry): Promise<void>;
  /** Reads it back: what is missing or changed (empty: nothing lost). */
  lostData(entry: Entry): Promise<string[]>;
}

/** Objects or items written per data holder. */
export const DATA_PER_HOLDER = 3;

/** The body of object `i` of a bucket or container. */
export const objectBody = (container: string, i: number): string => `object ${i} of ${container}: ${'x'.repeat(100 + i)}`;

/** The SDKs' "not found", whatever their shape. */
export function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; code?: number | string; statusCode?: number; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchBucket' || e.name === 'ResourceNotFoundException' || e.statusCode === 404 || e.code === 404 || e.$metadata?.httpStatusCode === 404;
}
