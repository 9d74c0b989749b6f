import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { run, runOk } from '../support/run.ts';
import { CHART_DIR, tools, type Tools } from '../support/tools.ts';

// The chart refuses values that cannot work, before anything reaches a cluster: `helm template`
// and `helm lint` both fail and say what to change. No cluster is needed (nor started).

describe('the chart refuses values that cannot work', () => {
  let home: string;
  let t: Tools;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'k8or-chart-refusals-'));
    t = await tools(home, join(home, 'no-kubeconfig'));
  });

  after(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  const template = (...set: string[]) => run(t.helm, ['template', 'k8or', CHART_DIR, ...set.flatMap((s) => ['--set', s])]);
  const lint = (...set: string[]) => run(t.helm, ['lint', '--strict', CHART_DIR, ...set.flatMap((s) => ['--set', s])]);

  /** values.schema.json refuses in `helm template`, `install`, `upgrade` and `lint` alike. */
  async function assertRefusedBySchema(set: string[], ...messages: RegExp[]): Promise<void> {
    for (const result of [await template(...set), await lint(...set)]) {
      assert.notEqual(result.code, 0, `accepted ${set.join(' ')}`);
      const said = result.stdout + result.stderr;
      assert.match(said, /values don't meet the specifications of the schema/);
      for (const message of messages) assert.match(said, message);
    }
  }

  /**
   * A comparison of two values, which JSON Schema cannot make, is the templates' `fail`: `helm
   * template`, `install` and `upgrade` refuse; Helm's lint mode only logs a template's `fail`.
   */
  async function assertRefused(set: string[], ...messages: RegExp[]): Promise<void> {
    const result = await template(...set);
    assert.notEqual(result.code, 0, `accepted ${set.join(' ')}`);
    for (const message of messages) assert.match(result.stderr, message);
  }

  it('more than one replica without leader election: values.schema.json names both ways out', async () => {
    // Helm 4 prints the anyOf's branches:
    //   - at '/replicaCount': maximum: got 2, want 1
    //   - at '/leaderElection/enabled': value must be true
    await assertRefusedBySchema(['leaderElection.enabled=false'], /'\/replicaCount': maximum: got 2, want 1/, /'\/leaderElection\/enabled': value must be true/);
    await assertRefusedBySchema(['leaderElection.enabled=false', 'replicaCount=5', 'podDisruptionBudget.enabled=false'], /'\/replicaCount': maximum: got 5, want 1/);
  });

  it('sharding without leader election, or with one replica: values.schema.json names both ways out', async () => {
    await assertRefusedBySchema(['sharding.enabled=true', 'leaderElection.enabled=false', 'replicaCount=1', 'podDisruptionBudget.enabled=false'], /'\/leaderElection\/enabled': value must be true/, /'\/sharding\/enabled': value must be false/);
    await assertRefusedBySchema(['sharding.enabled=true', 'replicaCount=1'], /'\/replicaCount': minimum: got 1, want 2/, /'\/sharding\/enabled': value must be false/);
    const accepted = await lint('sharding.enabled=true', 'replicaCount=3');
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
  });

  it("the webhook's own Deployment (sharded): values.schema.json names a replica count below 1, a misspelt key, resources that are not an object", async () => {
    await assertRefusedBySchema(['sharding.enabled=true', 'replicaCount=3', 'sharding.webhook.replicaCount=0'], /'\/sharding\/webhook\/replicaCount': minimum: got 0, want 1/);
    await assertRefusedBySchema(['sharding.enabled=true', 'replicaCount=3', 'sharding.webhook.replicaCount=two'], /'\/sharding\/webhook\/replicaCount': got string, want integer/);
    await assertRefusedBySchema(['sharding.enabled=true', 'replicaCount=3', 'sharding.webhook.replicas=3'], /'\/sharding\/webhook': additional properties 'replicas' not allowed/);
    await assertRefusedBySchema(['sharding.enabled=true', 'replicaCount=3', 'sharding.webhook.resources=big'], /'\/sharding\/webhook\/resources': got string, want object/);
    // one webhook replica is accepted: it then has no PodDisruptionBudget, which would block every drain
    const accepted = await lint('sharding.enabled=true', 'replicaCount=3', 'sharding.webhook.replicaCount=1');
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
  });

  it('one replica without leader election is accepted, and a rollout never runs two operators at once', async () => {
    const rendered = await runOk(t.helm, ['template', 'k8or', CHART_DIR, '--set', 'leaderElection.enabled=false', '--set', 'replicaCount=1', '--set', 'podDisruptionBudget.enabled=false']);
    const deployment = parseAllDocuments(rendered)
      .map((d) => d.toJSON() as { kind?: string; spec?: { replicas: number; strategy?: unknown } } | null)
      .find((m) => m?.kind === 'Deployment');
    assert.equal(deployment?.spec?.replicas, 1);
    assert.deepEqual(deployment?.spec?.strategy, { type: 'Recreate' });
    const lint = await runOk(t.helm, ['lint', '--strict', CHART_DIR, '--set', 'leaderElection.enabled=false', '--set', 'replicaCount=1', '--set', 'podDisruptionBudget.enabled=false']);
    assert.match(lint, /0 chart\(s\) failed/);
    // with leader election, the default rolling update (a standby takes over while the old Pod stops)
    const withElection = parseAllDocuments(await runOk(t.helm, ['template', 'k8or', CHART_DIR]))
      .map((d) => d.toJSON() as { kind?: string; spec?: { strategy?: unknown } } | null)
      .find((m) => m?.kind === 'Deployment');
    assert.equal(withElection?.spec?.strategy, undefined);
  });

  it('a PodDisruptionBudget that leaves no Pod evictable (node drains would wait forever)', async () => {
    const drain = /leaves no Pod that may be evicted, so every node drain would wait forever/;
    await assertRefused(['replicaCount=1'], /podDisruptionBudget\.minAvailable 1 with replicaCount 1/, drain, /set podDisruptionBudget\.enabled=false/);
    await assertRefused(['podDisruptionBudget.minAvailable=2'], /podDisruptionBudget\.minAvailable 2 with replicaCount 2/, drain);
    // a percentage rounds up: 67% of 3 is 3 Pods, 51% of 2 is 2
    await assertRefused(['replicaCount=3', 'podDisruptionBudget.minAvailable=67%'], /minAvailable 67% with replicaCount 3/, drain);
    await assertRefused(['podDisruptionBudget.minAvailable=51%'], /minAvailable 51% with replicaCount 2/, drain);
    for (const accepted of [['replicaCount=3', 'podDisruptionBudget.minAvailable=66%'], ['podDisruptionBudget.minAvailable=50%'], ['replicaCount=1', 'podDisruptionBudget.minAvailable=0'], ['replicaCount=1', 'podDisruptionBudget.enabled=false']]) {
      const result = await template(...accepted);
      assert.equal(result.code, 0, `${accepted.join(' ')}: ${result.stderr}`);
    }
    // PodDisruptionBudget takes a number or a percentage, nothing else
    await assertRefusedBySchema(['podDisruptionBudget.minAvailable=one'], /'\/podDisruptionBudget\/minAvailable': 'one' does not match pattern/);
  });

  it('alerts on series nothing scrapes: values.schema.json names the ServiceMonitor or a selector of one\'s own', async () => {
    await assertRefusedBySchema(['prometheusRule.enabled=true'], /'\/metrics\/serviceMonitor\/enabled': value must be true/, /'\/prometheusRule\/selector': minLength: got 0, want 1/);
    for (const accepted of [['prometheusRule.enabled=true', 'metrics.serviceMonitor.enabled=true'], ['prometheusRule.enabled=true', 'prometheusRule.selector=job="k8or"']]) {
      const result = await template(...accepted);
      assert.equal(result.code, 0, `${accepted.join(' ')}: ${result.stderr}`);
    }
  });

  it('two servers of the container on one port', async () => {
    await assertRefused(['metrics.port=8081'], /metrics\.port and probes\.port are both 8081/);
    await assertRefused(['webhook.port=8080'], /metrics\.port and webhook\.port are both 8080|webhook\.port and metrics\.port are both 8080/);
  });
});
