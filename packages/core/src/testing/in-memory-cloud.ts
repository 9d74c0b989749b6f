import type { KeyAttribute, ManagedKindName, TableBilling } from '@k8or/api';
import { TerminalError } from '../provider/errors.js';

/** A bucket in the in-memory cloud. Tests may change fields directly to simulate drift. */
export interface CloudBucket {
  name: string;
  location: string;
  versioning: boolean;
  /** Cloud tags, owner tags included. */
  tags: Record<string, string>;
  /** User labels from spec.labels. */
  labels: Record<string, string>;
  /** How many objects it holds; a non-empty bucket cannot be deleted without forceDelete. */
  objects: number;
  createdTime: string;
  /** The cloud's own id, new for every bucket made (`InMemoryCloud.newId`); part of its reported identity. */
  uid?: string;
  /** A locked retention policy (no spec field): while set, the cloud refuses to delete the bucket. */
  retentionLocked?: boolean;
}

/** A table in the in-memory cloud. */
export interface CloudTable {
  name: string;
  location: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  billing: TableBilling;
  ttlAttribute?: string;
  pointInTimeRecovery: boolean;
  tags: Record<string, string>;
  labels: Record<string, string>;
  itemCount: number;
  createdTime: string;
  /** The cloud's own id, new for every table made (`InMemoryCloud.newId`); part of its reported identity. */
  uid?: string;
  /** Deletion protection: while on, the cloud refuses to delete the table. */
  deletionProtection?: boolean;
  /** `CREATING` for the first observes after create (see InMemoryCloudOptions.observesUntilActive), then `ACTIVE`. */
  state: 'CREATING' | 'ACTIVE';
  observesLeft: number;
}

export type CloudOperation = 'observe' | 'probe' | 'create' | 'update' | 'delete' | 'release';

/** One call made to the cloud, in order. */
export interface CloudCall {
  kind: ManagedKindName;
  operation: CloudOperation;
  name: string;
  /** Milliseconds since the epoch. */
  at: number;
  outcome: 'ok' | 'error' | 'crashed';
  /** The credentials (decoded Secret data) the call was made with. */
  credentials?: Readonly<Record<string, string>> | undefined;
  /** Who made it (InMemoryProviderOptions.caller): tells two engines over one cloud apart. */
  caller?: string | undefined;
}

export interface CallMatch {
  kind?: ManagedKindName;
  operation?: CloudOperation;
  name?: string;
}

/**
 * Where a simulated process death can strike: just before the create call
 * reaches the cloud, or just after the cloud made the resource (before the
 * engine hears back).
 */
export type CrashPoint = 'before-create' | 'after-create';

interface Failure {
  match: CallMatch;
  error: () => Error;
  remaining: number;
}

interface Crash {
  point: CrashPoint;
  match: CallMatch;
  onCrash: () => void;
}

export interface InMemoryCloudOptions {
  /** How many observes a new table stays CREATING before it turns ACTIVE. Default 0. */
  observesUntilActive?: number;
  /** Which credentials the cloud accepts; others get AccessDenied (a TerminalError). Default: any. */
  acceptCredentials?: (credentials: Readonly<Record<string, string>> | undefined) => boolean;
  now?: () => Date;
}

const matches = (match: CallMatch, kind: ManagedKindName, operation: CloudOperation, name: string): boolean =>
  (match.kind === undefined || match.kind === kind) &&
  (match.operation === undefined || match.operation === operation) &&
  (match.name === undefined || match.name === name);

/**
 * A cloud held in memory, for engine tests and benchmarks: buckets and tables
 * with tags, a log of every call, injectable errors (throttling, terminal),
 * and crash points that stop a worker dead mid-create.
 */
export class InMemoryCloud {
  readonly buckets = new Map<string, CloudBucket>();
  readonly tables = new Map<string, CloudTable>();
  /** Every call, in order. */
  readonly calls: CloudCall[] = [];
  /** Credentials (decoded Secret data) handed to the last connect. */
  lastCredentials: Readonly<Record<string, string>> | undefined;
  readonly observesUntilActive: number;
  readonly #now: () => Date;
  readonly #acceptCredentials: (credentials: Readonly<Record<string, string>> | undefined) => boolean;
  #failures: Failure[] = [];
  #crashes: Crash[] = [];
  #ids = 0;
  #hooks: ((call: CloudCall, signal: AbortSignal | undefined) => void | Promise<void>)[] = [];

  constructor(options: InMemoryCloudOptions = {}) {
    this.observesUntilActive = options.observesUntilActive ?? 0;
    this.#now = options.now ?? (() => new Date());
    this.#acceptCredentials = options.acceptCredentials ?? (() => true);
  }

  /** Calls matching `match`, optionally only those at or after `sinceMs`. */
  callCount(match: CallMatch = {}, sinceMs = 0): number {
    return this.calls.filter((c) => c.at >= sinceMs && matches(match, c.kind, c.operation, c.name)).length;
  }

  /**
   * Makes matching calls throw `error` (a fresh one per call when a factory),
   * `times` times (default: until cleared). Returns a function that clears it.
   */
  failWith(match: CallMatch, error: Error | (() => Error), times = Number.POSITIVE_INFINITY): () => void {
    const failure: Failure = { match, error: typeof error === 'function' ? error : () => error, remaining: times };
    this.#failures.push(failure);
    return () => {
      this.#failures = this.#failures.filter((f) => f !== failure);
    };
  }

  clearFailures(): void {
    this.#failures = [];
  }

  /**
   * At the next matching create, reach `point`, call `onCrash` (the test stops
   * the engine there, as if the process died) and never return: the worker
   * hangs forever, so nothing it would have done next ever happens.
   */
  crashAt(point: CrashPoint, onCrash: () => void, match: CallMatch = {}): void {
    this.#crashes.push({ point, match, onCrash });
  }

  /**
   * Runs `hook` at the start of every call (after it is logged, before it
   * acts), with the call's abort signal: a hook that waits stands for a slow
   * cloud call, and the call fails if its signal aborted meanwhile.
   */
  onCall(hook: (call: CloudCall, signal: AbortSignal | undefined) => void | Promise<void>): () => void {
    this.#hooks.push(hook);
    return () => {
      this.#hooks = this.#hooks.filter((h) => h !== hook);
    };
  }

  /**
   * @internal Logs a call, runs hooks and injected failures. Used by the
   * in-memory provider. An aborted signal (before or during the hooks) fails
   * the call before it acts, as an SDK call given `abortSignal` would.
   */
  async enter(
    kind: ManagedKindName,
    operation: CloudOperation,
    name: string,
    options: { signal?: AbortSignal; credentials?: Readonly<Record<string, string>> | undefined; caller?: string | undefined } = {},
  ): Promise<CloudCall> {
    const call: CloudCall = { kind, operation, name, at: Date.now(), outcome: 'ok', credentials: options.credentials, caller: options.caller };
    this.calls.push(call);
    for (const hook of this.#hooks) await hook(call, options.signal);
    if (options.signal?.aborted) {
      call.outcome = 'error';
      options.signal.throwIfAborted();
    }
    if (!this.#acceptCredentials(options.credentials)) {
      call.outcome = 'error';
      throw new TerminalError(`access denied to ${kind} "${name}"`, { code: 'AccessDenied' });
    }
    const failure = this.#failures.find((f) => f.remaining > 0 && matches(f.match, kind, operation, name));
    if (failure) {
      failure.remaining -= 1;
      call.outcome = 'error';
      throw failure.error();
    }
    return call;
  }

  /** @internal Stops dead at a crash point when one is armed for this call. */
  async crashPoint(point: CrashPoint, call: CloudCall): Promise<void> {
    const crash = this.#crashes.find((c) => c.point === point && matches(c.match, call.kind, 'create', call.name));
    if (!crash) return;
    this.#crashes = this.#crashes.filter((c) => c !== crash);
    call.outcome = 'crashed';
    crash.onCrash();
    await new Promise<never>(() => {});
  }

  timestamp(): string {
    return this.#now().toISOString();
  }

  /** A fresh id for a resource being made (a TableId, say): never the same twice in this cloud. */
  newId(): string {
    this.#ids += 1;
    return `mem-${this.#ids.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  }
}
