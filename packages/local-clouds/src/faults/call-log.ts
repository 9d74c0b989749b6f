import type { FaultDraws, FaultPlan } from './fault-draws.js';

/** The one thing the log reads of a call: the resource it is about (`''` for account-level calls). */
export interface LoggedCall {
  resource: string;
}

/**
 * The part every fault proxy (HTTP and gRPC) shows of itself: its seed, the calls it saw, and the
 * fault plan it draws from. A proxy is this log with its endpoint and `stop` added
 * (`Object.assign(log, { endpoint, stop })`), so `calls` stays a getter of the live list: a spread
 * (`{ ...log }`) would copy the list as it was. Members are arrow functions, so a proxy's methods
 * work when taken off it (`const { callsFor } = proxy`).
 */
export class CallLog<C extends LoggedCall> {
  #calls: C[] = [];
  readonly #draws: FaultDraws;

  constructor(draws: FaultDraws) {
    this.#draws = draws;
  }

  /** Seed of the fault draws. */
  get seed(): number {
    return this.#draws.seed;
  }

  /** Every call so far, in arrival order. */
  get calls(): readonly C[] {
    return this.#calls;
  }

  /** Adds one call (its record, which the proxy goes on filling in as the call proceeds). */
  readonly record = (call: C): C => {
    this.#calls.push(call);
    return call;
  };

  /** The calls about one resource. */
  readonly callsFor = (resource: string): C[] => this.#calls.filter((call) => call.resource === resource);

  /** Replaces the fault plan from the next call on (`{}` turns faults off). */
  readonly setFaults = (plan: FaultPlan): void => this.#draws.setFaults(plan);

  /** Forgets the calls recorded so far. */
  readonly clearCalls = (): void => {
    this.#calls = [];
  };
}
