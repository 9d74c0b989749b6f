// The conformance kit catches a provider that creates twice, whatever its
// cloud calls the create operation, one whose observe or probe takes an error
// for absence, one whose delete removes a protection, and one that reports a URL
// carrying credentials: the kit is run in a child process on a provider that breaks the
// rule, and that case must fail; and one whose resources hold no evidence without saying so.
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { it } from 'node:test';

/** The kit's case `name` on the provider of `fixture`, in a child process: its TAP output when it failed, undefined when it passed. */
async function failureOf(fixture: string, name: string): Promise<string | undefined> {
  // A test runner of its own: without NODE_TEST_CONTEXT the child reports to us as TAP, not to our runner.
  const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
  const path = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  const run = promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', `--test-name-pattern=${name.replace(/[()]/g, '.')}`, path], { timeout: 120_000, env });
  return await run.then(
    () => undefined,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
}

it('fails a provider that creates a second time after a crash, under any operation name', async () => {
  const CASE = 'a crash between create and its marker ends with exactly one resource, and no leak';
  const failed = await failureOf('conformance-creates-twice.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed a provider that creates twice');
  assert.match(failed, new RegExp(`not ok \\d+ - ${CASE}`));
  assert.match(failed, /no second create/);
});

it('fails a provider whose probe takes a denial or a timeout for absence', async () => {
  const CASE = 'a denied or timed-out probe throws what observe throws, never absence';
  const failed = await failureOf('conformance-probe-swallows-errors.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed a probe that says "gone" when the cloud refused to answer');
  assert.match(failed, new RegExp(`not ok \\d+ - ${CASE}`));
  assert.match(failed, /access denied: probe answers what observe answers/);
});

it('fails a provider whose observe takes access denied for absence', async () => {
  const CASE = 'access denied on observe is an error, never absence: nothing is created again and nothing is lost';
  const failed = await failureOf('conformance-observe-denied-is-absence.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed an observe that says "not found" when the cloud refused to answer');
  assert.match(failed, new RegExp(`not ok \\d+ - ${CASE}`));
  assert.match(failed, /a denied observe throws, never reports absence/);
});

it('fails a provider whose delete turns a protection off to get through', async () => {
  const CASE = 'protection never lowered: a protection set out of band is reported, kept by a resync, and never removed by a delete';
  const failed = await failureOf('conformance-delete-unlocks.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed a delete that removes a protection');
  assert.match(failed, /DeletionBlockedError/);
});

it('fails a provider that reports a URL with credentials in its query string', async () => {
  const CASE = 'no credential in any URL or id it reports: atProvider, identity, target, status and Events';
  const failed = await failureOf('conformance-url-leaks-secret.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed a URL carrying a signature');
  assert.match(failed, /query string|credential value|signed query/);
});

it('fails a provider whose resources hold no evidence of whose they are, and whose client does not say so', async () => {
  const CASE = 'evidence or its absence declared: a resource it creates carries owner tags or an identity, else its client says before the create that it cannot';
  const failed = await failureOf('conformance-evidence-undeclared.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed a client that makes resources it can never prove its own without saying so');
  assert.match(failed, new RegExp(`not ok \\d+ - ${CASE}`));
  assert.match(failed, /the client must say so \(identityUnavailable\)/);
});

it('passes a provider that reports the owner tags a released resource lacks as ownerTags diff entries', async () => {
  const CASE = 'release: Retain removes our owner tags and nothing else, so another cluster can adopt the resource';
  assert.equal(await failureOf('conformance-release-diffs-owner-tags.ts', CASE), undefined, 'the missing owner tags of a released resource are not a change');
});

it('fails a provider whose release changes more than the owner tags', async () => {
  const CASE = 'release: Retain removes our owner tags and nothing else, so another cluster can adopt the resource';
  const failed = await failureOf('conformance-release-changes-more.ts', CASE);
  assert.ok(failed !== undefined, 'the kit passed a release that turns versioning off');
  assert.match(failed, /nothing but the owner tags changed/);
});

it('passes a provider on a backend without tags, whose probe proves ownership by identity', async () => {
  const CASE = "probe answers as observe does on existence and owner tags: a free name, our resource, another owner's";
  assert.equal(await failureOf('conformance-probe-identity-only.ts', CASE), undefined, 'the probe reports the identity observe reports, and it proves our resource ours');
});

it('passes (skipping) the release case on a kind without tags, and leaves nothing behind', async () => {
  const CASE = 'release: Retain removes our owner tags and nothing else, so another cluster can adopt the resource';
  assert.equal(await failureOf('conformance-release-tagless.ts', CASE), undefined, 'a kind without tags has nothing to release');
});
