import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

/** Runs `body` (an ES module) in a node process of its own and returns what it printed, as JSON. */
function inFreshProcess(body: string): unknown {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', body], { cwd: import.meta.dirname, encoding: 'utf8' });
  return JSON.parse(out);
}

// What the operator's process loads and never uses costs resident memory in every replica
// (docs/benchmarks.md, "Operator process at scale"); these are the two found so far.
describe("the operator process's footprint", () => {
  it("loading the operator, the webhook, core and a provider's SDK-bound modules does not load node's undici", () => {
    const loaded = inFreshProcess(`
      await import('@k8or/operator');
      await import('@k8or/webhook');
      const core = await import('@k8or/core');
      await import('@k8or/provider-aws');
      const server = await core.startProbeServer({ port: 0, host: '127.0.0.1', health: new core.HealthChecks() });
      await server.close();
      console.log(JSON.stringify(process.moduleLoadList.filter((name) => name.includes('undici'))));
    `);
    // An ESM import of node:http reads its lazy WebSocket export, which loads undici: 3 to 4 MiB.
    assert.deepEqual(loaded, []);
  });

  it('comparing two statuses does not order their conditions with ICU collation', () => {
    const calls = inFreshProcess(`
      let calls = 0;
      const localeCompare = String.prototype.localeCompare;
      String.prototype.localeCompare = function (...args) { calls++; return localeCompare.apply(this, args); };
      const { statusEqual } = await import('@k8or/core');
      const ready = { type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2026-01-01T00:00:00Z' };
      const synced = { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', lastTransitionTime: '2026-01-01T00:00:00Z' };
      const equal = statusEqual({ conditions: [ready, synced] }, { conditions: [synced, ready] });
      console.log(JSON.stringify({ equal, calls }));
    `);
    // localeCompare loads ICU's collation data, 2 MiB resident, for a few ASCII condition types.
    assert.deepEqual(calls, { equal: true, calls: 0 });
  });
});
