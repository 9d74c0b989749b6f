import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/k8or.js', import.meta.url));

/**
 * Runs `k8or ...args` and resolves with its exit code and stderr. The deadline only catches a hang:
 * on a loaded CI machine one start of the CLI has taken over 30 s.
 */
function k8or(...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { timeout: 120_000 }, (error, _stdout, stderr) => {
      // execFile puts the exit code in error.code.
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr });
    });
  });
}

describe('k8or: bad arguments are refused with the option and the rule, before anything starts', () => {
  const cases: [string[], RegExp][] = [
    [['sandbox', '--port', 'abc'], /--port must be a whole number from 0 to 65535, got "abc"/],
    [['sandbox', '--port', '70000'], /--port must be a whole number from 0 to 65535, got "70000"/],
    [['sandbox', '--port', ''], /--port must be a whole number from 0 to 65535, got ""/],
    [['sandbox', '--log-level', 'loud'], /--log-level must be one of trace, debug, info, warn, error, fatal, silent, got "loud"/],
    [['sandbox', '--bogus'], /k8or sandbox: Unknown option '--bogus'/],
    [['sandbox', '--resync-period', '5s'], /--resync-period must be a Go duration of at least 10s, such as 30s or 5m, got "5s"/],
    [['sandbox', '--resync-period', 'soon'], /--resync-period must be a Go duration of at least 10s/],
    [['frob'], /unknown command 'frob'/],
  ];
  for (const [args, message] of cases) {
    it(`k8or ${args.join(' ')}`, async () => {
      const { code, stderr } = await k8or(...args);
      assert.equal(code, 2);
      assert.match(stderr, message);
    });
  }
});
