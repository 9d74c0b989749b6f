// What a history leaves for its checker: every step as it was done (with its time and outcome), every
// act of someone else in the cloud account, the user's objects (their external names, ProviderConfigs,
// adopt annotations and deletion over time), and what the API server's watch showed (the objects, the
// outputs ConfigMaps, the Events).
import { KubeConfig, Watch } from '@kubernetes/client-node';
import type { ManagedObject } from '../resources.ts';
import type { CloudName, Kind } from '../stores/index.ts';

export interface OtherAct {
  place: string;
  name: string;
  op: 'create' | 'delete' | 'protect' | 'unprotect' | 'change';
  /** A create that carried another cluster's owner tags. */
  tagged?: boolean;
  start: number;
  end: number;
  ok: boolean;
  error?: string;
}

export interface UserObject {
  kind: Kind;
  cloud: CloudName;
  name: string;
  externalName: string;
  created: number;
  /** When the user asked for its deletion (and the API server accepted). */
  deleteAsked?: number;
  retain: boolean;
  /** `k8or.io/adopt` over time (the latest entry at or before a moment holds). */
  adopt: Array<{ at: number; on: boolean }>;
  /** `spec.providerConfigRef.name` over time. */
  providerConfig: Array<{ at: number; name: string }>;
}

export interface Watched {
  at: number;
  type: string;
  object: ManagedObject & { data?: Record<string, string>; message?: string; note?: string; reason?: string };
}

export interface HistoryRecord {
  seed: number;
  /** `time step outcome` lines. */
  lines: string[];
  others: OtherAct[];
  objects: Map<string, UserObject>;
  /** ProviderConfig settings that place a Table: the Bigtable instance of each GCP ProviderConfig over time. */
  bigtableInstance: Map<string, Array<{ at: number; instance: string }>>;
  watched: Watched[];
  /** Operator kills and lease losses, by time. */
  disruptions: Array<{ at: number; what: string }>;
}

export const objectKey = (kind: Kind, name: string): string => `${kind}/${name}`;

/** The latest entry of a timeline at or before `at`. */
export function valueAt<T extends { at: number }>(timeline: readonly T[], at: number): T | undefined {
  let found: T | undefined;
  for (const entry of timeline) if (entry.at <= at) found = entry;
  return found;
}

/**
 * Watches the user's namespace (Buckets, Tables, ConfigMaps, Events) until stopped, every event into
 * `record.watched` and to `onEvent`; a watch the server ends is opened again.
 */
export async function watchNamespace(kubeconfig: string, namespace: string, record: HistoryRecord, onEvent: (watched: Watched) => void): Promise<() => void> {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const watch = new Watch(kc);
  let stopped = false;
  const aborts: AbortController[] = [];
  const paths = [`/apis/k8or.io/v1alpha1/namespaces/${namespace}/buckets`, `/apis/k8or.io/v1alpha1/namespaces/${namespace}/tables`, `/api/v1/namespaces/${namespace}/configmaps`, `/api/v1/namespaces/${namespace}/events`];
  const open = async (path: string): Promise<void> => {
    if (stopped) return;
    const abort = await watch.watch(
      path,
      {},
      (type, object: Watched['object']) => {
        const watched = { at: Date.now(), type, object };
        record.watched.push(watched);
        onEvent(watched);
      },
      () => {
        if (!stopped) setTimeout(() => void open(path).catch(() => undefined), 200);
      },
    );
    aborts.push(abort);
  };
  for (const path of paths) await open(path);
  return () => {
    stopped = true;
    for (const abort of aborts) abort.abort();
  };
}
