import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { KUBECTL_VERSIONS, crdManifests, kubectl, kubectlOk, prepareKubectl, startTestWebhook, waitFor, type KubectlEnvironment, type TestWebhook } from './kubectl-helpers.ts';

// The namespace controller and the garbage collector delete through the API, as kube-apiserver's do,
// so a validating webhook that refuses a DELETE holds the object, and the namespace stays Terminating
// and says why. Driven by real kubectl against a real ValidatingWebhookConfiguration.

const PROTECT = 'k8or.io/protect';

interface Condition { type: string; status: string; reason?: string; message?: string }
interface Reviewed { operation: string; name?: string; namespace?: string; userInfo?: { username?: string } }

const bucket = (name: string, namespace: string, metadata: Record<string, unknown> = {}): string =>
  JSON.stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace, ...metadata }, spec: { location: 'eu-west-1' } });

const version = KUBECTL_VERSIONS[KUBECTL_VERSIONS.length - 1] ?? '1.35';

describe(`deletes the server makes on its own go through admission (kubectl ${version})`, () => {
  let sandbox: Sandbox;
  let home: string;
  let env: KubectlEnvironment;
  let webhook: TestWebhook;

  before(async () => {
    await prepareKubectl(version);
    home = await mkdtemp(join(tmpdir(), 'k8or-controller-admission-'));
    sandbox = await startSandbox({ kubeconfigPath: join(home, 'kubeconfig') });
    env = { version, kubeconfigPath: join(home, 'kubeconfig'), home };
    await kubectlOk(env, ['apply', '-f', '-'], await crdManifests());
    // the webhook for protected objects: a DELETE of one annotated k8or.io/protect is refused
    webhook = await startTestWebhook((request) => {
      const old = request.oldObject as { metadata?: { annotations?: Record<string, string> } } | undefined;
      if (request.operation === 'DELETE' && old?.metadata?.annotations?.[PROTECT] === 'true') {
        return { allowed: false, message: `Bucket "${request.name ?? ''}" is protected from deletion` };
      }
      return { allowed: true };
    });
    const configuration = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'protect' },
      webhooks: [
        {
          name: 'protect.k8or.test',
          clientConfig: { url: webhook.url, caBundle: Buffer.from(webhook.caPem).toString('base64') },
          rules: [{ apiGroups: ['k8or.io'], apiVersions: ['v1alpha1'], operations: ['DELETE'], resources: ['buckets'], scope: 'Namespaced' }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
        },
      ],
    };
    await kubectlOk(env, ['apply', '-f', '-'], JSON.stringify(configuration));
  });

  after(async () => {
    await webhook?.close();
    await sandbox?.stop();
    await rm(home, { recursive: true, force: true });
  });

  const exists = async (args: string[]): Promise<boolean> => {
    const result = await kubectl(env, ['get', ...args, '-o', 'name']);
    if (result.code === 0) return true;
    assert.match(result.stderr, /NotFound/, `kubectl get ${args.join(' ')}: ${result.stderr}`);
    return false;
  };

  it('kubectl delete namespace leaves a protected Bucket, and the namespace Terminating with NamespaceDeletionContentFailure', async () => {
    await kubectlOk(env, ['create', 'namespace', 'shop']);
    await kubectlOk(env, ['apply', '-f', '-'], bucket('ledger', 'shop', { annotations: { [PROTECT]: 'true' } }));
    await kubectlOk(env, ['apply', '-f', '-'], bucket('scratch', 'shop'));

    await kubectlOk(env, ['delete', 'namespace', 'shop', '--wait=false']);

    const conditions = await waitFor(
      async () => {
        const ns = JSON.parse(await kubectlOk(env, ['get', 'namespace', 'shop', '-o', 'json'])) as { status?: { phase?: string; conditions?: Condition[] } };
        const failure = ns.status?.conditions?.find((c) => c.type === 'NamespaceDeletionContentFailure');
        return failure?.status === 'True' ? { phase: ns.status?.phase, all: ns.status?.conditions ?? [] } : undefined;
      },
      60_000,
      () => 'the namespace to report NamespaceDeletionContentFailure',
    );
    assert.equal(conditions.phase, 'Terminating');
    const failure = conditions.all.find((c) => c.type === 'NamespaceDeletionContentFailure');
    assert.equal(failure?.reason, 'ContentDeletionFailed');
    assert.equal(
      failure?.message,
      'Failed to delete all resource types, 1 remaining: admission webhook "protect.k8or.test" denied the request: Bucket "ledger" is protected from deletion',
    );
    const remaining = conditions.all.find((c) => c.type === 'NamespaceContentRemaining');
    assert.deepEqual({ status: remaining?.status, reason: remaining?.reason, message: remaining?.message }, {
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: buckets.k8or.io has 1 resource instances',
    });

    assert.equal(await exists(['bucket', 'ledger', '-n', 'shop']), true, 'the protected Bucket was deleted');
    await waitFor(async () => ((await exists(['bucket', 'scratch', '-n', 'shop'])) ? undefined : true), 30_000, () => 'the unprotected Bucket to go');
    const reviewed = (webhook.requests as Reviewed[]).find((r) => r.operation === 'DELETE' && r.name === 'ledger');
    assert.equal(reviewed?.namespace, 'shop');
    assert.equal(reviewed?.userInfo?.username, 'system:serviceaccount:kube-system:namespace-controller');

    // the namespace stays while the Bucket is protected, and goes once the protection is lifted
    assert.equal(await exists(['namespace', 'shop']), true);
    await kubectlOk(env, ['annotate', 'bucket', 'ledger', '-n', 'shop', `${PROTECT}-`]);
    await waitFor(async () => ((await exists(['namespace', 'shop'])) ? undefined : true), 60_000, () => 'the namespace to go once the Bucket is unprotected');
  });

  it('the garbage collector leaves a protected dependent whose owner is deleted, and deletes it once unprotected', async () => {
    await kubectlOk(env, ['create', 'configmap', 'owner', '-n', 'default']);
    const owner = JSON.parse(await kubectlOk(env, ['get', 'configmap', 'owner', '-n', 'default', '-o', 'json'])) as { metadata: { uid: string } };
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }];
    await kubectlOk(env, ['apply', '-f', '-'], bucket('kept', 'default', { annotations: { [PROTECT]: 'true' }, ownerReferences }));
    await kubectlOk(env, ['apply', '-f', '-'], bucket('collected', 'default', { ownerReferences }));

    await kubectlOk(env, ['delete', 'configmap', 'owner', '-n', 'default']);

    await waitFor(async () => ((await exists(['bucket', 'collected', '-n', 'default'])) ? undefined : true), 30_000, () => 'the unprotected dependent to be collected');
    const reviewed = await waitFor(
      () => (webhook.requests as Reviewed[]).find((r) => r.operation === 'DELETE' && r.name === 'kept'),
      30_000,
      () => 'the garbage collector to ask the webhook about the protected dependent',
    );
    assert.equal(reviewed.userInfo?.username, 'system:serviceaccount:kube-system:generic-garbage-collector');
    assert.equal(await exists(['bucket', 'kept', '-n', 'default']), true, 'the protected dependent was deleted');

    await kubectlOk(env, ['annotate', 'bucket', 'kept', '-n', 'default', `${PROTECT}-`]);
    await waitFor(async () => ((await exists(['bucket', 'kept', '-n', 'default'])) ? undefined : true), 60_000, () => 'the dependent to be collected once unprotected');
  });
});
