import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { KUBECTL_VERSIONS, crdManifests, kubectl, kubectlOk, prepareKubectl, pythonWithKubernetes, type KubectlEnvironment } from './kubectl-helpers.ts';
import { request } from './helpers.ts';

// Impersonation as kube-apiserver does it (`kubectl --as`, `--as-group`, `--as-uid`): the request runs
// as the named user once RBAC allows the `impersonate` verb on each part, and is refused with 403
// otherwise; never ignored. Driven by real kubectl, raw HTTP for the headers kubectl has no flag
// for, and the Python kubernetes client where it is installed.

const NOBODY = 'system:serviceaccount:default:nobody';

// A ServiceAccount that may impersonate the user jane and ServiceAccounts in team-a, and nothing else.
const impersonatorRbac = `
apiVersion: v1
kind: Namespace
metadata: { name: team-a }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: impersonator, namespace: default }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: impersonate-jane }
rules:
  - apiGroups: [""]
    resources: [users]
    resourceNames: [jane]
    verbs: [impersonate]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: impersonator-jane }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-jane }
subjects: [{ kind: ServiceAccount, name: impersonator, namespace: default }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: impersonate-accounts, namespace: team-a }
rules:
  - apiGroups: [""]
    resources: [serviceaccounts]
    verbs: [impersonate]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: impersonator-accounts, namespace: team-a }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: impersonate-accounts }
subjects: [{ kind: ServiceAccount, name: impersonator, namespace: default }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: read-configmaps, namespace: team-a }
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: jane-reads, namespace: team-a }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: read-configmaps }
subjects: [{ kind: User, name: jane, apiGroup: rbac.authorization.k8s.io }]
`;

interface WhoAmI { status: { userInfo: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } } }

for (const version of KUBECTL_VERSIONS) {
  describe(`impersonation with kubectl ${version}`, () => {
    let sandbox: Sandbox;
    let home: string;
    let env: KubectlEnvironment;
    let impersonatorToken: string;

    before(async () => {
      await prepareKubectl(version);
      home = await mkdtemp(join(tmpdir(), `k8or-impersonation-${version}-`));
      sandbox = await startSandbox({ kubeconfigPath: join(home, 'kubeconfig') });
      env = { version, kubeconfigPath: join(home, 'kubeconfig'), home };
      await kubectlOk(env, ['apply', '-f', '-'], await crdManifests());
      await kubectlOk(env, ['apply', '-f', '-'], impersonatorRbac);
      impersonatorToken = (await kubectlOk(env, ['create', 'token', 'impersonator', '-n', 'default'])).trim();
    });

    after(async () => {
      await sandbox?.stop();
      await rm(home, { recursive: true, force: true });
    });

    it('auth can-i answers for the impersonated ServiceAccount, not the admin', async () => {
      assert.equal(await kubectlOk(env, ['auth', 'can-i', 'create', 'buckets']), 'yes\n');
      const asNobody = await kubectl(env, ['auth', 'can-i', 'create', 'buckets', `--as=${NOBODY}`]);
      assert.deepEqual({ code: asNobody.code, stdout: asNobody.stdout }, { code: 1, stdout: 'no\n' });
    });

    it('auth whoami names the impersonated user, with the groups kube-apiserver gives it', async () => {
      const nobody = JSON.parse(await kubectlOk(env, ['auth', 'whoami', `--as=${NOBODY}`, '-o', 'json'])) as WhoAmI;
      assert.deepEqual({ ...nobody.status.userInfo }, { username: NOBODY, groups: ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated'] });

      const jane = JSON.parse(await kubectlOk(env, ['auth', 'whoami', '--as=jane', '--as-group=devs', '--as-uid=1234', '-o', 'json'])) as WhoAmI;
      assert.deepEqual({ ...jane.status.userInfo }, { username: 'jane', uid: '1234', groups: ['devs', 'system:authenticated'] });
    });

    it('the request runs as the impersonated user: its RBAC decides', async () => {
      await kubectlOk(env, ['create', 'configmap', 'settings', '-n', 'team-a']);
      assert.equal(await kubectlOk(env, ['get', 'configmap', 'settings', '-n', 'team-a', '--as=jane', '-o', 'name']), 'configmap/settings\n');
      const write = await kubectl(env, ['delete', 'configmap', 'settings', '-n', 'team-a', '--as=jane']);
      assert.equal(write.code, 1);
      assert.equal(write.stderr, 'Error from server (Forbidden): configmaps "settings" is forbidden: User "jane" cannot delete resource "configmaps" in API group "" in the namespace "team-a"\n');
    });

    // (kubectl auth whoami words every 403 as its own "not enabled" error, so refusals are shown with get)
    it('refuses with 403 what RBAC does not allow the requester to impersonate', async () => {
      const as = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> => kubectl(env, [`--token=${impersonatorToken}`, ...args]);

      const jane = JSON.parse((await as(['auth', 'whoami', '--as=jane', '-o', 'json'])).stdout) as WhoAmI;
      assert.equal(jane.status.userInfo.username, 'jane');
      const account = JSON.parse((await as(['auth', 'whoami', '--as=system:serviceaccount:team-a:builder', '-o', 'json'])).stdout) as WhoAmI;
      assert.equal(account.status.userInfo.username, 'system:serviceaccount:team-a:builder');

      const bob = await as(['get', 'configmaps', '-n', 'team-a', '--as=bob']);
      assert.equal(bob.code, 1);
      assert.equal(bob.stderr, 'Error from server (Forbidden): users "bob" is forbidden: User "system:serviceaccount:default:impersonator" cannot impersonate resource "users" in API group "" at the cluster scope\n');

      const otherNamespace = await as(['get', 'configmaps', '-n', 'team-a', `--as=${NOBODY}`]);
      assert.equal(otherNamespace.code, 1);
      assert.equal(
        otherNamespace.stderr,
        'Error from server (Forbidden): serviceaccounts "nobody" is forbidden: User "system:serviceaccount:default:impersonator" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"\n',
      );

      const withGroup = await as(['get', 'configmaps', '-n', 'team-a', '--as=jane', '--as-group=system:masters']);
      assert.equal(withGroup.code, 1);
      assert.equal(
        withGroup.stderr,
        'Error from server (Forbidden): groups "system:masters" is forbidden: User "system:serviceaccount:default:impersonator" cannot impersonate resource "groups" in API group "" at the cluster scope\n',
      );

      const withUid = await as(['get', 'configmaps', '-n', 'team-a', '--as=jane', '--as-uid=1234']);
      assert.equal(withUid.code, 1);
      assert.equal(
        withUid.stderr,
        'Error from server (Forbidden): uids.authentication.k8s.io "1234" is forbidden: User "system:serviceaccount:default:impersonator" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope\n',
      );
    });
  });
}

describe('impersonation headers kubectl has no flag for', () => {
  let sandbox: Sandbox;

  before(async () => {
    sandbox = await startSandbox();
  });
  after(async () => {
    await sandbox?.stop();
  });

  const whoami = (headers: Record<string, string | string[]>): ReturnType<typeof request> =>
    request(sandbox, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, headers });

  it('Impersonate-Extra-* become the user extra, keys percent-decoded, every value kept', async () => {
    const res = await whoami({ 'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'ops'], 'Impersonate-Extra-Scopes': ['read', 'write'], 'Impersonate-Extra-Example.com%2fteam': 'a' });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual((JSON.parse(res.text) as WhoAmI).status.userInfo, {
      username: 'jane',
      groups: ['devs', 'ops', 'system:authenticated'],
      extra: { scopes: ['read', 'write'], 'example.com/team': ['a'] },
    });
  });

  it('groups without a user are refused, not ignored', async () => {
    const res = await whoami({ 'Impersonate-Group': 'system:masters' });
    assert.equal(res.status, 500, res.text);
    assert.match((JSON.parse(res.text) as { message: string }).message, /without impersonating a user/);
  });
});

const python = pythonWithKubernetes();
const pythonMissing = python === undefined ? 'python3-kubernetes is not installed (apt-get install python3-kubernetes)' : false;

// The Python client has no impersonation setting of its own: a program sets the headers on its ApiClient.
const pythonProgram = `
import json, sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
api.set_default_header('Impersonate-User', sys.argv[2])
review = client.AuthorizationV1Api(api).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
    spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(verb='create', group='k8or.io', resource='buckets', namespace='default'))))
denied = None
try:
    client.CoreV1Api(api).list_namespaced_config_map('default')
except client.exceptions.ApiException as err:
    denied = {'status': err.status, 'message': json.loads(err.body)['message']}
print(json.dumps({'allowed': review.status.allowed, 'denied': denied}))
`;

describe('impersonation with the Python kubernetes client', () => {
  let sandbox: Sandbox | undefined;
  let home: string | undefined;

  before(async () => {
    if (pythonMissing) return;
    home = await mkdtemp(join(tmpdir(), 'k8or-impersonation-python-'));
    sandbox = await startSandbox({ kubeconfigPath: join(home, 'kubeconfig') });
  });
  after(async () => {
    await sandbox?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('runs as the Impersonate-User it sets', { skip: pythonMissing }, async () => {
    // asynchronously: the sandbox answers from this process
    const run = await promisify(execFile)(python as string, ['-c', pythonProgram, join(home as string, 'kubeconfig'), NOBODY], { encoding: 'utf8', timeout: 60_000 });
    assert.deepEqual(JSON.parse(run.stdout) as unknown, {
      allowed: false,
      denied: { status: 403, message: `configmaps is forbidden: User "${NOBODY}" cannot list resource "configmaps" in API group "" in the namespace "default"` },
    });
  });
});
