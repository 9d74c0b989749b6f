/**
 * Fault injection for tests of clients: a seeded share of the requests of chosen users is answered
 * the way a troubled kube-apiserver answers, with its own Status bodies. Most faults come before the
 * request does anything (a faulted write stores nothing):
 *
 * - `conflict`  409 Conflict on update and patch ("the object has been modified"), as after a
 *               concurrent write;
 * - `throttle`  429 TooManyRequests with `Retry-After` (API Priority and Fairness);
 * - `internal`  500 InternalError (an etcd or webhook failure);
 * - `gone`      on a watch that resumes from a resourceVersion: the `ERROR` event with the 410
 *               Expired Status (etcd compacted past it); on a paged list: 410 Expired;
 * - `dropWatch` a watch that opens normally and is cut without a word a little later (a load
 *               balancer or apiserver restart).
 *
 * Two come after the write is stored, as when etcd commits a write but the apiserver's wait for it
 * times out, or the connection breaks before the answer: the client cannot tell the write happened.
 *
 * - `internalAfterWrite` a create, update, patch or delete is applied (watchers see it), then answered
 *               500 InternalError ("etcdserver: request timed out") in place of its own answer;
 * - `cutAfterWrite`      the same write applied, then the connection cut without an answer.
 *
 * The injector is switched on and off at run time (`enable()`, `disable()`, `configure()`), counts
 * what it injected, and draws every choice from its seed, so a run replays.
 */
import type { ApiFaultKind, ApiFaultOptions, ApiFaults, RequestVerb } from '../types.js';
import { ApiError, conflict, gone, qualifiedResource } from '../status.js';

export const API_FAULT_KINDS: readonly ApiFaultKind[] = ['conflict', 'throttle', 'internal', 'gone', 'dropWatch', 'internalAfterWrite', 'cutAfterWrite'];

const WRITES: ReadonlySet<RequestVerb> = new Set(['create', 'update', 'patch', 'delete']);

/** What the injector needs to know of a request. */
export interface FaultableRequest {
  verb: RequestVerb;
  username: string;
  group: string;
  resource: string;
  name: string;
  /** A watch or list that resumes from a resourceVersion or continue token (the only ones that can be 410). */
  resumes: boolean;
}

/**
 * A fault to answer with: an error Status in place of serving the request; a watch to cut after
 * `afterMs`; or, after the write is served and stored, its answer replaced by `error` (or by a cut
 * connection, when `error` is undefined).
 */
export type FaultDecision =
  | { kind: 'conflict' | 'throttle' | 'internal' | 'gone'; error: ApiError; watchEvent: boolean }
  | { kind: 'dropWatch'; afterMs: number }
  | { kind: 'internalAfterWrite'; afterWrite: true; error: ApiError }
  | { kind: 'cutAfterWrite'; afterWrite: true; error: undefined };

/** The seconds a 429 asks the client to wait, as APF's default. */
const RETRY_AFTER_SECONDS = 1;

/** The sandbox admin is never faulted unless named: the test driving the run must see the truth. */
const ADMIN = 'k8or-sandbox-admin';

function kindsApplicable(request: FaultableRequest): ApiFaultKind[] {
  const kinds: ApiFaultKind[] = ['throttle', 'internal'];
  if (request.verb === 'update' || request.verb === 'patch') kinds.push('conflict');
  if (WRITES.has(request.verb)) kinds.push('internalAfterWrite', 'cutAfterWrite');
  if (request.verb === 'watch') kinds.push('dropWatch');
  if ((request.verb === 'watch' || request.verb === 'list') && request.resumes) kinds.push('gone');
  return kinds;
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function checkOptions(options: ApiFaultOptions): void {
  if (!(options.rate >= 0 && options.rate <= 1)) throw new RangeError(`faults.rate must be a number from 0 to 1, got ${String(options.rate)}`);
  for (const kind of options.kinds ?? []) {
    if (!API_FAULT_KINDS.includes(kind)) throw new RangeError(`faults.kinds: "${String(kind)}" is not one of ${API_FAULT_KINDS.join(', ')}`);
  }
  if (options.seed !== undefined && !Number.isInteger(options.seed)) throw new RangeError(`faults.seed must be an integer, got ${String(options.seed)}`);
}

export class FaultInjector implements ApiFaults {
  #options: ApiFaultOptions;
  #random: () => number;
  #enabled: boolean;
  readonly injected: Record<ApiFaultKind, number> = { conflict: 0, throttle: 0, internal: 0, gone: 0, dropWatch: 0, internalAfterWrite: 0, cutAfterWrite: 0 };

  constructor(options: ApiFaultOptions = { rate: 0 }) {
    checkOptions(options);
    this.#options = { ...options };
    this.#random = mulberry32(options.seed ?? 1);
    this.#enabled = options.enabled ?? options.rate > 0;
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  get options(): Readonly<ApiFaultOptions> {
    return this.#options;
  }

  enable(): void {
    this.#enabled = true;
  }

  disable(): void {
    this.#enabled = false;
  }

  configure(options: Partial<ApiFaultOptions>): void {
    const next = { ...this.#options, ...options };
    checkOptions(next);
    this.#options = next;
    if (options.seed !== undefined) this.#random = mulberry32(options.seed);
    if (options.enabled !== undefined) this.#enabled = options.enabled;
  }

  get total(): number {
    return Object.values(this.injected).reduce((a, b) => a + b, 0);
  }

  /** The fault for this request, or undefined to serve it as usual. */
  decide(request: FaultableRequest): FaultDecision | undefined {
    if (!this.#enabled || this.#options.rate <= 0) return undefined;
    const users = this.#options.users;
    if (users ? !users.includes(request.username) : request.username === ADMIN) return undefined;
    const wanted = this.#options.kinds ?? API_FAULT_KINDS;
    const kinds = kindsApplicable(request).filter((k) => wanted.includes(k));
    if (kinds.length === 0) return undefined;
    if (this.#random() >= this.#options.rate) return undefined;
    const kind = kinds[Math.floor(this.#random() * kinds.length)]!;
    this.injected[kind]++;
    const what = qualifiedResource(request.group, request.resource);
    switch (kind) {
      case 'dropWatch':
        return { kind, afterMs: 50 + Math.floor(this.#random() * 2_000) };
      case 'conflict':
        return { kind, error: conflict(request.group, request.resource, request.name, 'the object has been modified; please apply your changes to the latest version and try again'), watchEvent: false };
      case 'throttle':
        return { kind, error: new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: RETRY_AFTER_SECONDS }), watchEvent: false };
      case 'internal':
        return { kind, error: new ApiError(500, 'InternalError', `Internal error occurred: injected fault serving ${what}`, { causes: [{ message: 'injected fault' }] }), watchEvent: false };
      case 'internalAfterWrite':
        // kube-apiserver's answer when etcd took the write but did not confirm it in time
        return { kind, afterWrite: true, error: new ApiError(500, 'InternalError', `Internal error occurred: etcdserver: request timed out (injected fault after storing ${what})`, { causes: [{ message: 'etcdserver: request timed out' }] }) };
      case 'cutAfterWrite':
        return { kind, afterWrite: true, error: undefined };
      case 'gone':
        return request.verb === 'watch'
          ? { kind, error: gone('too old resource version: injected fault (the history was compacted)'), watchEvent: true }
          : { kind, error: gone('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.'), watchEvent: false };
    }
  }
}

/** The Retry-After header a 429 goes with. */
export function retryAfterHeader(decision: FaultDecision): Record<string, string> {
  return decision.kind === 'throttle' ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : {};
}
