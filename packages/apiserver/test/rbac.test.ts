import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { kubectl, kubectlOk, prepareKubectl, type KubectlEnvironment } from './kubectl-helpers.ts';
import { request } from './helpers.ts';

// A cluster admin installs a workload's ServiceAccount, Deployment, PodDisruptionBudget and RBAC with
// kubectl, issues the ServiceAccount a token with `kubectl create token`, and the workload's kubectl
// (with that token) may do what its roles grant and nothing else, refused in kube-apiserver's words.

const NS = 'team-a';
const SA_USER = `system:serviceaccount:${NS}:worker`;

const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: ${NS} }
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: worker, namespace: ${NS} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: worker, namespace: ${NS} }
spec:
  replicas: 2
  selector: { matchLabels: { app: worker } }
  template:
    metadata: { labels: { app: worker } }
    spec:
      serviceAccountName: worker
      containers: [{ name: worker, image: example/worker:1 }]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: worker, namespace: ${NS} }
spec:
  minAvailable: 1
  selector: { matchLabels: { app: worker } }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: worker, namespace: ${NS} }
rules:
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, create]
  - apiGroups: [""]
    resources: [secrets]
    resourceNames: [worker-credentials]
    verbs: [get]
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: worker, namespace: ${NS} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: worker }
subjects: [{ kind: ServiceAccount, name: worker }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: worker-namespaces, labels: { example.com/aggregate-to-worker: "true" } }
rules:
  - apiGroups: [""]
    resources: [namespaces]
    verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: worker-aggregate }
aggregationRule:
  clusterRoleSelectors: [{ matchLabels: { example.com/aggregate-to-worker: "true" } }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: worker-metrics }
rules:
  - nonResourceURLs: [/metrics]
    verbs: [get]
  - apiGroups: [apps]
    resources: [deployments/status]
    verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: worker }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: worker-aggregate }
subjects: [{ kind: ServiceAccount, name: worker, namespace: ${NS} }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: worker-metrics }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: worker-metrics }
subjects: [{ kind: ServiceAccount, name: worker, namespace: ${NS} }]
`;

describe('workload kinds, TokenRequest and RBAC (kubectl 1.35)', () => {
  let sandbox: Sandbox;
  let home: string;
  let admin: KubectlEnvironment;
  let worker: KubectlEnvironment;
  let workerToken: string;

  before(async () => {
    await prepareKubectl('1.35');
    home = await mkdtemp(join(tmpdir(), 'k8or-rbac-'));
    sandbox = await startSandbox({ kubeconfigPath: join(home, 'admin.kubeconfig') });
    admin = { version: '1.35', kubeconfigPath: join(home, 'admin.kubeconfig'), home: join(home, 'admin') };
    await kubectlOk(admin, ['apply', '-f', '-'], manifests);
    workerToken = (await kubectlOk(admin, ['create', 'token', 'worker', '-n', NS, '--duration=1h'])).trim();
    await writeFile(join(home, 'worker.kubeconfig'), sandbox.kubeconfig.replace(sandbox.token, workerToken));
    worker = { version: '1.35', kubeconfigPath: join(home, 'worker.kubeconfig'), home: join(home, 'worker') };
  });

  after(async () => {
    await sandbox?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('stores Deployments with apps/v1 defaults, PDBs and RBAC objects, and lists them as kubectl shows them', async () => {
    const deployment = JSON.parse(await kubectlOk(admin, ['get', 'deployment', 'worker', '-n', NS, '-o', 'json'])) as { spec: Record<string, unknown>; metadata: { generation: number } };
    assert.equal(deployment.spec['replicas'], 2);
    assert.deepEqual(deployment.spec['strategy'], { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(deployment.metadata.generation, 1);
    const table = await kubectlOk(admin, ['get', 'deploy,pdb,sa,role,rolebinding', '-n', NS]);
    assert.match(table, /deployment\.apps\/worker\s+0\/2/);
    assert.match(table, /poddisruptionbudget\.policy\/worker\s+1\s+N\/A/);
    assert.match(table, /rolebinding\.rbac\.authorization\.k8s\.io\/worker\s+Role\/worker/);
    assert.match(await kubectlOk(admin, ['get', 'clusterroles']), /cluster-admin/);
  });

  it('refuses a Deployment whose selector does not match its template, and a changed roleRef', async () => {
    const bad = await kubectl(admin, ['create', '-f', '-'], `apiVersion: apps/v1
kind: Deployment
metadata: { name: mismatched, namespace: ${NS} }
spec:
  selector: { matchLabels: { app: a } }
  template:
    metadata: { labels: { app: b } }
    spec: { containers: [{ name: c, image: i }] }
`);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Deployment "mismatched" is invalid: spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
    const changed = await kubectl(admin, ['patch', 'rolebinding', 'worker', '-n', NS, '--type=merge', '-p', '{"roleRef":{"name":"other"}}']);
    assert.notEqual(changed.code, 0);
    assert.match(changed.stderr, /roleRef: Invalid value: .*: cannot change roleRef/);
  });

  it('authenticates the ServiceAccount token as the ServiceAccount', async () => {
    const whoami = await kubectlOk(worker, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(whoami, SA_USER);
  });

  it('allows what the bound Role, aggregated ClusterRole and non-resource rules grant', async () => {
    await kubectlOk(worker, ['create', 'configmap', 'made-by-worker', '-n', NS, '--from-literal=a=b']);
    assert.match(await kubectlOk(worker, ['get', 'configmaps', '-n', NS]), /made-by-worker/);
    assert.match(await kubectlOk(worker, ['get', 'configmap', 'made-by-worker', '-n', NS, '-o', 'name']), /configmap\/made-by-worker/);
    // allowed, and not there: a 404, not a 403
    assert.match((await kubectl(worker, ['get', 'secret', 'worker-credentials', '-n', NS])).stderr, /NotFound|not found/);
    assert.match(await kubectlOk(worker, ['get', 'namespaces']), new RegExp(NS));
    assert.equal((await request(sandbox, 'GET', '/metrics', { token: workerToken })).status === 403, false);
    assert.equal((await request(sandbox, 'GET', `/apis/apps/v1/namespaces/${NS}/deployments/worker/status`, { token: workerToken })).status, 200);
    assert.equal(await kubectlOk(worker, ['auth', 'can-i', 'get', 'secrets/worker-credentials', '-n', NS]), 'yes\n');
  });

  it('refuses everything else with kube-apiserver\'s 403 wording', async () => {
    const secrets = await kubectl(worker, ['get', 'secrets', '-n', NS]);
    assert.equal(secrets.stderr.trim(), `Error from server (Forbidden): secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "${NS}"`);
    const other = await kubectl(worker, ['get', 'secret', 'other', '-n', NS]);
    assert.equal(other.stderr.trim(), `Error from server (Forbidden): secrets "other" is forbidden: User "${SA_USER}" cannot get resource "secrets" in API group "" in the namespace "${NS}"`);
    const cm = await kubectl(worker, ['delete', 'configmap', 'made-by-worker', '-n', NS]);
    assert.match(cm.stderr, /configmaps "made-by-worker" is forbidden: User ".*" cannot delete resource "configmaps" in API group "" in the namespace "team-a"/);
    const elsewhere = await kubectl(worker, ['get', 'configmaps', '-n', 'default']);
    assert.match(elsewhere.stderr, /cannot list resource "configmaps" in API group "" in the namespace "default"/);
    const clusterScoped = await kubectl(worker, ['get', 'clusterroles']);
    assert.match(clusterScoped.stderr, /clusterroles\.rbac\.authorization\.k8s\.io is forbidden: User ".*" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope/);
    const scale = await request(sandbox, 'PUT', `/apis/apps/v1/namespaces/${NS}/deployments/worker/status`, { token: workerToken, body: {} });
    assert.equal(scale.status, 403);
    assert.equal(scale.json?.['message'], `deployments.apps "worker" is forbidden: User "${SA_USER}" cannot update resource "deployments/status" in API group "apps" in the namespace "${NS}"`);
    const path = await request(sandbox, 'GET', '/logs', { token: workerToken });
    assert.equal(path.json?.['message'], `forbidden: User "${SA_USER}" cannot get path "/logs"`);
    assert.equal(await kubectl(worker, ['auth', 'can-i', 'delete', 'secrets', '-n', NS]).then((r) => r.stdout), 'no\n');
  });

  it('records per ServiceAccount which grants were used, which were not, and what was refused', () => {
    const access = sandbox.accessOf(NS, 'worker');
    const own = access.unused.filter((key) => !key.includes('system:'));
    assert.deepEqual(own.sort(), [`RoleBinding ${NS}/worker -> Role ${NS}/worker rules[2]: delete coordination.k8s.io/leases`]);
    const used = access.grants.find((g) => g.key === `RoleBinding ${NS}/worker -> Role ${NS}/worker rules[0]: create core/configmaps`);
    assert.equal(used?.uses, 1);
    assert.ok(access.denied.includes(`User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "${NS}"`));
  });

  it('revokes the token with its ServiceAccount, and refuses a token for a ServiceAccount that does not exist', async () => {
    const missing = await kubectl(admin, ['create', 'token', 'nobody', '-n', NS]);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
    await kubectlOk(admin, ['delete', 'serviceaccount', 'worker', '-n', NS]);
    const after = await kubectl(worker, ['get', 'configmaps', '-n', NS]);
    assert.match(after.stderr, /Unauthorized|must be logged in/);
  });
});
