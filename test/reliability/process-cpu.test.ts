// The takeover bench charges the CPU of a relabel to the API server, each replica and the machine
// from the kernel's accounting: the readings must be this process's and the machine's CPU time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { machineBusySeconds, processCpuSeconds } from './support/process-cpu.ts';

describe('CPU time read from /proc', () => {
  it('is this process\'s own CPU time, as node counts it, and the machine\'s grows with it', { skip: process.platform !== 'linux' && 'reads /proc, which only Linux has' }, async () => {
    const [machineBefore, mineBefore] = [await machineBusySeconds(), await processCpuSeconds(process.pid)];
    const nodeBefore = process.cpuUsage();
    // Busy until the kernel has counted at least half a second more of this process (its ticks are 10 ms).
    while ((await processCpuSeconds(process.pid)) - mineBefore < 0.5) for (let i = 0; i < 1e6; i++) Math.sqrt(i);
    const [machineAfter, mineAfter] = [await machineBusySeconds(), await processCpuSeconds(process.pid)];
    const node = process.cpuUsage(nodeBefore);
    const spent = mineAfter - mineBefore;
    assert.ok(Math.abs(spent - (node.user + node.system) / 1e6) < 0.1, `the kernel's ${spent} s against node's ${(node.user + node.system) / 1e6} s`);
    // The machine's figure is sampled a tick at a time on each core, a process's is not: over half a second they may differ by a few ticks.
    assert.ok(machineAfter - machineBefore >= spent / 2, `the machine's busy time (${machineAfter - machineBefore} s) grew with this process's (${spent} s)`);
  });

  it('fails for a process that is not there', { skip: process.platform !== 'linux' && 'reads /proc, which only Linux has' }, async () => {
    await assert.rejects(processCpuSeconds(2 ** 22 + 1), /ENOENT/);
  });
});
