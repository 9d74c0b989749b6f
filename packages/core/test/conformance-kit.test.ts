// The conformance kit catches a provider that creates twice, whatever its
// cloud calls the create operation: the kit is run in a child process on a
// provider that breaks the rule, and that case must fail.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { it } from 'node:test';

const fixture = fileURLToPath(new URL('./fixtures/conformance-creates-twice.ts', import.meta.url));
const CASE = 'a crash between create and its marker ends with exactly one resource, and no leak';

it('fails a provider that creates a second time after a crash, under any operation name', async () => {
  // A test runner of its own: without NODE_TEST_CONTEXT the child reports to us as TAP, not to our runner.
  const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
  const run = promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', `--test-name-pattern=${CASE}`, fixture], { timeout: 120_000, env });
  const failed = await run.then(
    () => undefined,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  assert.ok(failed !== undefined, 'the kit passed a provider that creates twice');
  assert.match(failed, new RegExp(`not ok \\d+ - ${CASE}`));
  assert.match(failed, /no second create/);
});
