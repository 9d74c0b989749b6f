import type { PipelinePolicy } from './retry-tokens.js';

/** HTTP attempts sent per SDK request so far; the SDK's retry policy sends one request object again and again. */
const attempts = new WeakMap<object, number>();

/**
 * A pipeline policy after the SDK's retry policy (once per HTTP attempt) that counts the attempts of each
 * request, so a call can tell whether its answer came from a retry: an earlier attempt (a stall given up,
 * a 5xx) may have acted before it, and "already exists" after one is no refusal.
 */
export const attemptCountPolicy: PipelinePolicy = {
  name: 'k8orAttemptCountPolicy',
  async sendRequest(request, next) {
    attempts.set(request, (attempts.get(request) ?? 0) + 1);
    return await next(request);
  },
};

/** The attempts the SDK sent for `request`; undefined when they were not counted (then nothing rules out a retry). */
export function attemptsOf(request: object | undefined): number | undefined {
  return request ? attempts.get(request) : undefined;
}
