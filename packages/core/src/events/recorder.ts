import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { corePath } from '../kube/paths.js';
import type { KubeRest } from '../kube/rest.js';
import type { EventRecorder, EventType, InvolvedObject } from '../reconcile/ports.js';

export interface KubeEventRecorderOptions {
  /** `source.component` and `reportingComponent` of every Event. Default `k8or`. */
  component?: string;
  /** Once its burst is spent, the least time between two writes of the same Event (same object, type, reason, message). Default 60 s. */
  aggregationIntervalMs?: number;
  /** Writes of the same Event allowed at once (the create counts as one); refilled one per interval. Default 2. */
  aggregationBurst?: number;
  /** How many distinct Events to remember for aggregation. Default 4096. */
  cacheSize?: number;
  logger?: Logger;
  now?: () => Date;
}

interface Seen {
  namespace: string;
  eventName: string;
  count: number;
  /** Occurrences not yet written. */
  pending: number;
  /** Writes this Event may make now (a token bucket, refilled one per interval up to the burst). */
  tokens: number;
  refilledMs: number;
}

/**
 * Writes core/v1 Events, aggregated like client-go's EventCorrelator: the
 * first occurrence creates an Event; a repeat of the same type, reason and
 * message for the same object bumps its count and lastTimestamp with a patch.
 * Like client-go's spam filter, each Event has a token bucket: `burst` writes
 * at once (by default the create and the first repeat, so `kubectl describe`
 * shows a repeat as soon as it happens), then one per interval; repeats in
 * between are counted and written with the next patch. A failing resource
 * thus costs one API write per interval once its burst is spent.
 */
export class KubeEventRecorder implements EventRecorder {
  readonly #rest: KubeRest;
  readonly #component: string;
  readonly #intervalMs: number;
  readonly #burst: number;
  readonly #cacheSize: number;
  readonly #logger: Logger | undefined;
  readonly #now: () => Date;
  readonly #seen = new Map<string, Seen>();
  /**
   * Event names: the object's name, then this recorder's random prefix and a
   * count, 16 hex digits, unique without drawing random bytes per Event
   * (a `randomBytes` call per Event showed in the engine's profile).
   */
  readonly #namePrefix = randomBytes(4).toString('hex');
  #named = 0;

  constructor(rest: KubeRest, options: KubeEventRecorderOptions = {}) {
    this.#rest = rest;
    this.#component = options.component ?? 'k8or';
    this.#intervalMs = options.aggregationIntervalMs ?? 60_000;
    this.#burst = Math.max(1, options.aggregationBurst ?? 2);
    this.#cacheSize = options.cacheSize ?? 4096;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => new Date());
  }

  async record(object: InvolvedObject, type: EventType, reason: string, message: string, signal?: AbortSignal): Promise<void> {
    const namespace = object.namespace ?? 'default';
    const key = JSON.stringify([object.uid ?? `${namespace}/${object.kind}/${object.name}`, type, reason, message]);
    const now = this.#now();
    const nowMs = now.getTime();
    const time = now.toISOString();
    try {
      const seen = this.#seen.get(key);
      if (seen) {
        seen.pending += 1;
        seen.tokens = Math.min(this.#burst, seen.tokens + (nowMs - seen.refilledMs) / this.#intervalMs);
        seen.refilledMs = nowMs;
        if (seen.tokens < 1) return;
        const count = seen.count + seen.pending;
        await this.#rest.patch(corePath('events', seen.namespace, seen.eventName), { count, lastTimestamp: time }, 'merge', signal);
        seen.count = count;
        seen.pending = 0;
        seen.tokens -= 1;
        return;
      }
      const eventName = `${object.name}.${this.#namePrefix}${(this.#named++ % 0x1_0000_0000).toString(16).padStart(8, '0')}`;
      await this.#rest.create(corePath('events', namespace), {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: eventName, namespace },
        involvedObject: object,
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: time,
        lastTimestamp: time,
        source: { component: this.#component },
        reportingComponent: this.#component,
        reportingInstance: this.#component,
      }, signal);
      this.#remember(key, { namespace, eventName, count: 1, pending: 0, tokens: this.#burst - 1, refilledMs: nowMs });
    } catch (error) {
      // The Event may have expired or been deleted; forget it so the next one is created afresh.
      this.#seen.delete(key);
      this.#logger?.warn({ err: error instanceof Error ? error.message : String(error), reason }, 'cannot record event');
    }
  }

  #remember(key: string, seen: Seen): void {
    if (this.#seen.size >= this.#cacheSize) {
      const oldest = this.#seen.keys().next();
      if (!oldest.done) this.#seen.delete(oldest.value);
    }
    this.#seen.set(key, seen);
  }
}

/** Records nothing: for callers that do not want Events. */
export const noEvents: EventRecorder = { record: async () => {} };
