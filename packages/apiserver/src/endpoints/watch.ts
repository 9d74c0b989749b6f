/**
 * One watch stream: newline-delimited WatchEvents for the objects a request selects, starting from
 * a resourceVersion (replayed from history) or from the current state (synthetic ADDED events).
 */
import type { KubeObject } from '../types.js';
import { metadataOf } from '../util.js';
import type { StoreEvent } from '../storage/store.js';
import { selectedName } from '../selectors/fields.js';
import { selectorFor } from './read.js';
import { present, presentJson, type Scope } from './scope.js';
import { warningHeader } from './respond.js';
import { badRequest, gone } from '../status.js';
import { queryFlag } from './query.js';
import { toTable } from './table/table.js';

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Unsent bytes a watch may pile up before it is closed. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Events gathered in one turn of the event loop beyond this many characters are sent at once. */
const MAX_BATCH_CHARS = 256 * 1024;

export function handleWatch(scope: Scope): void {
  const { ctx, info, type, query, res, req } = scope;
  const matches = selectorFor(scope);
  const name = info.name || selectedName(query.get('fieldSelector'));
  const rvParam = query.get('resourceVersion') ?? '';
  const sendInitialEvents = queryFlag(query, 'sendInitialEvents');
  const allowBookmarks = queryFlag(query, 'allowWatchBookmarks');
  const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
  if (rvParam !== '' && !/^\d+$/.test(rvParam)) throw badRequest(`resourceVersion: Invalid value: "${rvParam}": must be a non-negative integer`);
  const fromCurrentState = rvParam === '' || rvParam === '0' || sendInitialEvents;
  const startRv = fromCurrentState ? ctx.store.resourceVersion : Number(rvParam);

  const inScope = (obj: KubeObject): boolean => {
    const meta = metadataOf(obj);
    if (info.namespace && meta['namespace'] !== info.namespace) return false;
    if (name && meta['name'] !== name) return false;
    return matches(obj);
  };

  const headers: Record<string, string | string[]> = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' };
  if (scope.warnings.length > 0) headers['Warning'] = scope.warnings.map(warningHeader);
  res.writeHead(200, headers);
  // clients wait for the headers before they consider the watch open
  res.flushHeaders();
  let open = true;
  // Events are sent once per turn of the event loop, not one by one: under load one turn admits many
  // writes, and each socket write costs a TLS record and a system call whatever its size.
  let pending: string[] = [];
  let pendingLength = 0;
  let flushScheduled = false;
  const flush = (): void => {
    flushScheduled = false;
    if (pending.length === 0 || res.destroyed) return;
    const lines = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    pendingLength = 0;
    res.write(lines);
    // a watcher that stops reading is cut off (as kube-apiserver drops watchers that fall behind)
    if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
  };
  const send = (line: string): void => {
    pending.push(line);
    pendingLength += line.length;
    // a long replay or initial list goes out in pieces, not as one string
    if (pendingLength >= MAX_BATCH_CHARS) flush();
    if (flushScheduled || pending.length === 0) return;
    flushScheduled = true;
    setImmediate(flush);
  };
  const write = (eventType: EventType, object: unknown): void => {
    if (!open) return;
    if (eventType === 'ERROR' || eventType === 'BOOKMARK') {
      send(`${JSON.stringify({ type: eventType, object })}\n`);
      return;
    }
    if (scope.table) {
      const shown = present(scope, object as KubeObject);
      const table = toTable([shown], type, scope.version, scope.table, { resourceVersion: metadataOf(shown)['resourceVersion'] });
      send(`${JSON.stringify({ type: eventType, object: table })}\n`);
      return;
    }
    send(encodedEvent(scope, eventType, object as KubeObject));
  };
  const bookmark = (annotations?: Record<string, string>): void => {
    const metadata: Record<string, unknown> = { resourceVersion: String(ctx.store.resourceVersion) };
    if (annotations) metadata['annotations'] = annotations;
    write('BOOKMARK', { kind: type.kind, apiVersion: scope.apiVersion, metadata });
  };

  /** The event a watcher with this selection sees for a store event (selector transitions become ADDED/DELETED). */
  const translate = (event: StoreEvent): [EventType, KubeObject] | undefined => {
    if (event.resourceKey !== type.key) return undefined;
    switch (event.type) {
      case 'ADDED':
        return inScope(event.object) ? ['ADDED', event.object] : undefined;
      case 'DELETED':
        return inScope(event.oldObject ?? event.object) ? ['DELETED', event.object] : undefined;
      case 'MODIFIED': {
        const now = inScope(event.object);
        const before = event.oldObject ? inScope(event.oldObject) : false;
        if (now && before) return ['MODIFIED', event.object];
        if (now) return ['ADDED', event.object];
        // As kube-apiserver's cacher: the previous content (what the watcher selected), at this change's resourceVersion.
        if (before) return ['DELETED', atVersion(event.oldObject!, event.rv)];
        return undefined;
      }
    }
  };

  let replay: StoreEvent[] = [];
  if (!fromCurrentState) {
    const events = ctx.history.since(type.key, startRv);
    if (!events) {
      const status = gone(`too old resource version: ${startRv} (${ctx.history.oldestResumable(type.key)})`).status;
      write('ERROR', status);
      open = false;
      flush();
      res.end();
      return;
    }
    replay = events;
  }

  const timers: NodeJS.Timeout[] = [];
  const finish = (): void => {
    if (!open) return;
    open = false;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    flush();
    res.end();
  };
  const unsubscribe = ctx.hub.subscribe({
    resourceKey: type.key,
    end: () => finish(),
    deliver(event) {
      if (event.rv <= startRv) return;
      const translated = translate(event);
      if (translated) write(translated[0], translated[1]);
    },
    close() {
      open = false;
      for (const t of timers) clearTimeout(t);
      res.destroy();
    },
  });

  if (fromCurrentState) {
    for (const obj of ctx.store.list(type.key, info.namespace || undefined)) if (inScope(obj)) write('ADDED', obj);
    if (allowBookmarks && sendInitialEvents) bookmark({ 'k8s.io/initial-events-end': 'true' });
  } else {
    for (const event of replay) {
      const translated = translate(event);
      if (translated) write(translated[0], translated[1]);
    }
  }

  if (allowBookmarks) {
    const tick = (): void => {
      bookmark();
      timers[0] = setTimeout(tick, ctx.bookmarkIntervalMs).unref();
    };
    timers[0] = setTimeout(tick, ctx.bookmarkIntervalMs).unref();
  }
  if (timeoutSeconds > 0) timers.push(setTimeout(finish, timeoutSeconds * 1000).unref());
  req.on('close', finish);
  res.on('close', finish);
}

/**
 * A watch event's line. The object's JSON is encoded once for every watcher of its version (and its
 * write's answer) by `presentJson`, which also knows when a CRD's new defaults change it.
 */
function encodedEvent(scope: Scope, eventType: EventType, object: KubeObject): string {
  return `{"type":"${eventType}","object":${presentJson(scope, object)}}\n`;
}

/** `object` as it was, stamped with a later change's resourceVersion (stored objects are never changed in place). */
function atVersion(object: KubeObject, rv: number): KubeObject {
  return { ...object, metadata: { ...(object.metadata as Record<string, unknown>), resourceVersion: String(rv) } };
}
