import type { ManagedKindName } from '@k8or/api';
import { openWatchStream, type WatchStreamEnd } from '../informer/watch-stream.js';
import type { KubeAccess } from '../kube/access.js';
import { k8orPath } from '../kube/paths.js';
import { readObjectAwaitsItsSlot } from '../policy/drift-schedule.js';
import { shardRecordOf, type ShardRecord, type StringPool } from './shard-record.js';

export interface PendingEditsWatchOptions {
  kubeConfig: KubeAccess;
  kind: ManagedKindName;
  /** The objects to watch: a dead shard's (`<shard label> in (…)`). */
  labelSelector: string;
  /** The resourceVersion of the read this watch follows: every later write of a selected object is seen. */
  fromResourceVersion: string;
  pool: StringPool;
  /** Called for each selected object written that a shard must work at once (not `awaitsItsSlot`: a user's edit, a delete, a failure). */
  onPending(record: ShardRecord): void;
  /** Abort the watch when nothing arrives for this long; default 60 s. */
  inactivityMs?: number;
}

/** A watch for `PendingEditsWatchOptions.onPending`; `stop()` ends it. */
export interface PendingEditsWatch {
  /** Resolves once the watch has ended, for any reason (a closed or broken stream is not reopened). */
  readonly ended: Promise<WatchStreamEnd>;
  stop(): void;
}

/**
 * Follows, from a read, the writes of the objects a label selector selects, and tells of each one
 * that needs work at once (a user's edit, a delete, a reconcile asked for: anything but an object
 * in sync waiting for its drift-check slot). The assigner opens it
 * on a dead shard's objects while it relabels them: an edit made after its first read of them
 * would otherwise wait for the relabel's second read to reach its object. Objects that leave the
 * selection (relabelled) and writes that leave an object in sync are not told; nothing is cached.
 */
export function watchPendingEdits(options: PendingEditsWatchOptions): PendingEditsWatch {
  const stream = openWatchStream(options.kubeConfig, k8orPath(options.kind, undefined), {
    query: { resourceVersion: options.fromResourceVersion, labelSelector: options.labelSelector, allowWatchBookmarks: 'true' },
    inactivityMs: options.inactivityMs ?? 60_000,
    userAgent: 'k8or-shard-assigner',
    // Not the DELETED event of each object relabelled away (leaving the selection): the watch sees one for every object moved.
    types: new Set(['ADDED', 'MODIFIED']),
    onEvent: (type, object) => {
      if (type === 'ERROR') {
        stream.abort();
        return;
      }
      if (type !== 'ADDED' && type !== 'MODIFIED') return;
      if (!readObjectAwaitsItsSlot(object)) options.onPending(shardRecordOf(options.kind, object, options.pool));
    },
  });
  return { ended: stream.ended, stop: () => stream.abort() };
}
