/**
 * Exponential backoff with jitter for reconnects: `initialMs * 2^n`, capped at
 * `maxMs`, each delay stretched by a random factor in [1, 1 + jitter) and then
 * capped again, so many clients that lost the same server do not return in step.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs = 200,
    private readonly maxMs = 30_000,
    private readonly jitter = 1,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const base = Math.min(this.initialMs * 2 ** this.attempt, this.maxMs);
    this.attempt = Math.min(this.attempt + 1, 64);
    return Math.min(base * (1 + this.jitter * this.random()), this.maxMs);
  }

  reset(): void {
    this.attempt = 0;
  }
}
